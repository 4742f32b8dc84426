// Package torture is the crash torture of a real strata serve process: a
// mixed load of reads and uploads, kill -9 at a random moment, fsck,
// restart on the same data directory, and a check of everything the
// server holds against what was uploaded.
package torture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

// ErrFailed marks a cycle whose checks found the server wrong: a byte
// served that differs from its source, an acknowledged upload lost or
// torn, an unclean fsck, or a flash cache that did not recover.
var ErrFailed = errors.New("torture: check failed")

// RunOptions are what both tortures take: the binary, the directory, the
// cycles and their timing, the clients, and where the progress goes.
type RunOptions struct {
	// Bin is the strata binary to run (strata serve, strata fsck).
	Bin string
	// Dir is the run's working directory: the data directory is Dir/data
	// (which must not exist at the start) and each server's log goes to
	// Dir/serve.log.
	Dir string
	// Cycles is the number of kill-restart cycles. Default 200 (the edge
	// torture: 50).
	Cycles int
	// Seed picks the workload, the run times, the kill moments (and the
	// edge torture's versions published).
	Seed uint64
	// MinRun and MaxRun bound the time the load runs before the kill,
	// drawn uniformly. Defaults 200 ms and 2.5 s (the edge torture:
	// 300 ms and 3 s).
	MinRun, MaxRun time.Duration
	// EarlyKill is the fraction of cycles killed during start-up (flash
	// recovery), without load, at a uniform moment in its first 300 ms.
	// Default 0.1; negative for none.
	EarlyKill float64
	// Workers is the number of concurrent clients. Default 4.
	Workers int
	// AfterKill, if set, is called with the data directory after each
	// kill, before fsck and the restart: tests damage the directory with
	// it to see the checks fail.
	AfterKill func(data string) error
	// Log receives one progress line per cycle and the summary (nil:
	// io.Discard).
	Log io.Writer
}

// ensureDefaults fills r's zero fields, with a torture's own defaults
// for the cycles and the load's length.
func (r *RunOptions) ensureDefaults(cycles int, minRun, maxRun time.Duration) {
	if r.Cycles <= 0 {
		r.Cycles = cycles
	}
	if r.MinRun <= 0 {
		r.MinRun = minRun
	}
	if r.MaxRun < r.MinRun {
		r.MaxRun = max(r.MinRun, maxRun)
	}
	if r.EarlyKill == 0 {
		r.EarlyKill = 0.1
	}
	if r.Workers <= 0 {
		r.Workers = 4
	}
	if r.Log == nil {
		r.Log = io.Discard
	}
}

// Options configure a torture run.
type Options struct {
	RunOptions
	// Videos are two or more MP4 sources of the same shape (duration,
	// GOP, audio or not) and different pictures; uploads pick among them,
	// so that a replaced title must change every segment's bytes.
	Videos []string
}

// EnsureDefaults fills the zero fields of o.
func (o *Options) EnsureDefaults() {
	o.ensureDefaults(200, 200*time.Millisecond, 2500*time.Millisecond)
}

// summary counts what a run did and checked.
type summary struct {
	Cycles      int           // cycles completed (killed, restarted, verified)
	EarlyKills  int           // of them, killed during start-up
	Requests    int64         // requests answered during the loads
	Acked       counts        // uploads and deletes acknowledged (2xx)
	Refused     int64         // uploads answered 4xx/5xx: nothing may change
	Unacked     int           // operations in flight at a kill
	LostUnacked int           // of them, absent after the restart
	KeptUnacked int           // of them, present and whole after the restart
	Verified    int64         // objects checked after restarts
	Bytes       int64         // bytes compared with their sources, loads and checks
	Recovered   int64         // flash segments recovered, summed over restarts
	FlashHits   int64         // flash hits while checking, summed over restarts
	Elapsed     time.Duration // the run's wall time
}

// counts are acknowledged operations by kind.
type counts struct {
	Files, Images, ImageDeletes, Videos, Invalidations int64
}

func (c counts) total() int64 {
	return c.Files + c.Images + c.ImageDeletes + c.Videos + c.Invalidations
}

// Run runs the torture: a first start that learns the reference bytes of
// the video sources, then opts.Cycles cycles of load, kill -9, fsck,
// restart and verification. It stops at the first failed check with an
// error wrapping ErrFailed that names the cycle and the seed; the server
// it ran is killed and Dir is left for inspection.
func Run(ctx context.Context, opts Options) (summary, error) {
	opts.EnsureDefaults()
	start := time.Now()
	t, err := newTorture(opts)
	if err != nil {
		return summary{}, err
	}
	defer t.stopServer()
	if err := t.setup(ctx); err != nil {
		return t.sum, err
	}
	for c := 1; c <= opts.Cycles; c++ {
		if err := t.cycle(ctx, c); err != nil {
			t.sum.Elapsed = time.Since(start)
			if errors.Is(err, ErrFailed) {
				err = fmt.Errorf("cycle %d/%d (seed %d): %w", c, opts.Cycles, opts.Seed, err)
			}
			return t.sum, err
		}
		t.sum.Cycles++
	}
	t.sum.Elapsed = time.Since(start)
	t.printSummary()
	return t.sum, nil
}

// A torture is one run's state: the model of what the server holds, the
// sources, the running server.
type torture struct {
	opts  Options
	data  string
	rng   *rand.Rand
	src   *sources
	model *model
	srv   *server
	sum   summary
}

func newTorture(opts Options) (*torture, error) {
	if opts.Bin == "" || opts.Dir == "" {
		return nil, errors.New("torture: Bin and Dir are required")
	}
	if len(opts.Videos) < 2 {
		return nil, errors.New("torture: at least two video sources are required")
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, "data")); err == nil {
		return nil, fmt.Errorf("torture: %s already has a data directory", opts.Dir)
	}
	t := &torture{opts: opts, data: filepath.Join(opts.Dir, "data"),
		rng: rand.New(rand.NewPCG(opts.Seed, 0x544f5254))}
	src, err := newSources(opts.Seed, opts.Videos)
	if err != nil {
		return nil, err
	}
	t.src = src
	t.model = newModel(opts.Workers)
	return t, nil
}

func (t *torture) logf(format string, args ...any) {
	fmt.Fprintf(t.opts.Log, format+"\n", args...)
}

func (t *torture) printSummary() {
	s := t.sum
	t.logf("torture: %d cycles (%d killed during start-up) in %s, seed %d", s.Cycles, s.EarlyKills,
		s.Elapsed.Round(time.Second), t.opts.Seed)
	t.logf("  requests   %d answered during the loads", s.Requests)
	t.logf("  acked      %d: %d file uploads, %d image uploads, %d image deletes, %d video uploads, %d invalidations",
		s.Acked.total(), s.Acked.Files, s.Acked.Images, s.Acked.ImageDeletes, s.Acked.Videos, s.Acked.Invalidations)
	t.logf("  refused    %d (4xx/5xx answers; nothing changed)", s.Refused)
	t.logf("  unacked    %d in flight at a kill: %d absent after restart, %d present and whole",
		s.Unacked, s.LostUnacked, s.KeptUnacked)
	t.logf("  verified   %d objects after restarts; %.1f MB compared with their sources", s.Verified, float64(s.Bytes)/1e6)
	t.logf("  flash      %d segments recovered over the restarts, %d flash hits while checking", s.Recovered, s.FlashHits)
	t.logf("  result     every check passed")
}
