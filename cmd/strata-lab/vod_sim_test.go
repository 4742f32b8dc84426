package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSimVoDFlags checks the command's flag handling without running the
// experiments (the full small run is vodsim's smoke test and CI's job).
func TestSimVoDFlags(t *testing.T) {
	var out, errb bytes.Buffer
	err := runSimVoD([]string{"--scale", "huge", "--out", t.TempDir()}, &out, &errb)
	if !errors.Is(err, errUsage) {
		t.Fatalf("unknown scale: %v, want a usage error", err)
	}
	err = runSimVoD([]string{"extra"}, &out, &errb)
	if !errors.Is(err, errUsage) {
		t.Fatalf("stray argument: %v, want a usage error", err)
	}
}

// TestSimVoDSmall runs strata-lab sim vod --scale small end to end when
// STRATA_SIM_VOD is set (it takes about a minute).
func TestSimVoDSmall(t *testing.T) {
	if os.Getenv("STRATA_SIM_VOD") == "" {
		t.Skip("set STRATA_SIM_VOD=1 to run the small-scale experiment")
	}
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if err := runSimVoD([]string{"--scale", "small", "--out", dir}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "report.md")); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
}
