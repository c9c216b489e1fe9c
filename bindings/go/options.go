package idmint

// #include "shim.h"
import "C"

import (
	"fmt"
	"math"
	"time"
)

// Options tunes Open. The zero value of every field means the library's
// default (include/idmint.h, idmint_options); nil Options means all defaults.
// Durations are whole milliseconds; the library checks the ranges.
type Options struct {
	Region        uint32        // region this process mints in (default 0)
	Lease         time.Duration // worker lease length (default 600 s; 100 ms .. 24 h)
	Renew         time.Duration // renewal interval (default Lease/10 when Lease is set, as the CLI does, else 60 s)
	MaxBorrow     time.Duration // future time a full sequence may borrow (default 0)
	ClockWait     time.Duration // longest wait for the clock to pass the lease fence (default 5 s)
	RangeBlock    uint32        // range block to request (default: the namespace's)
	RefillPercent uint32        // refill when this % of a block is left (default 50)
	Deadline      time.Duration // longest wait of one call for a range (default 2 s)
	Token         string        // bearer token for an http:// authority (default $IDMINT_TOKEN)
}

// toC fills a C options struct; the caller frees *token when it is set.
func (o *Options) toC(c *C.idmint_options) (token *C.char, err error) {
	C.idmint_options_init_v2(c)
	if o == nil {
		return nil, nil
	}
	c.region = C.uint32_t(o.Region)
	c.range_block = C.uint32_t(o.RangeBlock)
	if o.RefillPercent != 0 {
		c.refill_percent = C.uint32_t(o.RefillPercent)
	}
	durations := []struct {
		name string
		d    time.Duration
		to   *C.uint32_t
	}{
		{"Lease", o.Lease, &c.lease_ms},
		{"Renew", o.Renew, &c.renew_ms},
		{"MaxBorrow", o.MaxBorrow, &c.max_borrow_ms},
		{"ClockWait", o.ClockWait, &c.clock_wait_ms},
		{"Deadline", o.Deadline, &c.deadline_ms},
	}
	for _, f := range durations {
		if f.d == 0 {
			continue
		}
		ms, err := wholeMS(f.name, f.d)
		if err != nil {
			return nil, err
		}
		*f.to = C.uint32_t(ms)
	}
	if o.Lease != 0 && o.Renew == 0 {
		// The library's 60 s default would be refused beside any lease up to a minute.
		c.renew_ms = c.lease_ms / 10
	}
	if o.Token != "" {
		if err := noNUL("Open", "Options.Token", o.Token); err != nil {
			return nil, err
		}
		token = C.CString(o.Token)
		c.token = token
	}
	return token, nil
}

func wholeMS(name string, d time.Duration) (uint32, error) {
	switch {
	case d < 0:
		return 0, argError("Open", fmt.Sprintf("Options.%s %v is negative", name, d))
	case d%time.Millisecond != 0:
		return 0, argError("Open", fmt.Sprintf("Options.%s %v is not a whole number of milliseconds", name, d))
	case d/time.Millisecond > math.MaxUint32:
		return 0, argError("Open", fmt.Sprintf("Options.%s %v is above %d ms", name, d, uint32(math.MaxUint32)))
	}
	return uint32(d / time.Millisecond), nil
}
