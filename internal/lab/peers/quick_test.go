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

// TestPeersQuick runs scripts/peers/run.sh --quick of each scenario
// (link, hot, device): the origin (strata-lab origin), then Strata's edge,
// nginx, Varnish and Apache Traffic Server in turn (each in its own memory
// cgroup, installed with apt-get where missing), each loaded by strata
// bench at a low fixed rate replaying its warm-up; then Check: every
// server answered every request in full and answered some from its
// store; in the device scenario, every server's flash file system was
// throttled. No ratio is asserted. It runs with STRATA_PEERS_TESTS=1
// (make test sets it), as root (cgroups). It lives here, not in
// cmd/strata-lab, so that it has its own test binary and timeout.
func TestPeersQuick(t *testing.T) {
	if os.Getenv("STRATA_PEERS_TESTS") != "1" {
		t.Skip("set STRATA_PEERS_TESTS=1 to run the peers benchmark's quick form (make test does)")
	}
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, scenario := range []string{"link", "hot", "device"} {
		t.Run(scenario, func(t *testing.T) { quick(t, repo, scenario) })
	}
}

func quick(t *testing.T, repo, scenario string) {
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "scripts/peers/run.sh"), "--quick", "--scenario", scenario, "--out", out)
	// On timeout, SIGTERM: run.sh's exit trap stops the servers, unmounts
	// the flash file systems and detaches their loop devices.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = time.Minute
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr // progress lines
	if err := cmd.Run(); err != nil {
		t.Fatalf("run.sh --quick --scenario %s: %v", scenario, err)
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
		if r.Scenario != scenario {
			t.Errorf("%s: scenario %q, want %q", r.Server, r.Scenario, scenario)
		}
		if d := r.DeviceCheck; scenario == "device" && (d == nil || d.DirectWriteMBps <= 0 || d.BufferedWriteMBps <= 0) {
			t.Errorf("%s: no throttle check in the device scenario: %+v", r.Server, d)
		}
		ms[i] = Compute(r)
		t.Logf("%s: hit ratio %.2f, p99 %.0f ms, CPU %.0f µs/request, flash device %.3f bytes/byte served in writes of %.0f KiB",
			r.Server, ms[i].HitRatio, ms[i].P99Ms, ms[i].CPUUsPerReq, ms[i].DevicePerServed, ms[i].MeanWriteKiB)
		if d := r.DeviceCheck; d != nil && d.MiB > 0 {
			t.Logf("%s: throttle check (MB/s): O_DIRECT write %.0f, page cache write %.0f, O_DIRECT read %.0f, page cache read %.0f",
				r.Server, d.DirectWriteMBps, d.BufferedWriteMBps, d.DirectReadMBps, d.BufferedReadMBps)
		}
	}
	if figs := Figures(ms); len(figs) == 0 {
		t.Error("no figures")
	}
	if _, err := os.Stat(filepath.Join(out, "profile", "cpu-at80.pprof")); err != nil {
		t.Errorf("Strata's CPU profile: %v", err)
	}
}
