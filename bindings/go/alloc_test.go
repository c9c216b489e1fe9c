package idmint_test

import (
	"testing"

	"idmint"
)

// Minting in a loop must not feed the garbage collector: Next and
// NextInto allocate nothing (shim.h says how).
func TestNextAndNextIntoAllocateNothing(t *testing.T) {
	for _, kind := range []string{"snowflake", "range"} {
		m, err := idmint.Open(authority, newNS(t, authority, kind), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		const runs = 1000
		ids := make([]uint64, 0, (runs+1)*101) // AllocsPerRun adds a warm-up run
		buf := make([]uint64, 100)
		next := testing.AllocsPerRun(runs, func() {
			id, err := m.Next()
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		})
		into := testing.AllocsPerRun(runs, func() {
			if err := m.NextInto(buf); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, buf...)
		})
		if next != 0 || into != 0 {
			t.Fatalf("%s: Next makes %.2f allocations, NextInto %.2f; want none", kind, next, into)
		}
		assertUnique(t, ids)
	}
}
