package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPeersQuick runs scripts/peers/run.sh --quick: the origin, then
// Strata's edge, nginx, Varnish and Apache Traffic Server in turn (each in
// its own memory cgroup, installed with apt-get where missing), each
// loaded by strata bench at a low fixed rate replaying its warm-up; then
// strata peers --check: every server answered every request in full and
// answered some from its store. No ratio is asserted. It runs with
// STRATA_PEERS_TESTS=1 (make test sets it), as root (cgroups).
func TestPeersQuick(t *testing.T) {
	if os.Getenv("STRATA_PEERS_TESTS") != "1" {
		t.Skip("set STRATA_PEERS_TESTS=1 to run the peers benchmark's quick form (make test does)")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "scripts/peers/run.sh"), "--quick", "--out", out)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr // progress lines
	if err := cmd.Run(); err != nil {
		t.Fatalf("run.sh --quick: %v", err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"peers", out, "--check"}, &stdout, &stderr); code != 0 {
		t.Fatalf("strata peers --check: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	for _, s := range []string{"strata", "nginx", "varnish", "trafficserver"} {
		if !strings.Contains(stdout.String(), "| "+s+" ") && !strings.Contains(stdout.String(), " "+s+" |") {
			t.Errorf("report has no column for %s:\n%s", s, stdout.String())
		}
	}
	if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
		t.Error(err)
	}
}
