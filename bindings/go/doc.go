// Package idmint mints unique 64-bit IDs and UUIDv7s through libidmint.
//
// A Minter is one library handle on one namespace: a snowflake namespace
// holds a worker-id lease for as long as the Minter is open, a range
// namespace reserves blocks of values. Every method of a Minter may be
// called from any number of goroutines; Close may race them (calls that
// start after it fail with ErrClosed and never touch freed memory).
//
// Errors from the library are *Error values whose Code is one of the
// sentinels ErrInvalid ... ErrRestored, one per IDMINT_E* code, so
// errors.Is(err, idmint.ErrNotFound) works; Detail carries the library's
// own message (idmint_errmsg()).
//
// fork() is not a Go concern: the Go runtime only forks to exec at once, so
// a child never inherits a Minter it could use.
package idmint
