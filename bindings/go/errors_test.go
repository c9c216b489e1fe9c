package idmint_test

import (
	"errors"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"idmint"
)

// wantErr checks that err is an *idmint.Error of the sentinel want, for op,
// and that its text carries the library's text for the code and, when
// detail is set, a detail containing it.
func wantErr(t *testing.T, err error, op string, want idmint.Code, detail string) *idmint.Error {
	t.Helper()
	var e *idmint.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: got %v (%T), want an *idmint.Error", op, err, err)
	}
	if !errors.Is(err, want) || e.Code != want {
		t.Fatalf("%s: got code %d (%v), want %s", op, e.Code, err, want.Name())
	}
	if e.Op != op {
		t.Fatalf("error %v names op %q, want %q", err, e.Op, op)
	}
	text := strings.TrimPrefix(want.Error(), "idmint: ")
	if !strings.Contains(err.Error(), text) {
		t.Fatalf("error %q lacks the library's text %q", err, text)
	}
	if detail != "" && !strings.Contains(e.Detail, detail) {
		t.Fatalf("error %q: detail %q lacks %q", err, e.Detail, detail)
	}
	return e
}

func TestEveryCodeInTheHeaderHasExactlyOneSentinel(t *testing.T) {
	header, err := os.ReadFile("../../include/idmint.h")
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`XX\((E[A-Z]+), (-\d+), "([^"]+)"\)`).FindAllStringSubmatch(string(header), -1)
	if len(rows) < 14 {
		t.Fatalf("found only %d codes in IDMINT_ERRNO_MAP", len(rows))
	}
	sentinels := []idmint.Code{
		idmint.ErrInvalid, idmint.ErrNoMemory, idmint.ErrNotFound, idmint.ErrDisabled,
		idmint.ErrExhausted, idmint.ErrNoWorker, idmint.ErrLeaseLost, idmint.ErrClock,
		idmint.ErrForked, idmint.ErrUnavailable, idmint.ErrConflict, idmint.ErrStore,
		idmint.ErrTimedOut, idmint.ErrAccess, idmint.ErrRestored,
	}
	if len(sentinels) != len(rows) {
		t.Fatalf("%d sentinels for %d codes in the header", len(sentinels), len(rows))
	}
	named := map[string]idmint.Code{}
	for _, c := range sentinels {
		if _, dup := named[c.Name()]; dup || c.Name() == "" {
			t.Fatalf("sentinel %d has name %q (empty or twice)", int(c), c.Name())
		}
		named[c.Name()] = c
	}
	for _, r := range rows {
		v, _ := strconv.Atoi(r[2])
		c, ok := named[r[1]]
		if !ok || int(c) != v {
			t.Fatalf("IDMINT_%s = %d: sentinel %v (present %v)", r[1], v, int(c), ok)
		}
		if c.Error() != "idmint: "+r[3] {
			t.Fatalf("IDMINT_%s reads %q, the header says %q", r[1], c.Error(), r[3])
		}
		for _, other := range sentinels {
			if other != c && errors.Is(&idmint.Error{Code: c}, other) {
				t.Fatalf("an error of %s also matches %s", c.Name(), other.Name())
			}
		}
	}
}

func TestBadCountsAreRefusedWithTheLibrarysText(t *testing.T) {
	ns := newNS(t, authority, "range")
	m, err := idmint.Open(authority, ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	_, err = m.NextN(-1)
	wantErr(t, err, "NextN", idmint.ErrInvalid, "-1 is negative")
	_, err = m.NextN(idmint.MaxBatch + 1)
	wantErr(t, err, "NextN", idmint.ErrInvalid, "above")
	_, err = m.NextN(math.MaxInt)
	wantErr(t, err, "NextN", idmint.ErrInvalid, "above")
	// 0 reaches the library, which owns that verdict and its message.
	_, err = m.NextN(0)
	wantErr(t, err, "NextN", idmint.ErrInvalid, "n >= 1")
	err = m.NextInto(nil)
	wantErr(t, err, "NextInto", idmint.ErrInvalid, "n >= 1")

	// Nothing was consumed or broken: the handle still mints.
	ids, err := m.NextN(100)
	if err != nil {
		t.Fatal(err)
	}
	assertUnique(t, ids)
	if ids[0] != 1 {
		t.Fatalf("the first id after refused calls is %d, want the namespace's start 1", ids[0])
	}
}

// An empty authority is the one the environment names, else the machine's
// default, never a URL of its own: with $IDMINT_AUTHORITY set, Open("")
// opens that store or fails as that URL does.
func TestEmptyAuthorityIsTheEnvironments(t *testing.T) {
	sf := newNS(t, authority, "snowflake")
	t.Setenv("IDMINT_AUTHORITY", authority)
	m, err := idmint.Open("", sf, nil)
	if err != nil {
		t.Fatalf("Open(\"\") with IDMINT_AUTHORITY set: %v", err)
	}
	m.Close()
	t.Setenv("IDMINT_AUTHORITY", "nosuch:x")
	m, err = idmint.Open("", sf, nil)
	if m != nil {
		m.Close()
		t.Fatal("Open returned a Minter beside an error")
	}
	wantErr(t, err, "Open", idmint.ErrInvalid, "unknown scheme 'nosuch'")
}

func TestBadOpenArgumentsAreRefused(t *testing.T) {
	sf := newNS(t, authority, "snowflake")
	cases := []struct {
		name, url, ns string
		opts          *idmint.Options
		code          idmint.Code
		detail        string
	}{
		{"unknown scheme", "nosuch:x", sf, nil, idmint.ErrInvalid, "unknown scheme 'nosuch'"},
		{"private database", "sqlite::memory:", sf, nil, idmint.ErrInvalid, ""},
		{"unknown namespace", authority, "no-such-ns", nil, idmint.ErrNotFound, "no-such-ns"},
		{"bad namespace name", authority, "Bad Name!", nil, idmint.ErrInvalid, ""},
		{"NUL in namespace", authority, sf + "\x00x", nil, idmint.ErrInvalid, "NUL byte"},
		{"NUL in authority", authority + "\x00x", sf, nil, idmint.ErrInvalid, "NUL byte"},
		{"lease too short", authority, sf, &idmint.Options{Lease: 50 * time.Millisecond}, idmint.ErrInvalid, "50"},
		{"negative renew", authority, sf, &idmint.Options{Renew: -time.Second}, idmint.ErrInvalid, "negative"},
		{"sub-millisecond", authority, sf, &idmint.Options{Deadline: 1500 * time.Microsecond}, idmint.ErrInvalid, "whole number"},
		{"refill above 100", authority, sf, &idmint.Options{RefillPercent: 101}, idmint.ErrInvalid, "101"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := idmint.Open(c.url, c.ns, c.opts)
			if m != nil {
				m.Close()
				t.Fatal("Open returned a Minter beside an error")
			}
			wantErr(t, err, "Open", c.code, c.detail)
		})
	}
	// None of it left a lease behind: a Minter on the namespace takes worker 0.
	m, err := idmint.Open(authority, sf, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if info, _ := m.Info(); info.WorkerID != 0 {
		t.Fatalf("refused opens left leases: the next Minter got worker %d", info.WorkerID)
	}
	id, err := m.Next()
	if err != nil || id == 0 {
		t.Fatalf("Next after refused opens: %d, %v", id, err)
	}
}

func TestAClosedMinterRefusesEveryCall(t *testing.T) {
	m, err := idmint.Open(authority, newNS(t, authority, "snowflake"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"Next":        func() error { _, err := m.Next(); return err },
		"NextN":       func() error { _, err := m.NextN(3); return err },
		"NextInto":    func() error { return m.NextInto(make([]uint64, 3)) },
		"Info":        func() error { _, err := m.Info(); return err },
		"LeaseStatus": m.LeaseStatus,
	}
	for op, call := range calls {
		err := call()
		wantErr(t, err, op, idmint.ErrInvalid, "closed")
		if !errors.Is(err, idmint.ErrClosed) {
			t.Fatalf("%s on a closed Minter: %v does not match ErrClosed", op, err)
		}
	}
}

func TestBadDecodeAndUUIDInputAreRefused(t *testing.T) {
	l := idmint.DefaultLayout()
	_, err := idmint.Decode(l, 0)
	wantErr(t, err, "Decode", idmint.ErrInvalid, "")
	_, err = idmint.Decode(l, 1<<63)
	wantErr(t, err, "Decode", idmint.ErrInvalid, "")
	bad := l
	bad.TimeBits = 60
	_, err = idmint.Decode(bad, 1)
	wantErr(t, err, "Decode", idmint.ErrInvalid, "")
	for _, s := range []string{"", "not-a-uuid", "0189b7f2-6c1d-7abc-8def-0123456789a", "0189b7f2-6c1d-7abc-8def-0123456789ab\x00"} {
		_, err := idmint.ParseUUID(s)
		wantErr(t, err, "ParseUUID", idmint.ErrInvalid, "")
	}
}
