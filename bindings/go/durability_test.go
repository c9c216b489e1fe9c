package idmint_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"idmint"
)

// The test binary is also the minting process: with workerEnv set,
// TestMain runs durabilityWorker instead of the tests.
const workerEnv = "IDMINT_GO_DURABILITY_WORKER"

const leaseForTest = time.Second

// durabilityWorker mints DUR_COUNT IDs from each of DUR_SF (snowflake) and
// DUR_RG (range) in batches of 1000, alternating, appending each batch as
// little-endian uint64s to DUR_OUT.sf and DUR_OUT.rg. It may be killed at
// any point; a record cut short by the kill is the only partial data.
func durabilityWorker() int {
	// One OS thread, so range IDs too must increase within each file.
	runtime.LockOSThread()
	url, out := os.Getenv("DUR_AUTHORITY"), os.Getenv("DUR_OUT")
	count, err := strconv.Atoi(os.Getenv("DUR_COUNT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "DUR_COUNT:", err)
		return 2
	}
	// A short lease, so a killed process's worker id frees up during the
	// test and a restart takes it over its fence.
	opts := &idmint.Options{Lease: leaseForTest, Renew: leaseForTest / 5}
	var minters [2]*idmint.Minter
	var files [2]*bufio.Writer
	for i, ns := range []string{os.Getenv("DUR_SF"), os.Getenv("DUR_RG")} {
		m, err := idmint.Open(url, ns, opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer m.Close()
		minters[i] = m
		f, err := os.Create(out + [2]string{".sf", ".rg"}[i])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer f.Close()
		files[i] = bufio.NewWriterSize(f, 1<<16)
	}
	ids := make([]uint64, 1000)
	rec := make([]byte, 8*len(ids))
	for done := 0; done < count; done += len(ids) {
		for i, m := range minters {
			if err := m.NextInto(ids); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			for j, id := range ids {
				binary.LittleEndian.PutUint64(rec[8*j:], id)
			}
			if _, err := files[i].Write(rec); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	}
	for _, w := range files {
		if err := w.Flush(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

type workerRun struct {
	cmd *exec.Cmd
	out string
}

// startWorker may run on any goroutine: it reports instead of failing t.
func startWorker(t *testing.T, url, sf, rg, out string, count int) (*workerRun, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), workerEnv+"=1", "DUR_AUTHORITY="+url, "DUR_SF="+sf,
		"DUR_RG="+rg, "DUR_OUT="+out, "DUR_COUNT="+strconv.Itoa(count))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return &workerRun{cmd: cmd, out: out}, nil
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// killMidRun waits until the run has written at least ids IDs to each file,
// then kills it with SIGKILL and checks that it was still running.
func killMidRun(r *workerRun, ids int64) error {
	deadline := time.Now().Add(30 * time.Second)
	for fileSize(r.out+".sf") < 8*ids || fileSize(r.out+".rg") < 8*ids {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s wrote too little in 30 s", r.out)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	r.cmd.Wait()
	ws := r.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		return fmt.Errorf("%s ended with %v before the kill: the test killed nothing", r.out, r.cmd.ProcessState)
	}
	return nil
}

// readIDs reads one file; a killed run's last record may be cut short.
func readIDs(t *testing.T, path string, killed bool) []uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b)%8 != 0 && !killed {
		t.Fatalf("%s: %d bytes from a run that finished", path, len(b))
	}
	ids := make([]uint64, len(b)/8)
	for i := range ids {
		ids[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return ids
}

func firstWorker(t *testing.T, path string) uint32 {
	t.Helper()
	d, err := idmint.Decode(idmint.DefaultLayout(), readIDs(t, path, true)[0])
	if err != nil {
		t.Fatal(err)
	}
	return d.Worker
}

func TestFourProcessesKilledAndRestartedNeverRepeatAnID(t *testing.T) {
	dir := t.TempDir()
	url := "sqlite:" + filepath.Join(dir, "dur.db")
	sf := newNS(t, url, "snowflake")
	// A small block: many reservations, some cut off by the kills.
	rg := newNS(t, url, "range", "--block", "20000")

	const victims, survivors = 2, 2
	const survivorCount, finalCount, killAt = 400_000, 100_000, 100_000
	type file struct {
		path   string
		killed bool
		count  int
	}
	var files []file
	var runs []*workerRun
	for p := victims; p < victims+survivors; p++ {
		out := filepath.Join(dir, fmt.Sprintf("p%d-run0", p))
		r, err := startWorker(t, url, sf, rg, out, survivorCount)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
		files = append(files, file{out, false, survivorCount})
	}
	// Each victim is killed twice mid-run: restarted at once (its lease is
	// still held, so it takes a new worker id), then, once the leases ran
	// out, restarted to run to its end over a fence left behind.
	done := make(chan error, victims)
	for p := 0; p < victims; p++ {
		go func(p int) {
			for run := 0; run < 2; run++ {
				out := filepath.Join(dir, fmt.Sprintf("p%d-run%d", p, run))
				r, err := startWorker(t, url, sf, rg, out, 1<<40)
				if err == nil {
					err = killMidRun(r, killAt)
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}(p)
	}
	var victimErr error
	for p := 0; p < victims; p++ {
		if err := <-done; err != nil && victimErr == nil {
			victimErr = err
		}
	}
	if victimErr != nil {
		t.Fatal(victimErr)
	}
	for p := 0; p < victims; p++ {
		for run := 0; run < 2; run++ {
			files = append(files, file{filepath.Join(dir, fmt.Sprintf("p%d-run%d", p, run)), true, 0})
		}
	}
	time.Sleep(leaseForTest + 200*time.Millisecond)
	var finals []string
	for p := 0; p < victims; p++ {
		out := filepath.Join(dir, fmt.Sprintf("p%d-run2", p))
		r, err := startWorker(t, url, sf, rg, out, finalCount)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
		files = append(files, file{out, false, finalCount})
		finals = append(finals, out)
	}
	for _, r := range runs {
		if err := r.cmd.Wait(); err != nil {
			t.Fatalf("%s: %v", r.out, err)
		}
	}

	total := 0
	for _, suffix := range []string{".sf", ".rg"} {
		var all []uint64
		for _, f := range files {
			ids := readIDs(t, f.path+suffix, f.killed)
			if len(ids) == 0 {
				t.Fatalf("%s%s is empty", f.path, suffix)
			}
			if !f.killed && len(ids) != f.count {
				t.Fatalf("%s%s holds %d ids, want %d", f.path, suffix, len(ids), f.count)
			}
			for i := 1; i < len(ids); i++ {
				if ids[i] <= ids[i-1] {
					t.Fatalf("%s%s: id %d (%d) not above %d", f.path, suffix, i, ids[i], ids[i-1])
				}
			}
			all = append(all, ids...)
		}
		sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
		for i := 1; i < len(all); i++ {
			if all[i] == all[i-1] {
				t.Fatalf("%s: id %d minted twice", suffix, all[i])
			}
		}
		total += len(all)
		t.Logf("%s: %d ids from %d files, no duplicate", suffix, len(all), len(files))
	}
	// The late restarts must have taken a worker id an earlier run held,
	// or the fence was never put to the test.
	earlier := map[uint32]bool{}
	for _, f := range files[:len(files)-len(finals)] {
		earlier[firstWorker(t, f.path+".sf")] = true
	}
	reused := false
	for _, out := range finals {
		reused = reused || earlier[firstWorker(t, out+".sf")]
	}
	if !reused {
		t.Fatalf("no late restart took over an earlier run's worker id (earlier: %v)", earlier)
	}
	if total < 1_000_000 {
		t.Fatalf("only %d ids in total, want at least 1,000,000", total)
	}
}
