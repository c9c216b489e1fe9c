package idmint

// #include "shim.h"
import "C"

import (
	"errors"
	"unsafe"
)

// Code is a libidmint status: one of the IDMINT_E* values of idmint.h.
// Each code has exactly one sentinel below, so errors.Is(err, ErrNotFound)
// holds for every error the library reports as IDMINT_ENOTFOUND.
type Code int

// The sentinels, one per IDMINT_E* code (docs/errors.md).
const (
	ErrInvalid     = Code(C.IDMINT_EINVAL)
	ErrNoMemory    = Code(C.IDMINT_ENOMEM)
	ErrNotFound    = Code(C.IDMINT_ENOTFOUND)
	ErrDisabled    = Code(C.IDMINT_EDISABLED)
	ErrExhausted   = Code(C.IDMINT_EEXHAUSTED)
	ErrNoWorker    = Code(C.IDMINT_ENOWORKER)
	ErrLeaseLost   = Code(C.IDMINT_ELEASELOST)
	ErrClock       = Code(C.IDMINT_ECLOCK)
	ErrForked      = Code(C.IDMINT_EFORKED)
	ErrUnavailable = Code(C.IDMINT_EUNAVAILABLE)
	ErrConflict    = Code(C.IDMINT_ECONFLICT)
	ErrStore       = Code(C.IDMINT_ESTORE)
	ErrTimedOut    = Code(C.IDMINT_ETIMEDOUT)
	ErrAccess      = Code(C.IDMINT_EACCESS)
	ErrRestored    = Code(C.IDMINT_ERESTORED)
)

// ErrClosed is reported, beside ErrInvalid, for a call on a closed Minter:
// the binding detects it, so the library never sees a freed handle.
var ErrClosed = errors.New("idmint: minter is closed")

var codeNames = map[Code]string{
	ErrInvalid:     "EINVAL",
	ErrNoMemory:    "ENOMEM",
	ErrNotFound:    "ENOTFOUND",
	ErrDisabled:    "EDISABLED",
	ErrExhausted:   "EEXHAUSTED",
	ErrNoWorker:    "ENOWORKER",
	ErrLeaseLost:   "ELEASELOST",
	ErrClock:       "ECLOCK",
	ErrForked:      "EFORKED",
	ErrUnavailable: "EUNAVAILABLE",
	ErrConflict:    "ECONFLICT",
	ErrStore:       "ESTORE",
	ErrTimedOut:    "ETIMEDOUT",
	ErrAccess:      "EACCESS",
	ErrRestored:    "ERESTORED",
}

// Name is the code's name in idmint.h without its prefix ("ENOTFOUND"),
// or "" for a code this binding does not know (a newer library's).
func (c Code) Name() string { return codeNames[c] }

// Error is the library's fixed text for the code (idmint_strerror()).
func (c Code) Error() string { return "idmint: " + C.GoString(C.idmint_strerror(C.int(c))) }

// Error is one failed call.
type Error struct {
	Op     string // the method that failed: "Open", "Next", ...
	Code   Code   // the library's status; errors.Is matches its sentinel
	Detail string // the library's idmint_errmsg() for this call, or the binding's own check
	also   error  // a binding-level sentinel the error matches too (ErrClosed)
}

func (e *Error) Error() string {
	s := "idmint: " + e.Op + ": " + C.GoString(C.idmint_strerror(C.int(e.Code)))
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap gives the sentinel of the code.
func (e *Error) Unwrap() error { return e.Code }

// Is matches the binding-level sentinel, if any; the code's sentinel is
// matched through Unwrap.
func (e *Error) Is(target error) bool { return e.also != nil && target == e.also }

// libError takes ownership of detail, a strdup'd copy made by shim.h.
func libError(op string, rc C.int, detail *C.char) error {
	e := &Error{Op: op, Code: Code(rc)}
	if detail != nil {
		e.Detail = C.GoString(detail)
		C.free(unsafe.Pointer(detail))
	}
	return e
}

// argError reports bad input the binding refuses before calling the library.
func argError(op, detail string) error {
	return &Error{Op: op, Code: ErrInvalid, Detail: detail}
}

func closedError(op string) error {
	return &Error{Op: op, Code: ErrInvalid, Detail: "the Minter is closed", also: ErrClosed}
}
