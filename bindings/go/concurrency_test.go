package idmint_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"idmint"
)

// mintMixed mints about n IDs through all three calls, in call order.
func mintMixed(m *idmint.Minter, n int) ([]uint64, error) {
	ids := make([]uint64, 0, n)
	buf := make([]uint64, 64)
	for len(ids) < n {
		switch len(ids) % 3 {
		case 0:
			id, err := m.Next()
			if err != nil {
				return ids, err
			}
			ids = append(ids, id)
		case 1:
			got, err := m.NextN(100)
			if err != nil {
				return ids, err
			}
			ids = append(ids, got...)
		default:
			if err := m.NextInto(buf); err != nil {
				return ids, err
			}
			ids = append(ids, buf...)
		}
	}
	return ids, nil
}

func TestGoroutinesSharingOneMinterNeverRepeat(t *testing.T) {
	for _, kind := range []string{"snowflake", "range"} {
		t.Run(kind, func(t *testing.T) {
			// A small block, so the goroutines also race the refills.
			extra := []string{}
			if kind == "range" {
				extra = []string{"--block", "5000"}
			}
			m, err := idmint.Open(authority, newNS(t, authority, kind, extra...), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			const goroutines, each = 16, 20_000
			got := make([][]uint64, goroutines)
			errs := make([]error, goroutines)
			var wg sync.WaitGroup
			for g := 0; g < goroutines; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					got[g], errs[g] = mintMixed(m, each)
				}(g)
			}
			wg.Wait()
			var all []uint64
			for g := range got {
				if errs[g] != nil {
					t.Fatalf("goroutine %d: %v", g, errs[g])
				}
				// Snowflake order is one CAS across the handle, so each
				// goroutine sees its own calls increase too.
				for i := 1; kind == "snowflake" && i < len(got[g]); i++ {
					if got[g][i] <= got[g][i-1] {
						t.Fatalf("goroutine %d: %d after %d", g, got[g][i], got[g][i-1])
					}
				}
				all = append(all, got[g]...)
			}
			if len(all) < goroutines*each {
				t.Fatalf("%d ids, want at least %d", len(all), goroutines*each)
			}
			assertUnique(t, all)
		})
	}
}

func TestCloseRacingCallsNeverCrashesAndEndsThemWithErrClosed(t *testing.T) {
	for _, kind := range []string{"snowflake", "range"} {
		t.Run(kind, func(t *testing.T) {
			ns := newNS(t, authority, kind)
			var all []uint64
			for round := 0; round < 10; round++ {
				m, err := idmint.Open(authority, ns, nil)
				if err != nil {
					t.Fatal(err)
				}
				const goroutines = 6
				got := make([][]uint64, goroutines)
				errs := make([]error, goroutines)
				started := make(chan struct{}, goroutines)
				var wg sync.WaitGroup
				for g := 0; g < goroutines; g++ {
					wg.Add(1)
					go func(g int) {
						defer wg.Done()
						first := true
						for {
							ids, err := mintMixed(m, 300)
							got[g] = append(got[g], ids...)
							if g%2 == 0 && err == nil {
								_, err = m.Info()
							}
							if err != nil {
								errs[g] = err
								return
							}
							if first {
								started <- struct{}{}
								first = false
							}
						}
					}(g)
				}
				for g := 0; g < goroutines; g++ {
					<-started
				}
				time.Sleep(time.Duration(round) * time.Millisecond)
				// Two closers at once: exactly one frees the handle.
				var cw sync.WaitGroup
				for c := 0; c < 2; c++ {
					cw.Add(1)
					go func() { defer cw.Done(); m.Close() }()
				}
				cw.Wait()
				wg.Wait()
				for g := range errs {
					if !errors.Is(errs[g], idmint.ErrClosed) {
						t.Fatalf("round %d goroutine %d ended with %v, want ErrClosed", round, g, errs[g])
					}
					if len(got[g]) == 0 {
						t.Fatalf("round %d goroutine %d minted nothing before Close", round, g)
					}
					all = append(all, got[g]...)
				}
			}
			// Across rounds too: a new handle never repeats a closed one's IDs.
			assertUnique(t, all)
		})
	}
}
