// Package soak holds a running strata server at a steady request rate for
// a long time and samples its resident memory every second, to check that
// it serves without errors or deadline misses within its memory bound.
package soak

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-media/strata/internal/lab/plot"
	"github.com/strata-media/strata/internal/tools/loadgen"
)

// ErrFailed marks a soak that had errors, deadline misses (unless
// allowed) or resident memory above its bound.
var ErrFailed = errors.New("soak: check failed")

// Options configure a soak.
type Options struct {
	// Load is the load: URL, rate, duration, seed.
	Load loadgen.Config
	// PID is the server's process id, whose VmRSS is sampled.
	PID int
	// Bound is the resident memory allowed, bytes.
	Bound int64
	// AllowMisses accepts deadline misses (short runs on a shared machine
	// check errors and memory only).
	AllowMisses bool
	// Log receives a progress line every ten seconds (nil: io.Discard).
	Log io.Writer
}

// A sample is the server's resident memory at one moment.
type sample struct {
	Elapsed time.Duration
	RSS     int64 // bytes
}

// Result is a soak's outcome.
type Result struct {
	Report  loadgen.Report
	Samples []sample
	MaxRSS  int64
	Bound   int64
}

// Run runs the load while sampling the server's VmRSS every second, then
// checks the result (Check).
func Run(ctx context.Context, opts Options) (Result, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	res := Result{Bound: opts.Bound}
	if _, err := RSS(opts.PID); err != nil {
		return res, err
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		stop = make(chan struct{})
	)
	start := time.Now()
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if rss, err := RSS(opts.PID); err == nil {
				mu.Lock()
				res.Samples = append(res.Samples, sample{time.Since(start), rss})
				res.MaxRSS = max(res.MaxRSS, rss)
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	cfg := opts.Load
	cfg.ProgressInterval = 10 * time.Second
	cfg.Progress = func(p loadgen.Progress) {
		mu.Lock()
		cur, peak := int64(0), res.MaxRSS
		if n := len(res.Samples); n > 0 {
			cur = res.Samples[n-1].RSS
		}
		mu.Unlock()
		fmt.Fprintf(opts.Log, "soak: %4.0fs  sent %d  done %d  in flight %d  misses %d  RSS %s (max %s, bound %s)\n",
			p.Elapsed.Seconds(), p.Sent, p.Done, p.InFlight, p.Misses, mib(cur), mib(peak), mib(opts.Bound))
	}
	rep, err := loadgen.Run(ctx, cfg)
	close(stop)
	wg.Wait()
	res.Report = rep
	if err != nil {
		return res, err
	}
	return res, res.Check(opts.AllowMisses)
}

// Check reports errors, deadline misses (unless allowMisses) and a
// resident memory above the bound.
func (r Result) Check(allowMisses bool) error {
	var errs []error
	if r.Report.Errors > 0 {
		errs = append(errs, fmt.Errorf("%d errors: %v", r.Report.Errors, r.Report.ErrorKinds))
	}
	if r.Report.Misses > 0 && !allowMisses {
		errs = append(errs, fmt.Errorf("%d deadline misses of %d requests", r.Report.Misses, r.Report.Requests))
	}
	if r.MaxRSS > r.Bound {
		errs = append(errs, fmt.Errorf("resident memory reached %s, above the bound %s", mib(r.MaxRSS), mib(r.Bound)))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrFailed, errors.Join(errs...))
	}
	return nil
}

// RSS is process pid's resident set size (VmRSS of /proc/PID/status).
func RSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("soak: no VmRSS in /proc/%d/status", pid)
}

// SVG plots the samples and the bound, MiB against minutes.
func (r Result) SVG(title string) []byte {
	var x, y, by []float64
	for _, s := range r.Samples {
		x = append(x, s.Elapsed.Minutes())
		y = append(y, float64(s.RSS)/(1<<20))
		by = append(by, float64(r.Bound)/(1<<20))
	}
	return plot.Chart{Title: title, XLabel: "minutes", YLabel: "resident memory (MiB)", YMin: new(0.0)}.Lines([]plot.Series{
		{Name: "VmRSS, every second", X: x, Y: y},
		{Name: "bound", X: x, Y: by},
	})
}

// CSV is the samples as "seconds,rss_bytes" lines with a header.
func (r Result) CSV() []byte {
	var b strings.Builder
	b.WriteString("seconds,rss_bytes\n")
	for _, s := range r.Samples {
		fmt.Fprintf(&b, "%.1f,%d\n", s.Elapsed.Seconds(), s.RSS)
	}
	return []byte(b.String())
}

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }
