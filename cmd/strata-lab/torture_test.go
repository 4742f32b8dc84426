package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/lab/torture"
	"github.com/strata-media/strata/internal/media/mediatest"
)

// requireTorture skips a crash torture test unless STRATA_TORTURE_TESTS
// is set (make test sets it): they build the binary, generate videos with
// ffmpeg and run and kill real servers.
func requireTorture(t *testing.T) {
	t.Helper()
	if os.Getenv("STRATA_TORTURE_TESTS") == "" {
		t.Skip("set STRATA_TORTURE_TESTS=1 to run the crash torture")
	}
	mediatest.Require(t)
}

// requireEdgeTorture skips an edge torture test unless
// STRATA_TORTURE_TESTS is set: they build the binary and run and kill real
// servers (no ffmpeg: the origin's objects are generated).
func requireEdgeTorture(t *testing.T) {
	t.Helper()
	if os.Getenv("STRATA_TORTURE_TESTS") == "" {
		t.Skip("set STRATA_TORTURE_TESTS=1 to run the crash torture")
	}
}

// tortureOptions are a short torture of the real binary in a temporary
// directory, its progress in the test log.
func tortureOptions(t *testing.T, cycles int, seed uint64) torture.Options {
	dir := t.TempDir()
	videos, err := tortureSources(context.Background(), filepath.Join(dir, "sources"))
	if err != nil {
		t.Fatal(err)
	}
	return torture.Options{RunOptions: torture.RunOptions{Bin: buildStrata(t), Dir: dir, Cycles: cycles, Seed: seed,
		Log: testLog{t}}, Videos: videos}
}

// testLog writes lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// CI's short form of the crash torture: 10 cycles of mixed load, kill -9
// at a random moment, fsck, restart and a check of every byte. The seed is
// new each run and logged; STRATA_TORTURE_SEED replays one.
func TestTorture(t *testing.T) {
	requireTorture(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("STRATA_TORTURE_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (STRATA_TORTURE_SEED=%d replays it)", seed, seed)
	sum, err := torture.Run(context.Background(), tortureOptions(t, 10, seed))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cycles != 10 || sum.Acked.Files == 0 || sum.Acked.Videos == 0 || sum.Acked.Images == 0 || sum.Recovered == 0 {
		t.Fatalf("the torture did not exercise every path: %+v", sum)
	}
}

// The torture's checks fail when the data directory is damaged between
// the kill and the restart: a stored file's bytes changed (the check after
// the restart), or flash records overwritten (fsck).
func TestTortureCatchesDamage(t *testing.T) {
	requireTorture(t)
	for name, damage := range map[string]func(data string) error{
		"file bytes": func(data string) error {
			paths, _ := filepath.Glob(filepath.Join(data, "files", "f*"))
			for _, p := range paths {
				if !strings.HasSuffix(p, ".json") {
					if err := flipByte(p, 0); err != nil {
						return err
					}
				}
			}
			return nil
		},
		"flash records": func(data string) error {
			p := filepath.Join(data, "flash.cache")
			for b := int64(2); b < 24; b++ { // every data block of 1 MiB, past the 2 metadata blocks
				if err := flipByte(p, b<<20+100<<10); err != nil {
					return err
				}
			}
			return nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			opts := tortureOptions(t, 5, 7)
			opts.MinRun, opts.EarlyKill = 2*time.Second, -1
			opts.AfterKill = damage
			_, err := torture.Run(context.Background(), opts)
			if !errors.Is(err, torture.ErrFailed) {
				t.Fatalf("damage not found: %v", err)
			}
			t.Logf("found: %v", err)
		})
	}
}

// flipByte inverts the byte at off of the file at path.
func flipByte(path string, off int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	b := []byte{0}
	if _, err := f.ReadAt(b, off); err != nil {
		return err
	}
	b[0] ^= 0xff
	_, err = f.WriteAt(b, off)
	return err
}

// CI's short form of the edge torture: 5 cycles of GET, Range and HEAD
// requests to a real edge while its origin publishes new versions, kill -9,
// restart, and every answer checked whole against the version its ETag
// names and against the staleness the windows allow; the flash segments
// recovered at each restart are those fsck found.
func TestEdgeTorture(t *testing.T) {
	requireEdgeTorture(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("STRATA_TORTURE_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (STRATA_TORTURE_SEED=%d replays it)", seed, seed)
	sum, err := torture.RunEdge(context.Background(), torture.EdgeOptions{RunOptions: torture.RunOptions{Bin: buildStrata(t),
		Dir: t.TempDir(), Cycles: 5, Seed: seed, Log: testLog{t}}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cycles != 5 || sum.Whole == 0 || sum.Ranges == 0 || sum.Heads == 0 || sum.Recovered == 0 ||
		sum.FlashAnswers == 0 || sum.Versions <= 48 || sum.ByCache["HIT"] == 0 {
		t.Fatalf("the edge torture did not exercise every path: %+v", sum)
	}
}

// The edge torture's staleness check fails against an edge that keeps
// answers 30 s whatever the origin's max-age (--edge-ttl): the origin
// publishes new versions that the edge does not fetch.
func TestEdgeTortureCatchesStaleAnswers(t *testing.T) {
	requireEdgeTorture(t)
	opts := torture.EdgeOptions{RunOptions: torture.RunOptions{Bin: buildStrata(t), Dir: t.TempDir(), Cycles: 5, Seed: 7,
		MinRun: 3 * time.Second, EarlyKill: -1, Log: testLog{t}}, EdgeArgs: []string{"--edge-ttl", "30s"}}
	_, err := torture.RunEdge(context.Background(), opts)
	if !errors.Is(err, torture.ErrFailed) || !strings.Contains(err.Error(), "superseded") {
		t.Fatalf("stale answers not found: %v", err)
	}
	t.Logf("found: %v", err)
}
