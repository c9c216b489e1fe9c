package idmint

// #include "shim.h"
import "C"

// Info is what a Minter holds (idmint_handle_info). Snowflake fields are
// zero for a range namespace and RangeLeft is zero for a snowflake one.
type Info struct {
	Range         bool   // a range namespace
	Region        uint32 // snowflake: region of the lease
	WorkerID      uint32 // snowflake: leased worker id
	Generation    uint64 // snowflake: lease generation
	FenceFound    uint64 // snowflake: fence E found at take (time units)
	LeaseUntil    uint64 // snowflake: own E now (time units)
	LastTime      uint64 // snowflake: time units of the last ID minted
	Layout        Layout // snowflake: the namespace's layout
	RangeLeft     uint64 // range: values reserved and not yet handed out
	Incarnation   string // this handle's holder/incarnation id
	SequenceWaits uint64 // snowflake: calls that waited for the next time unit
}

// Info reports what the Minter holds.
func (m *Minter) Info() (Info, error) {
	var ci C.idmint_handle_info
	m.mu.RLock()
	if m.h == 0 {
		m.mu.RUnlock()
		return Info{}, closedError("Info")
	}
	r := C.idmint_go_info(m.h, &ci)
	m.mu.RUnlock()
	if r.rc != 0 {
		return Info{}, libError("Info", r.rc, r.detail)
	}
	return Info{
		Range:         ci.is_range != 0,
		Region:        uint32(ci.region),
		WorkerID:      uint32(ci.worker_id),
		Generation:    uint64(ci.generation),
		FenceFound:    uint64(ci.fence_found),
		LeaseUntil:    uint64(ci.lease_until),
		LastTime:      uint64(ci.last_time),
		Layout:        layoutFromC(ci.layout),
		RangeLeft:     uint64(ci.range_left),
		Incarnation:   C.GoString(&ci.incarnation[0]),
		SequenceWaits: uint64(ci.sequence_waits),
	}, nil
}
