// Command bench measures the Go binding beside the usual choice of Go code
// for unique IDs, crypto/rand read into a version-4 UUID string (what
// google/uuid's NewString does), in the same run on the same machine. It
// prints rates and ratios; it passes or fails nothing.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"idmint"
)

var sink uint64 // keeps the compiler from dropping measured work

// peerUUID is the usual choice: 16 random bytes, version 4, RFC variant.
func peerUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return formatV4(b[:])
}

func formatV4(b []byte) string {
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// peerBatch makes 1000 UUID strings from one read of 16000 random bytes.
func peerBatch(out []string, buf []byte) {
	if _, err := rand.Read(buf); err != nil {
		panic(err)
	}
	for i := range out {
		out[i] = formatV4(buf[16*i : 16*i+16])
	}
}

type result struct {
	name   string
	idsPer float64 // IDs per second, best round
}

// measure runs step (which makes perStep IDs) for d per round, goroutines
// at once, and keeps the best round.
func measure(name string, rounds int, d time.Duration, goroutines, perStep int, step func() error) (result, error) {
	best := 0.0
	for r := 0; r < rounds; r++ {
		var wg sync.WaitGroup
		counts := make([]int, goroutines)
		errs := make([]error, goroutines)
		start := time.Now()
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for time.Since(start) < d {
					for i := 0; i < 256; i++ {
						if err := step(); err != nil {
							errs[g] = err
							return
						}
					}
					counts[g] += 256 * perStep
				}
			}(g)
		}
		wg.Wait()
		el := time.Since(start).Seconds()
		total := 0
		for g := range counts {
			if errs[g] != nil {
				return result{}, fmt.Errorf("%s: %w", name, errs[g])
			}
			total += counts[g]
		}
		if rate := float64(total) / el; rate > best {
			best = rate
		}
	}
	return result{name, best}, nil
}

func main() {
	url := flag.String("authority", "", "authority URL (sqlite:PATH)")
	rangeNS := flag.String("range", "", "a range namespace (block 1,000,000)")
	sfNS := flag.String("snowflake", "", "a snowflake namespace")
	seconds := flag.Float64("seconds", 0.3, "length of one round")
	rounds := flag.Int("rounds", 3, "rounds per case; the best is kept")
	flag.Parse()
	if *url == "" || *rangeNS == "" || *sfNS == "" {
		fmt.Fprintln(os.Stderr, "usage: bench -authority URL -range NS -snowflake NS [-seconds S] [-rounds N]")
		os.Exit(2)
	}
	if err := run(*url, *rangeNS, *sfNS, time.Duration(*seconds*float64(time.Second)), *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(url, rangeNS, sfNS string, d time.Duration, rounds int) error {
	rg, err := idmint.Open(url, rangeNS, &idmint.Options{RangeBlock: 1_000_000})
	if err != nil {
		return err
	}
	defer rg.Close()
	sf, err := idmint.Open(url, sfNS, nil)
	if err != nil {
		return err
	}
	defer sf.Close()

	next := func(m *idmint.Minter) func() error {
		return func() error {
			id, err := m.Next()
			sink += id
			return err
		}
	}
	ids := make([]uint64, 1000)
	strs := make([]string, 1000)
	uuids := make([]idmint.UUID, 1000)
	rnd := make([]byte, 16000)
	const single, batched = "peer: crypto/rand UUIDv4 string", "peer: 1000 UUIDv4 strings, one read"
	cases := []struct {
		name, peer string // peer: the case it is compared with ("" for none)
		goroutines int
		perStep    int
		step       func() error
	}{
		{single, single, 1, 1, func() error { sink += uint64(len(peerUUID())); return nil }},
		{"Next() range", single, 1, 1, next(rg)},
		{"Next() snowflake", single, 1, 1, next(sf)},
		{"UUID7().String()", single, 1, 1, func() error {
			u, err := idmint.UUID7()
			sink += uint64(len(u.String()))
			return err
		}},
		{"Next() range, 2 goroutines", single, 2, 1, next(rg)},
		{"floor: empty cgo call", "", 1, 1, cgoNoop},
		{"floor: RWMutex RLock+RUnlock", "", 1, 1, rwLockPair},
		{batched, batched, 1, 1000, func() error { peerBatch(strs, rnd); return nil }},
		{"NextInto(1000) range", batched, 1, 1000, func() error { err := rg.NextInto(ids); sink += ids[999]; return err }},
		{"UUID7Into(1000)", batched, 1, 1000, func() error {
			err := idmint.UUID7Into(uuids)
			sink += uint64(uuids[999][15])
			return err
		}},
		{"UUID7Into(1000) + String()", batched, 1, 1000, func() error {
			err := idmint.UUID7Into(uuids)
			for i := range uuids {
				strs[i] = uuids[i].String()
			}
			sink += uint64(len(strs[999]))
			return err
		}},
	}
	fmt.Printf("idmint Go binding benchmark: %s %s/%s, %d CPUs, %d rounds of %v per case, best kept\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), rounds, d)
	fmt.Printf("%-38s %12s %10s %10s\n", "case", "IDs/s", "ns/ID", "vs peer")
	res := map[string]float64{}
	for _, c := range cases {
		r, err := measure(c.name, rounds, d, c.goroutines, c.perStep, c.step)
		if err != nil {
			return err
		}
		res[c.name] = r.idsPer
		ratio := "-"
		if c.peer != "" {
			ratio = fmt.Sprintf("%.1fx", r.idsPer/res[c.peer])
		}
		fmt.Printf("%-38s %12.0f %10.2f %10s\n", c.name, r.idsPer, 1e9/r.idsPer, ratio)
	}
	one := res["Next() range"] / res[single]
	batch := res["NextInto(1000) range"]
	fmt.Println("targets:")
	fmt.Printf("  single Next() (range) >= 3x peer:    %s (%.1fx)\n", verdict(one >= 3), one)
	fmt.Printf("  batches of 1000 >= 100M IDs/s:       %s (%.0fM IDs/s, %.1fx the batch peer)\n",
		verdict(batch >= 100e6), batch/1e6, batch/res[batched])
	info, err := rg.Info()
	if err != nil {
		return err
	}
	// Every ID the range cases took came out of reservations of the store.
	fmt.Printf("range handle: block 1000000, %d values still reserved at the end\n", info.RangeLeft)
	return nil
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}
