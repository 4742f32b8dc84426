package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildStrata builds the server binary (cmd/strata) into dir.
func buildStrataIn(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "strata")
	if out, err := exec.Command("go", "build", "-o", bin, "../strata").CombinedOutput(); err != nil {
		t.Fatalf("go build ../strata: %v\n%s", err, out)
	}
	return bin
}

// buildStrata builds the server binary into a temporary directory.
func buildStrata(t *testing.T) string { return buildStrataIn(t, t.TempDir()) }

// buildLab builds strata-lab and strata side by side, as make build
// does, and returns strata-lab.
func buildLab(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	buildStrataIn(t, dir)
	bin := filepath.Join(dir, "strata-lab")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestCommands: strata-lab lists its commands, and an unknown one is a
// usage error (exit 2).
func TestCommands(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(nil, &out, &errb); code != 0 {
		t.Fatalf("no command: exit %d", code)
	}
	for _, c := range []string{"origin", "peers", "sim", "soak", "torture"} {
		if !strings.Contains(out.String(), "\n  "+c+" ") {
			t.Errorf("%s not listed:\n%s", c, out.String())
		}
	}
	if code := run([]string{"serve"}, &out, &errb); code != 2 {
		t.Errorf("strata-lab serve: exit %d, want 2", code)
	}
}

// TestStrataBinary: --strata names the server binary; without it the
// strata beside strata-lab is run, then the one on PATH, and with none
// the error says how to get one.
func TestStrataBinary(t *testing.T) {
	if bin, err := strataBinary("/x/strata"); bin != "/x/strata" || err != nil {
		t.Errorf("--strata /x/strata: %q, %v", bin, err)
	}
	self, _ := os.Executable()
	if _, err := os.Stat(filepath.Join(filepath.Dir(self), "strata")); err == nil {
		t.Skip("a strata binary lies beside the test binary")
	}
	dir := t.TempDir()
	onPath := filepath.Join(dir, "strata")
	os.WriteFile(onPath, []byte("#!/bin/sh\n"), 0o755)
	t.Setenv("PATH", dir)
	if bin, err := strataBinary(""); err != nil || bin != onPath {
		t.Errorf("default: %q, %v; want %s", bin, err, onPath)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := strataBinary(""); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--strata") {
		t.Errorf("no strata anywhere: %v", err)
	}
}
