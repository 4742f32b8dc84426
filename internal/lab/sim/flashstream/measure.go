package flashstream

import (
	"fmt"
	"math"
	"time"

	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/progress"
)

// Progress receives one line of progress (progress.To prints them).
type Progress = progress.Func

// fillCurve is how a system's flash cache filled during its warm-up.
type fillCurve struct {
	System  string    `json:"system"`
	Minutes []float64 `json:"minutes"`
	Fill    []float64 `json:"fill"`
	// FillMinutes is when the cache first held data in 99% of its space,
	// or -1 if it did not within the limit.
	FillMinutes float64 `json:"fill_minutes"`
	Rate        float64 `json:"rate"`
}

// maxResult is the outcome of a search for the highest request rate with
// no deadline miss (FlashStream §5.2).
type maxResult struct {
	System string  `json:"system"`
	MaxRPS float64 `json:"max_rps"`
	// SSDHitRatio and RAMHitRatio are AtMax's, at the top level for
	// readers of the JSON.
	SSDHitRatio float64 `json:"ssd_hit_ratio"`
	RAMHitRatio float64 `json:"ram_hit_ratio"`
	// AtMax is the trial at MaxRPS; its hit ratios are Fig. 7(b)'s.
	AtMax  Result   `json:"at_max"`
	Trials []Result `json:"trials"`
}

// bench is a built system in its loop.
type bench struct {
	Loop *des.Loop
	Cat  *des.Catalog
	Sys  system
}

// Build builds cfg in a new loop over the setup's dataset and starts it.
func (s *Setup) Build(cfg config) (*bench, error) {
	l := &des.Loop{}
	cat := des.NewCatalog(s.Dataset, 550e9)
	sys, err := cfg.Build(l, cat)
	if err != nil {
		return nil, fmt.Errorf("sim: %s: %w", cfg.Name, err)
	}
	sys.Start()
	return &bench{Loop: l, Cat: cat, Sys: sys}, nil
}

func (s *Setup) workload(rate float64, d time.Duration) Workload {
	return Workload{Rate: rate, Duration: d, Zipf: s.Zipf, Seed: s.Seed, MaxOutstanding: s.Scale.MaxOutstanding}
}

// Fill warms b up at rate until its flash cache is 99% full or limit
// passes, sampling the fill every minute (FlashStream §5.2's time to fill).
func (s *Setup) Fill(b *bench, rate float64, limit time.Duration, progress Progress) fillCurve {
	fc := fillCurve{System: b.Sys.Name(), FillMinutes: -1, Rate: rate}
	if b.Sys.SSD() == nil {
		// RAM only: §5.4 warms such systems for an hour.
		Run(b.Loop, b.Sys, b.Cat, s.workload(rate, min(limit, time.Hour)))
		return fc
	}
	start := b.Loop.Now()
	full := false
	b.Loop.Every(time.Minute, func() bool { return !full && b.Loop.Now()-start <= limit }, func() {
		f := b.Sys.Counters().SSDFilled
		m := (b.Loop.Now() - start).Minutes()
		fc.Minutes, fc.Fill = append(fc.Minutes, m), append(fc.Fill, f)
		if f >= 0.99 {
			full, fc.FillMinutes = true, m
		}
		if int(m)%60 == 0 {
			progress("%s: warm-up %.0f min, flash %.1f%% full", fc.System, m, 100*f)
		}
	})
	w := s.workload(rate, limit)
	w.Stop = func() bool { return full }
	Run(b.Loop, b.Sys, b.Cat, w)
	drain(b.Loop, b.Sys, 10*time.Minute)
	return fc
}

// FindMax searches the highest rate (to 1 request/s) at which a trial of
// the scale's length has no deadline miss: doubling from start while
// trials are clean, then bisecting. Trials run one after another on the
// warmed system, each after the previous one's I/O has drained.
func (s *Setup) FindMax(b *bench, start float64, progress Progress) maxResult {
	mr := maxResult{System: b.Sys.Name()}
	good, bad := 0.0, math.Inf(1)
	for rate := start; rate >= 1 && bad-good > 1; {
		r := Run(b.Loop, b.Sys, b.Cat, s.workload(rate, s.Scale.Trial))
		drain(b.Loop, b.Sys, 10*time.Minute)
		mr.Trials = append(mr.Trials, r)
		progress("%s: %.0f req/s: miss ratio %.4f, ssd hit %.3f, hdd util %.2f", mr.System, rate, r.MissRatio, r.SSDHitRatio, r.HDDUtil)
		if r.Misses == 0 {
			good, mr.MaxRPS, mr.AtMax = rate, rate, r
			mr.SSDHitRatio, mr.RAMHitRatio = r.SSDHitRatio, r.RAMHitRatio
		} else {
			bad = rate
		}
		rate = nextRate(good, bad)
	}
	return mr
}

// nextRate doubles while no trial failed, then bisects between the last
// clean and the first failing rate.
func nextRate(good, bad float64) float64 {
	if math.IsInf(bad, 1) {
		return 2 * good
	}
	return math.Floor((good + bad) / 2)
}
