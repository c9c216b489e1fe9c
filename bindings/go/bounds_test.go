package idmint_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"idmint"
)

// The bounds of a window agree with `idmint bounds --json` on one vector (a
// 10 ms unit, 5 ms into it; region bits), hold the IDs minted now, and lie
// above them for a later window.
func TestBoundsAgreeWithTheCLIAndHoldWhatWasMinted(t *testing.T) {
	ns := newNS(t, authority, "snowflake", "--layout", "39/4/8/12", "--unit", "10")
	m, err := idmint.Open(authority, ns, &idmint.Options{Region: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	info, err := m.Info()
	if err != nil {
		t.Fatal(err)
	}
	from, to := time.UnixMilli(1772323200005), time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	lo, hi, err := idmint.Bounds(info.Layout, from, to)
	if err != nil {
		t.Fatal(err)
	}
	var theirs struct{ Lo, Hi string }
	out := runCLI(t, authority, "bounds", "--ns", ns, "--from", "1772323200005", "--to", "2026-03-02", "--json")
	if err := json.Unmarshal([]byte(out), &theirs); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strconv.FormatUint(lo, 10) != theirs.Lo || strconv.FormatUint(hi, 10) != theirs.Hi {
		t.Fatalf("Bounds = %d, %d; the CLI says %s, %s", lo, hi, theirs.Lo, theirs.Hi)
	}
	epoch := idmint.DefaultLayout().EpochMS
	if want := uint64((1772323200005-epoch)/10) << 24; lo != want {
		t.Fatalf("lo = %d, want %d", lo, want)
	}

	// A second of slack: the library's clock may lag a loaded machine's.
	before := time.Now().Add(-time.Second)
	ids, err := m.NextN(1000)
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().Add(time.Second)
	lo, hi, err = idmint.Bounds(info.Layout, before, after)
	if err != nil {
		t.Fatal(err)
	}
	laterLo, _, err := idmint.Bounds(info.Layout, after, after.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if id < lo || id > hi || id >= laterLo {
			t.Fatalf("ID %d minted in [%v, %v): bounds [%d, %d], later window from %d", id, before, after, lo, hi, laterLo)
		}
	}
}

func TestBoundsRefuseBadWindows(t *testing.T) {
	l := idmint.DefaultLayout()
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, w := range []struct{ from, to time.Time }{
		{day.Add(time.Hour), day},                          // empty
		{day.AddDate(-1, 0, 0), day},                       // before the epoch
		{day, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}, // past the time bits
	} {
		if _, _, err := idmint.Bounds(l, w.from, w.to); !errors.Is(err, idmint.ErrInvalid) {
			t.Fatalf("Bounds(%v, %v) = %v, want ErrInvalid", w.from, w.to, err)
		}
	}
	if _, _, err := idmint.UUID7Bounds(day, day); !errors.Is(err, idmint.ErrInvalid) {
		t.Fatalf("UUID7Bounds of an empty window = %v, want ErrInvalid", err)
	}
}

func TestUUID7BoundsHoldTheUUIDsMadeInTheirWindow(t *testing.T) {
	lo, hi, err := idmint.UUID7Bounds(time.UnixMilli(0x0123456789ab), time.UnixMilli(0x0123456789ad))
	if err != nil {
		t.Fatal(err)
	}
	if lo.String() != "01234567-89ab-7000-8000-000000000000" || hi.String() != "01234567-89ac-7fff-bfff-ffffffffffff" {
		t.Fatalf("UUID7Bounds = %s, %s", lo, hi)
	}
	before := time.Now().Add(-time.Second)
	var got []idmint.UUID
	for i := 0; i < 1000; i++ {
		u, err := idmint.UUID7()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, u)
	}
	lo, hi, err = idmint.UUID7Bounds(before, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range got {
		if string(u[:]) < string(lo[:]) || string(u[:]) > string(hi[:]) {
			t.Fatalf("UUID %s outside [%s, %s]", u, lo, hi)
		}
	}
}
