package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/banner"
	"github.com/strata-media/strata/internal/node/app"
)

// startBanner runs serve in-process with cfg and returns the start banner
// (up to the listening line), its URL and a stop function.
func startBanner(t *testing.T, cfg app.Config) (lines []string, url string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serve(ctx, cfg, app.Options{}, nil, pw, io.Discard)
		pw.Close()
		done <- err
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if u, ok := banner.URL(sc.Text()); ok {
			go io.Copy(io.Discard, pr)
			return lines, u, func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("serve: %v", err)
				}
			}
		}
	}
	cancel()
	t.Fatalf("serve did not start: %v", <-done)
	return nil, "", nil
}

// A node started with --memory 640MiB and no --ram sizes its RAM tier
// from the budget and says so: the banner's memory line, the engine's RAM
// budget and the memory section in /stats. The rest of this node: a ring
// of 16 MiB (two 1 MiB blocks, at least 16 MiB), the image store's 64 MiB
// memtable and 64 MiB block cache, 96 KiB of flash index (24 blocks), the
// whole-file tier's 64 MiB of interval buffers, 64 MiB headroom, 32 MiB
// outside Go, flash hit buffers of a quarter of the tier and RAM's memory
// files' slack (a thirty-second of the tier and the ring, and 8 MiB):
// 640 MiB leaves a RAM tier of 255 MiB (255 + 63.75 + 16.5 <= 335.9), and
// Go's limit is 608 MiB.
func TestServeSizesRAMFromMemoryBudget(t *testing.T) {
	args := []string{"--data", t.TempDir(), "--listen", "127.0.0.1:0", "--memory", "640MiB",
		"--flash-size", "24MiB", "--block-size", "1MiB", "--log-level", "warn"}
	cfg, _, err := parseServeArgs(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	lines, url, stop := startBanner(t, cfg)
	defer stop()
	var mem string
	for _, l := range lines {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), "memory"); ok {
			mem = strings.TrimSpace(s)
		}
	}
	for _, want := range []string{"budget 640MiB (memory): RAM tier 255MiB (budget)", "ring 16MiB", "RAM files' slack 16.5MiB", "files pool 64MiB",
		"image memtable 64MiB + block cache 64MiB", "flash index 96KiB", "headroom 64MiB", "outside Go 32MiB",
		"Go memory limit 608MiB"} {
		if !strings.Contains(mem, want) {
			t.Errorf("banner's memory line %q lacks %q", mem, want)
		}
	}
	st := getStats(t, url)
	if got := st["ram"]["budget_bytes"]; got != 255<<20 {
		t.Errorf("/stats ram.budget_bytes %v, want 255 MiB", got)
	}
	for k, want := range map[string]float64{"budget_bytes": 640 << 20, "ram_bytes": 255 << 20, "flash_hits_bytes": 255 << 18, "ring_bytes": 16 << 20,
		"ram_files_slack_bytes": (255+16)<<20/32 + 8<<20,
		"image_memtable_bytes":  64 << 20, "flash_index_bytes": 96 << 10, "go_limit_bytes": 608 << 20, "over_bytes": 0} {
		if got, ok := st["memory"][k]; !ok || got != want {
			t.Errorf("/stats memory.%s %v, want %v", k, got, want)
		}
	}

	// An explicit --ram wins over the budget.
	cfg, _, err = parseServeArgs(append(args, "--ram", "100MiB"), io.Discard)
	if err != nil || cfg.RAM != 100<<20 || cfg.MemorySizing().RAMFrom != "ram" {
		t.Fatalf("--ram 100MiB with --memory 640MiB: ram %d from %q, err %v", cfg.RAM, cfg.MemorySizing().RAMFrom, err)
	}
	// A budget too small to run is a usage error naming the key and the
	// minimum (32 MiB of RAM tier and 329.6 MiB besides, rounded up).
	_, _, err = parseServeArgs([]string{"--memory", "200MiB", "--flash-size", "24MiB", "--block-size", "1MiB"}, io.Discard)
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "set memory (--memory) to 362MiB or more") {
		t.Fatalf("--memory 200MiB: %v", err)
	}
}
