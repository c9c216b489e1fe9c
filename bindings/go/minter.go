package idmint

// #include "shim.h"
import "C"

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// MaxBatch is the largest count one NextN or NextInto call takes. The
// library accepts any size_t; the cap is the CLI's "mint -n" ceiling, so a
// mistaken count fails at once instead of allocating gigabytes.
const MaxBatch = 100_000_000

// Minter mints from one namespace. It is safe for concurrent use by many
// goroutines, Close included.
type Minter struct {
	// Readers are calls into the handle; Close takes the write lock, so
	// idmint_close never runs while a call is inside the library, as
	// docs/threading.md requires.
	mu sync.RWMutex
	h  C.uintptr_t // the idmint handle (see shim.h); 0 once closed
}

// Open opens namespace ns at authority (a store URL such as
// "sqlite:/var/lib/idmint/idmint.db"; "" means $IDMINT_AUTHORITY, else the
// machine's default, as NULL does in C). A snowflake namespace takes a worker
// lease, a range namespace reserves its first block; both keep a library
// thread running until Close. opts may be nil.
func Open(authority, ns string, opts *Options) (*Minter, error) {
	if err := noNUL("Open", "authority", authority); err != nil {
		return nil, err
	}
	if err := noNUL("Open", "namespace", ns); err != nil {
		return nil, err
	}
	var copts C.idmint_options
	token, err := opts.toC(&copts)
	if token != nil {
		defer C.free(unsafe.Pointer(token))
	}
	if err != nil {
		return nil, err
	}
	ca, cns := C.CString(authority), C.CString(ns)
	defer C.free(unsafe.Pointer(ca))
	defer C.free(unsafe.Pointer(cns))
	r := C.idmint_go_open(ca, cns, &copts)
	if r.rc != 0 {
		return nil, libError("Open", r.rc, r.detail)
	}
	m := &Minter{h: r.h}
	// A Minter dropped without Close would hold its lease and thread for
	// the life of the process.
	runtime.SetFinalizer(m, (*Minter).Close)
	return m, nil
}

// Next mints one ID. Snowflake IDs increase across all goroutines sharing
// the Minter; range IDs increase only within one OS thread.
func (m *Minter) Next() (uint64, error) {
	m.mu.RLock()
	if m.h == 0 {
		m.mu.RUnlock()
		return 0, closedError("Next")
	}
	r := C.idmint_go_next(m.h)
	m.mu.RUnlock()
	if r.rc != 0 {
		return 0, libError("Next", r.rc, r.detail)
	}
	return uint64(r.id), nil
}

// NextN mints n IDs (1..MaxBatch) into a new slice, increasing.
func (m *Minter) NextN(n int) ([]uint64, error) {
	if err := checkCount("NextN", n); err != nil {
		return nil, err
	}
	if n == 0 {
		// The library owns the verdict on 0, and its message.
		return nil, m.nextInto("NextN", new(uint64), 0)
	}
	ids := make([]uint64, n)
	if err := m.nextInto("NextN", &ids[0], n); err != nil {
		return nil, err
	}
	return ids, nil
}

// NextInto fills ids (1..MaxBatch long) with increasing IDs without
// allocating. All or nothing: on error ids is left as it was.
func (m *Minter) NextInto(ids []uint64) error {
	if err := checkCount("NextInto", len(ids)); err != nil {
		return err
	}
	if len(ids) == 0 {
		return m.nextInto("NextInto", new(uint64), 0)
	}
	return m.nextInto("NextInto", &ids[0], len(ids))
}

// nextInto mints n IDs to base; base is valid even for n == 0, so the
// library, not a NULL pointer, decides what 0 means.
func (m *Minter) nextInto(op string, base *uint64, n int) error {
	m.mu.RLock()
	if m.h == 0 {
		m.mu.RUnlock()
		return closedError(op)
	}
	r := C.idmint_go_next_n(m.h, (*C.uint64_t)(unsafe.Pointer(base)), C.size_t(n))
	m.mu.RUnlock()
	if r.rc != 0 {
		return libError(op, r.rc, r.detail)
	}
	return nil
}

func checkCount(op string, n int) error {
	switch {
	case n < 0:
		return argError(op, fmt.Sprintf("count %d is negative", n))
	case n > MaxBatch:
		return argError(op, fmt.Sprintf("count %d is above %d (MaxBatch)", n, MaxBatch))
	}
	return nil
}

// LeaseStatus is nil while the lease renews (always for a range namespace),
// else an *Error with the code of the last failed renewal
// (idmint_lease_status(): ErrLeaseLost and ErrDisabled are final).
func (m *Minter) LeaseStatus() error {
	m.mu.RLock()
	if m.h == 0 {
		m.mu.RUnlock()
		return closedError("LeaseStatus")
	}
	rc := C.idmint_go_lease_status(m.h)
	m.mu.RUnlock()
	if rc != 0 {
		return &Error{Op: "LeaseStatus", Code: Code(rc)}
	}
	return nil
}

// Close releases the lease (or the unused range) and frees the handle.
// Calls racing it either finish first or fail with ErrClosed. Closing twice
// is allowed; Close always returns nil (it is an io.Closer).
func (m *Minter) Close() error {
	m.mu.Lock()
	h := m.h
	m.h = 0
	m.mu.Unlock()
	if h != 0 {
		runtime.SetFinalizer(m, nil)
		C.idmint_go_close(h)
	}
	return nil
}

// noNUL refuses a string C would cut short at its first NUL byte.
func noNUL(op, what, s string) error {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return argError(op, fmt.Sprintf("%s %q holds a NUL byte at %d", what, s, i))
	}
	return nil
}
