package idmint

// #include "shim.h"
import "C"

import (
	"time"
	"unsafe"
)

// UUID is 16 bytes of an RFC 9562 UUID.
type UUID [16]byte

// UUID7 is a new UUIDv7 from the library: strictly increasing as bytes
// within this process, safe from any goroutine.
func UUID7() (UUID, error) {
	r := C.idmint_go_uuid7()
	if r.rc != 0 {
		return UUID{}, libError("UUID7", r.rc, r.detail)
	}
	return *(*UUID)(unsafe.Pointer(&r.b[0])), nil
}

// UUID7Into fills dst (1..MaxBatch long) with new UUIDv7s in one library
// call (idmint_uuid7_n), increasing through dst and after every UUID the
// process made before: several times faster per UUID than UUID7. On error
// dst may be partly written (valid UUIDs, to be dropped).
func UUID7Into(dst []UUID) error {
	if err := checkCount("UUID7Into", len(dst)); err != nil {
		return err
	}
	if len(dst) == 0 {
		return argError("UUID7Into", "count 0: want 1 or more UUIDs")
	}
	r := C.idmint_go_uuid7_n((*C.uint8_t)(unsafe.Pointer(&dst[0][0])), C.size_t(len(dst)))
	if r.rc != 0 {
		return libError("UUID7Into", r.rc, r.detail)
	}
	return nil
}

// UUID7Bounds gives the lowest and highest UUIDv7 whose time falls in
// [from, to), to the millisecond: UUIDs compare as their bytes, so a query
// by time is a range scan. It fails with ErrInvalid for an empty window or
// one before 1970 or past 2^48 ms.
func UUID7Bounds(from, to time.Time) (lo, hi UUID, err error) {
	r := C.idmint_go_uuid7_bounds(C.int64_t(from.UnixMilli()), C.int64_t(to.UnixMilli()))
	if r.rc != 0 {
		return UUID{}, UUID{}, libError("UUID7Bounds", r.rc, r.detail)
	}
	return *(*UUID)(unsafe.Pointer(&r.lo[0])), *(*UUID)(unsafe.Pointer(&r.hi[0])), nil
}

// ParseUUID reads the 36-character text form (either case).
func ParseUUID(s string) (UUID, error) {
	if err := noNUL("ParseUUID", "text", s); err != nil {
		return UUID{}, err
	}
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	r := C.idmint_go_uuid_parse(cs)
	if r.rc != 0 {
		return UUID{}, libError("ParseUUID", r.rc, r.detail)
	}
	return *(*UUID)(unsafe.Pointer(&r.b[0])), nil
}

// String is the 36-character lowercase text form. It is formatted in Go,
// as idmint_uuid_format() would, because a cgo call costs more than the
// formatting itself.
func (u UUID) String() string {
	const hex = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hex[c>>4], hex[c&15]
		j += 2
	}
	return string(b[:])
}
