package main

// static void idmint_bench_noop(void) {}
import "C"

import "sync"

// The floor under a Next(): what any cgo call costs, and the read lock
// that keeps Close from freeing the handle under a call.
func cgoNoop() error {
	C.idmint_bench_noop()
	return nil
}

var floorMu sync.RWMutex

func rwLockPair() error {
	floorMu.RLock()
	floorMu.RUnlock() // an empty section: the lock pair is what is measured
	return nil
}
