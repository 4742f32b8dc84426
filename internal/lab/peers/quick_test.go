package peers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestPeersQuick runs scripts/peers/run.sh --quick: the origin (strata
// origin), then Strata's edge, nginx, Varnish and Apache Traffic Server in
// turn (each in its own memory cgroup, installed with apt-get where
// missing), each loaded by strata bench at a low fixed rate replaying its
// warm-up; then Check: every server answered every request in full and
// answered some from its store. No ratio is asserted. It runs with
// STRATA_PEERS_TESTS=1 (make test sets it), as root (cgroups). It lives
// here, not in cmd/strata, so that it has its own test binary and timeout.
func TestPeersQuick(t *testing.T) {
	if os.Getenv("STRATA_PEERS_TESTS") != "1" {
		t.Skip("set STRATA_PEERS_TESTS=1 to run the peers benchmark's quick form (make test does)")
	}
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "scripts/peers/run.sh"), "--quick", "--out", out)
	// On timeout, SIGTERM: run.sh's exit trap stops the servers, unmounts
	// the flash file systems and detaches their loop devices.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = time.Minute
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr // progress lines
	if err := cmd.Run(); err != nil {
		t.Fatalf("run.sh --quick: %v", err)
	}
	results, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(order) {
		t.Fatalf("results for %d servers, want %d (%v)", len(results), len(order), order)
	}
	if err := Check(results); err != nil {
		t.Fatal(err)
	}
	ms := make([]Metrics, len(results))
	for i, r := range results {
		ms[i] = Compute(r)
		t.Logf("%s: hit ratio %.2f, p99 %.0f ms, CPU %.0f µs/request, flash device %.3f bytes/byte served in writes of %.0f KiB",
			r.Server, ms[i].HitRatio, ms[i].P99Ms, ms[i].CPUUsPerReq, ms[i].DevicePerServed, ms[i].MeanWriteKiB)
	}
	if figs := Figures(ms); len(figs) == 0 {
		t.Error("no figures")
	}
}
