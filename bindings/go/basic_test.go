package idmint_test

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"idmint"
)

func TestSnowflakeMinterMintsIncreasingIDsThatDecodeToItsLease(t *testing.T) {
	ns := newNS(t, authority, "snowflake")
	m, err := idmint.Open(authority, ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	first, err := m.Next()
	if err != nil {
		t.Fatal(err)
	}
	batch, err := m.NextN(1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch) != 1000 {
		t.Fatalf("NextN(1000) gave %d ids", len(batch))
	}
	into := make([]uint64, 500)
	if err := m.NextInto(into); err != nil {
		t.Fatal(err)
	}
	ids := append(append([]uint64{first}, batch...), into...)
	assertUnique(t, ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("id %d (%d) is not above the one before (%d)", i, ids[i], ids[i-1])
		}
	}

	info, err := m.Info()
	if err != nil {
		t.Fatal(err)
	}
	if info.Range {
		t.Fatal("a snowflake namespace reports Range")
	}
	if info.Layout != idmint.DefaultLayout() {
		t.Fatalf("layout %+v, want the default %+v", info.Layout, idmint.DefaultLayout())
	}
	if len(info.Incarnation) != 32 {
		t.Fatalf("incarnation %q is not 32 characters", info.Incarnation)
	}
	now := time.Now().UnixMilli()
	for _, id := range []uint64{ids[0], ids[len(ids)-1]} {
		d, err := idmint.Decode(info.Layout, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Worker != info.WorkerID || d.Region != info.Region {
			t.Fatalf("id %d decodes to region %d worker %d; the lease is region %d worker %d",
				id, d.Region, d.Worker, info.Region, info.WorkerID)
		}
		if d.UnixMS < now-60_000 || d.UnixMS > now+1000 {
			t.Fatalf("id %d decodes to %v, not about now (%v)", id, d.Time(), time.UnixMilli(now))
		}
	}
	if err := m.LeaseStatus(); err != nil {
		t.Fatalf("a fresh lease reports %v", err)
	}
}

func TestRangeMinterMintsFromItsReservedBlock(t *testing.T) {
	ns := newNS(t, authority, "range", "--start", "5000", "--block", "100000", "--max-block", "100000")
	m, err := idmint.Open(authority, ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	one, err := m.Next()
	if err != nil {
		t.Fatal(err)
	}
	batch, err := m.NextN(10_000)
	if err != nil {
		t.Fatal(err)
	}
	ids := append([]uint64{one}, batch...)
	assertUnique(t, ids)
	for _, id := range ids {
		if id < 5000 {
			t.Fatalf("id %d is below the namespace's start 5000", id)
		}
	}
	for i := 1; i < len(batch); i++ {
		if batch[i] <= batch[i-1] {
			t.Fatalf("NextN gave %d after %d", batch[i], batch[i-1])
		}
	}
	info, err := m.Info()
	if err != nil {
		t.Fatal(err)
	}
	if !info.Range || info.RangeLeft == 0 || info.RangeLeft > 200_000 {
		t.Fatalf("range info %+v: want Range and 0 < RangeLeft <= two blocks", info)
	}
	if err := m.LeaseStatus(); err != nil {
		t.Fatalf("a range Minter reports lease status %v", err)
	}
}

// workerHeld reports whether the CLI lists worker id w of ns with a holder.
func workerHeld(t *testing.T, ns string, w uint32) bool {
	t.Helper()
	for _, line := range strings.Split(runCLI(t, authority, "workers", ns), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[1] == "worker="+strconv.FormatUint(uint64(w), 10) {
			return f[2] != "holder=-"
		}
	}
	t.Fatalf("worker %d of %s not listed", w, ns)
	return false
}

func TestDeferredCloseReleasesTheLeaseAndEndsTheMinter(t *testing.T) {
	ns := newNS(t, authority, "snowflake")
	var kept *idmint.Minter
	var worker uint32
	func() {
		m, err := idmint.Open(authority, ns, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		kept = m
		info, err := m.Info()
		if err != nil {
			t.Fatal(err)
		}
		worker = info.WorkerID
		ids, err := m.NextN(10)
		if err != nil {
			t.Fatal(err)
		}
		assertUnique(t, ids)
		if !workerHeld(t, ns, worker) {
			t.Fatalf("worker %d is not held while the Minter is open", worker)
		}
	}()
	if workerHeld(t, ns, worker) {
		t.Fatalf("worker %d is still held after the deferred Close", worker)
	}
	if _, err := kept.Next(); err == nil {
		t.Fatal("Next after the deferred Close succeeded")
	}
	if err := kept.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

var uuidText = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestUUID7IntoContinuesTheOrderAndRefusesBadCounts(t *testing.T) {
	before, err := idmint.UUID7()
	if err != nil {
		t.Fatal(err)
	}
	got := make([]idmint.UUID, 10_000)
	if err := idmint.UUID7Into(got); err != nil {
		t.Fatal(err)
	}
	after, err := idmint.UUID7()
	if err != nil {
		t.Fatal(err)
	}
	seq := append(append([]idmint.UUID{before}, got...), after)
	for i := 1; i < len(seq); i++ {
		if string(seq[i][:]) <= string(seq[i-1][:]) {
			t.Fatalf("UUID %d %s is not above %s", i, seq[i], seq[i-1])
		}
		if !uuidText.MatchString(seq[i].String()) {
			t.Fatalf("UUID7Into gave %q, not a lowercase v7 UUID", seq[i])
		}
	}
	for _, bad := range [][]idmint.UUID{nil, {}} {
		if err := idmint.UUID7Into(bad); !errors.Is(err, idmint.ErrInvalid) {
			t.Fatalf("UUID7Into(len %d) = %v, want ErrInvalid", len(bad), err)
		}
	}
	if next, err := idmint.UUID7(); err != nil || string(next[:]) <= string(after[:]) {
		t.Fatalf("after refused calls UUID7 = %s, %v: want above %s", next, err, after)
	}
}

func TestUUID7IsVersion7IncreasingAndRoundTripsThroughTheLibrarysParser(t *testing.T) {
	start := time.Now().UnixMilli()
	var prev idmint.UUID
	seen := make(map[idmint.UUID]struct{})
	for i := 0; i < 10_000; i++ {
		u, err := idmint.UUID7()
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := seen[u]; dup {
			t.Fatalf("UUID7 repeated %s", u)
		}
		seen[u] = struct{}{}
		if i > 0 && string(u[:]) <= string(prev[:]) {
			t.Fatalf("UUID7 %s is not above %s", u, prev)
		}
		prev = u
		s := u.String()
		if !uuidText.MatchString(s) {
			t.Fatalf("UUID7 text %q is not a lowercase v7 UUID", s)
		}
		back, err := idmint.ParseUUID(strings.ToUpper(s))
		if err != nil {
			t.Fatal(err)
		}
		if back != u {
			t.Fatalf("ParseUUID(%q) = %x, want %x", s, back, u)
		}
	}
	ms := int64(prev[0])<<40 | int64(prev[1])<<32 | int64(prev[2])<<24 |
		int64(prev[3])<<16 | int64(prev[4])<<8 | int64(prev[5])
	if ms < start || ms > time.Now().UnixMilli()+1 {
		t.Fatalf("UUID7 timestamp %d is outside the test's run [%d, now]", ms, start)
	}
}

func TestDecodeTakesAKnownIDApart(t *testing.T) {
	l := idmint.DefaultLayout()
	// Built by hand from the layout: time 12345, worker 7, sequence 9.
	id := uint64(12345)<<(l.RegionBits+l.WorkerBits+l.SequenceBits) |
		uint64(7)<<l.SequenceBits | 9
	d, err := idmint.Decode(l, id)
	if err != nil {
		t.Fatal(err)
	}
	want := idmint.Decoded{TimeUnits: 12345, UnixMS: l.EpochMS + 12345*int64(l.UnitMS), Worker: 7, Sequence: 9}
	if d != want {
		t.Fatalf("Decode(%d) = %+v, want %+v", id, d, want)
	}
}

func TestALeaseAloneRenewsEveryTenthOfIt(t *testing.T) {
	m, err := idmint.Open(authority, newNS(t, authority, "snowflake"), &idmint.Options{Lease: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	before, err := m.Info()
	if err != nil {
		t.Fatal(err)
	}
	ids, err := m.NextN(100)
	if err != nil {
		t.Fatal(err)
	}
	assertUnique(t, ids)
	// With the library's 60 s renewal the lease's end would not move in a second.
	deadline := time.Now().Add(time.Second)
	for {
		now, err := m.Info()
		if err != nil {
			t.Fatal(err)
		}
		if now.LeaseUntil > before.LeaseUntil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("lease end still %d after 1 s: no renewal every 200 ms", now.LeaseUntil)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
