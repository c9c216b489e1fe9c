package idmint

// #include "shim.h"
import "C"

import "time"

// Layout is the bit layout of a snowflake namespace (DESIGN.md §3).
type Layout struct {
	TimeBits     uint8  // T: time units since the epoch
	RegionBits   uint8  // R
	WorkerBits   uint8  // W
	SequenceBits uint8  // S
	UnitMS       uint32 // milliseconds per time unit, >= 1
	EpochMS      int64  // Unix ms of time unit 0
}

// DefaultLayout is the library's default: 41/0/10/12, 1 ms, epoch 2026-01-01.
func DefaultLayout() Layout { return layoutFromC(C.idmint_go_layout_default()) }

// Decoded is one snowflake ID taken apart.
type Decoded struct {
	TimeUnits uint64 // time field as stored
	UnixMS    int64  // EpochMS + TimeUnits*UnitMS
	Region    uint32
	Worker    uint32
	Sequence  uint64
}

// Time is UnixMS as a UTC time.
func (d Decoded) Time() time.Time { return time.UnixMilli(d.UnixMS).UTC() }

// Decode splits id by layout l (a Minter's is in Info().Layout). It fails
// with ErrInvalid for an invalid layout, id 0, or bits set outside the layout.
func Decode(l Layout, id uint64) (Decoded, error) {
	r := C.idmint_go_decode(l.toC(), C.uint64_t(id))
	if r.rc != 0 {
		return Decoded{}, libError("Decode", r.rc, r.detail)
	}
	return Decoded{
		TimeUnits: uint64(r.d.time_units),
		UnixMS:    int64(r.d.unix_ms),
		Region:    uint32(r.d.region),
		Worker:    uint32(r.d.worker),
		Sequence:  uint64(r.d.sequence),
	}, nil
}

// Bounds gives the lowest and highest ID of layout l whose time falls in
// [from, to): every ID minted in the window lies in [lo, hi], so a query by
// time is "WHERE id BETWEEN lo AND hi". Times are taken to the millisecond;
// an edge inside a time unit takes in the whole unit. It fails with
// ErrInvalid for an empty window or one outside the layout's lifetime.
func Bounds(l Layout, from, to time.Time) (lo, hi uint64, err error) {
	r := C.idmint_go_bounds_of(l.toC(), C.int64_t(from.UnixMilli()), C.int64_t(to.UnixMilli()))
	if r.rc != 0 {
		return 0, 0, libError("Bounds", r.rc, r.detail)
	}
	return uint64(r.lo), uint64(r.hi), nil
}

func layoutFromC(c C.idmint_layout) Layout {
	return Layout{
		TimeBits:     uint8(c.time_bits),
		RegionBits:   uint8(c.region_bits),
		WorkerBits:   uint8(c.worker_bits),
		SequenceBits: uint8(c.sequence_bits),
		UnitMS:       uint32(c.unit_ms),
		EpochMS:      int64(c.epoch_ms),
	}
}

func (l Layout) toC() C.idmint_layout {
	return C.idmint_layout{
		time_bits:     C.uint8_t(l.TimeBits),
		region_bits:   C.uint8_t(l.RegionBits),
		worker_bits:   C.uint8_t(l.WorkerBits),
		sequence_bits: C.uint8_t(l.SequenceBits),
		unit_ms:       C.uint32_t(l.UnitMS),
		epoch_ms:      C.int64_t(l.EpochMS),
	}
}
