package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseBits(t *testing.T) {
	for in, want := range map[string]float64{"100Mbit": 12.5e6, "1Gbit": 125e6, "500kbit": 62500, "8": 1, "0": 0, "2mbit/s": 250e3} {
		got, err := parseBits(in)
		if err != nil || got != want {
			t.Errorf("parseBits(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "-1Mbit", "1e9Gbit", "NaN"} {
		if _, err := parseBits(in); err == nil {
			t.Errorf("parseBits(%q) accepted", in)
		}
	}
	d, err := parseDurations("2s, 6s,10s")
	if err != nil || len(d) != 3 || d[2] != 10*time.Second {
		t.Errorf("parseDurations = %v, %v", d, err)
	}
	if _, err := parseDurations("2s,0s"); err == nil {
		t.Error("a zero segment duration was accepted")
	}
}

// TestPeersReport tabulates the committed full run (docs/results/2026-11-24-peers) into a
// copy and checks the table and figures are written.
func TestPeersReport(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []string{"strata", "nginx", "varnish", "trafficserver"} {
		b, err := os.ReadFile(filepath.Join("../../docs/results/2026-11-24-peers", s+".json"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, s+".json"), b, 0o644)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"peers", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "| metric | strata | nginx | varnish | trafficserver | best peer |") {
		t.Errorf("table header missing:\n%s", stdout.String())
	}
	for _, f := range []string{"report.md", "peers-max-rate.svg", "peers-flash-writes.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if code := run([]string{"peers", t.TempDir()}, &stdout, &stderr); code == 0 {
		t.Error("an empty directory was tabulated")
	}
}
