package idmint_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// Set by TestMain: the CLI that creates namespaces, and a fresh SQLite
// authority in a temp dir that is removed when the tests end.
var (
	cli       string
	authority string
	tmpDir    string
	nsSerial  atomic.Int64
)

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(durabilityWorker())
	}
	cli = os.Getenv("IDMINT_CLI")
	if cli == "" {
		fmt.Fprintln(os.Stderr, "IDMINT_CLI must name BUILD/idmint (bindings/go/ci.sh sets it)")
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "idmint-go-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tmpDir = dir
	authority = "sqlite:" + filepath.Join(dir, "a.db")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runCLI runs the idmint CLI against url and returns its standard output.
func runCLI(t *testing.T, url string, args ...string) string {
	t.Helper()
	cmd := exec.Command(cli, append([]string{"--authority", url}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v: %s", cli, args, err, stderr.String())
	}
	return string(out)
}

// newNS creates a namespace of kind ("snowflake" or "range") with a name no
// other test uses, so tests never share leases or ranges.
func newNS(t *testing.T, url, kind string, extra ...string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", kind[:2], nsSerial.Add(1))
	runCLI(t, url, append([]string{"ns", "create", name, "--kind", kind}, extra...)...)
	return name
}

// assertUnique fails the test on any ID seen twice.
func assertUnique(t *testing.T, ids []uint64) {
	t.Helper()
	seen := make(map[uint64]struct{}, len(ids))
	for _, id := range ids {
		if _, dup := seen[id]; dup {
			t.Fatalf("duplicate id %d among %d", id, len(ids))
		}
		seen[id] = struct{}{}
	}
}
