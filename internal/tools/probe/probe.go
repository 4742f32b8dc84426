// Package probe finds an SSD's optimal write block size by FlashStream's §3.1 method: the smallest request size whose random-write latency distribution matches the sequential one.
package probe

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// ErrRegion reports a probe region too small for the smallest size.
var ErrRegion = errors.New("probe: region too small")

// Options configures Run. The zero value is FlashStream's protocol, which
// writes 2 x 640 x size bytes per size (160 GiB at 128 MiB): on a real
// device set PassBytes or Budget.
type Options struct {
	// Sizes are the request sizes in bytes, ascending; default 4 KiB to
	// 128 MiB, doubling. Sizes not a multiple of the target's alignment,
	// or larger than half the region, are skipped.
	Sizes []int64
	// Count is the number of measured writes per pattern and size; default
	// 640 (FlashStream Fig. 1).
	Count int
	// PassBytes caps the bytes of one measured pass: a size gets
	// min(Count, max(MinCount, PassBytes/size)) writes. 0 = no cap.
	PassBytes int64
	// MinCount is the fewest writes a pass may be cut to; default 32.
	MinCount int
	// Warmup is the number of bytes written in each pattern, unmeasured,
	// before its measured writes, to reach that pattern's steady state
	// (SNIA-style). Default 0, as in FlashStream.
	Warmup int64
	// Budget caps every byte the probe writes, fill included; the probe
	// stops before a pass that would exceed it and marks the result
	// Truncated. 0 = unlimited.
	Budget int64
	// Region is the number of bytes probed from offset 0; default the
	// whole target.
	Region int64
	// SkipFill skips the precondition fill of the region. Without the fill
	// a drive may have free space to absorb random writes and show no
	// garbage collection.
	SkipFill bool
	// Threshold is the KL divergence (nats) under which a size counts as
	// optimal; default 0.1 (FlashStream §3.1).
	Threshold float64
	// StopAtOptimal ends the probe at the first size under the threshold
	// instead of measuring every size.
	StopAtOptimal bool
	// BinsPerOctave is KL's histogram resolution; default 4.
	BinsPerOctave int
	// Seed seeds the random offsets.
	Seed uint64
	// Progress, if set, is called as the probe advances.
	Progress func(Progress)
}

// EnsureDefaults fills in zero fields.
func (o *Options) EnsureDefaults() {
	if len(o.Sizes) == 0 {
		for s := int64(4 << 10); s <= 128<<20; s *= 2 {
			o.Sizes = append(o.Sizes, s)
		}
	}
	if o.Count <= 0 {
		o.Count = 640
	}
	if o.MinCount <= 0 {
		o.MinCount = 32
	}
	if o.Threshold <= 0 {
		o.Threshold = 0.1
	}
	if o.BinsPerOctave <= 0 {
		o.BinsPerOctave = DefaultBinsPerOctave
	}
}

// count is the number of measured writes of one pass at size.
func (o *Options) count(size int64) int {
	if o.PassBytes <= 0 {
		return o.Count
	}
	return min(o.Count, max(o.MinCount, int(o.PassBytes/size)))
}

// Progress reports the probe's advance.
type Progress struct {
	Phase string // "fill", "sequential", "random" or "done" (Size finished)
	Size  int64
	Done  int // writes of this phase so far
	Total int
	// Result is set when Phase is "done".
	Result *SizeResult
}

// LatencyStats summarizes one pass's latencies.
type LatencyStats struct {
	Mean, P50, P99, Max time.Duration
}

// SizeResult is the outcome for one request size.
type SizeResult struct {
	Size       int64
	Count      int     // measured writes per pattern
	KL         float64 // D(random || sequential), nats
	Sequential LatencyStats
	Random     LatencyStats
}

// Result is the outcome of a probe.
type Result struct {
	Sizes []SizeResult
	// OptimalBlockSize is the first size whose KL is under the threshold,
	// or 0 if none is.
	OptimalBlockSize int64
	BytesWritten     int64
	Truncated        bool // the budget stopped the probe early
}

// Run probes t: it fills the region (unless SkipFill), then for each size
// issues the sequential pass (writes back to back from a random aligned
// offset, wrapping at the region's end) and the random pass (uniformly
// random size-aligned offsets), and compares their latency distributions.
func Run(ctx context.Context, t Target, o Options) (Result, error) {
	o.EnsureDefaults()
	r := &runner{t: t, o: o, rng: rand.New(rand.NewPCG(o.Seed, 0xb10c))}
	r.region = t.Size()
	if o.Region > 0 {
		r.region = min(r.region, o.Region)
	}
	r.region -= r.region % t.Alignment()
	if r.region < 2*o.Sizes[0] {
		return Result{}, fmt.Errorf("%w: %d bytes", ErrRegion, r.region)
	}
	err := r.run(ctx)
	return r.res, err
}

type runner struct {
	t      Target
	o      Options
	rng    *rand.Rand
	region int64
	res    Result
}

func (r *runner) run(ctx context.Context) error {
	if !r.o.SkipFill {
		if err := r.fill(ctx); err != nil {
			return err
		}
	}
	for _, size := range r.o.Sizes {
		if size%r.t.Alignment() != 0 || size > r.region/2 {
			continue
		}
		done, err := r.probeSize(ctx, size)
		if err != nil || done {
			return err
		}
	}
	return nil
}

// fill preconditions the region.
func (r *runner) fill(ctx context.Context) error {
	if !r.spend(r.region) {
		return nil
	}
	r.report(Progress{Phase: "fill", Total: 1})
	if f, ok := r.t.(Filler); ok {
		return f.Fill(ctx, 0, r.region)
	}
	return fillByWrites(ctx, r.t, 0, r.region)
}

// spend reserves n bytes of the budget, marking the result truncated when
// they are not available.
func (r *runner) spend(n int64) bool {
	if r.o.Budget > 0 && r.res.BytesWritten+n > r.o.Budget {
		r.res.Truncated = true
		return false
	}
	r.res.BytesWritten += n
	return true
}

// probeSize measures one size; done reports that the probe should stop.
func (r *runner) probeSize(ctx context.Context, size int64) (done bool, err error) {
	n := r.o.count(size)
	if !r.spend(2 * (r.o.Warmup/size*size + int64(n)*size)) {
		return true, nil
	}
	seq, err := r.pass(ctx, size, n, "sequential")
	if err != nil {
		return true, err
	}
	rnd, err := r.pass(ctx, size, n, "random")
	if err != nil {
		return true, err
	}
	sr := SizeResult{Size: size, Count: n, KL: KL(rnd, seq, r.o.BinsPerOctave),
		Sequential: summarize(seq), Random: summarize(rnd)}
	r.res.Sizes = append(r.res.Sizes, sr)
	r.report(Progress{Phase: "done", Size: size, Done: n, Total: n, Result: &sr})
	if r.res.OptimalBlockSize == 0 && sr.KL < r.o.Threshold {
		r.res.OptimalBlockSize = size
		return r.o.StopAtOptimal, nil
	}
	return false, nil
}

// pass issues the unmeasured warmup and then n measured writes of one
// pattern, returning their latencies.
func (r *runner) pass(ctx context.Context, size int64, n int, phase string) ([]time.Duration, error) {
	next := r.offsets(size, phase == "random")
	for range r.o.Warmup / size {
		if _, err := r.t.Write(ctx, next(), size); err != nil {
			return nil, err
		}
	}
	lat := make([]time.Duration, n)
	for i := range lat {
		d, err := r.t.Write(ctx, next(), size)
		if err != nil {
			return nil, err
		}
		lat[i] = d
		if i%64 == 63 || i == n-1 {
			r.report(Progress{Phase: phase, Size: size, Done: i + 1, Total: n})
		}
	}
	return lat, nil
}

// offsets returns a generator of the pattern's offsets.
func (r *runner) offsets(size int64, random bool) func() int64 {
	slots := r.region / size
	if random {
		return func() int64 { return r.rng.Int64N(slots) * size }
	}
	pos := r.rng.Int64N(slots)
	return func() int64 {
		off := pos * size
		if pos++; pos == slots {
			pos = 0
		}
		return off
	}
}

func (r *runner) report(p Progress) {
	if r.o.Progress != nil {
		r.o.Progress(p)
	}
}

// summarize computes a pass's latency statistics.
func summarize(lat []time.Duration) LatencyStats {
	s := slices.Clone(lat)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	pct := func(q float64) time.Duration { return s[min(int(q*float64(len(s))), len(s)-1)] }
	return LatencyStats{Mean: sum / time.Duration(len(s)), P50: pct(0.5), P99: pct(0.99), Max: s[len(s)-1]}
}
