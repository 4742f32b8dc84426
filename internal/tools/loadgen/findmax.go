package loadgen

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Defaults for SearchOptions' zero fields.
const (
	// DefaultTolerance: bisection stops when the bracket is within 5% of
	// the highest clean rate.
	DefaultTolerance = 0.05
	// DefaultMinStep: or within 1 request/s.
	DefaultMinStep = 1.0
	// DefaultMaxTrials bounds a search.
	DefaultMaxTrials = 30
)

// SearchOptions tune FindMax.
type SearchOptions struct {
	// Tolerance stops the bisection once the failing rate is within
	// Tolerance (a fraction) of the highest clean rate. Default 0.05.
	Tolerance float64
	// MinStep also stops it once the bracket is this narrow, in
	// requests/s. Default 1.
	MinStep float64
	// MaxTrials bounds the number of trials. Default 30.
	MaxTrials int
	// OnTrial, if set, is called after each trial.
	OnTrial func(Trial)
	// FreshSeeds gives trial i (from 0) the seed Config.Seed + i, so a
	// cache under test does not see the earlier trials' requests again.
	// Default false: every trial replays the same sequence.
	FreshSeeds bool
	// Confirm, if set, runs the rate found once more for this long (a
	// run as long as the one the rate is for, rather than a short
	// trial): a rate that misses then is not the maximum, and the
	// search steps down by Tolerance until a confirming run is clean
	// (within MaxTrials in all). Zero: no confirmation.
	Confirm time.Duration
}

// EnsureDefaults fills the zero fields of o with their defaults.
func (o *SearchOptions) EnsureDefaults() {
	if o.Tolerance == 0 {
		o.Tolerance = DefaultTolerance
	}
	if o.MinStep == 0 {
		o.MinStep = DefaultMinStep
	}
	if o.MaxTrials == 0 {
		o.MaxTrials = DefaultMaxTrials
	}
}

// Trial is one run of a FindMax search.
type Trial struct {
	// RateRPS is the trial's request rate.
	RateRPS float64 `json:"rate_rps"`
	// Clean is true when the trial sent requests and none missed.
	Clean         bool    `json:"clean"`
	Requests      int     `json:"requests"`
	Errors        int     `json:"errors"`
	Misses        int     `json:"misses"`
	MissRatio     float64 `json:"miss_ratio"`
	ThroughputRPS float64 `json:"throughput_rps"`
	P50Ms         float64 `json:"p50_ms"`
	P99Ms         float64 `json:"p99_ms"`
	MaxMs         float64 `json:"max_ms"`
	// ErrorKinds counts the trial's errors by kind (Report.ErrorKinds):
	// what failed near the maximum, where a few dozen errors decide it.
	ErrorKinds map[string]int `json:"error_kinds,omitempty"`
	// Confirm marks a run of SearchOptions.Confirm at the rate found.
	Confirm bool `json:"confirm,omitempty"`
	// Report is the trial's full report.
	Report Report `json:"-"`
}

// MaxResult is the outcome of FindMax.
type MaxResult struct {
	// MaxRPS is the highest rate that ran with 0% misses, 0 if none did.
	MaxRPS float64 `json:"max_rps"`
	// FailRPS is the lowest rate that missed, 0 if none did.
	FailRPS float64 `json:"fail_rps"`
	// Converged is true when the bracket closed within the tolerance
	// before MaxTrials ran out.
	Converged bool `json:"converged"`
	// Confirmed is true when a run of SearchOptions.Confirm at MaxRPS
	// was clean.
	Confirmed bool `json:"confirmed,omitempty"`
	// Trials lists the trials in the order they ran, confirming runs
	// included (Trial.Confirm).
	Trials []Trial `json:"trials"`
}

// FindMax searches for the highest request rate the server sustains with
// 0% segment misses (FlashStream §5.2's figure of merit). It starts at
// cfg.Rate and doubles the rate while trials are clean, then bisects
// between the last clean and the first failing rate until they are within
// opt.Tolerance (or opt.MinStep). Each trial is one run of cfg (its
// Warmup then its Duration). On cancellation it returns what it found so
// far with an error wrapping ctx.Err().
func FindMax(ctx context.Context, cfg Config, opt SearchOptions) (MaxResult, error) {
	opt.EnsureDefaults()
	if !(opt.Tolerance > 0) || !(opt.MinStep > 0) || opt.MaxTrials < 1 {
		return MaxResult{}, fmt.Errorf("%w: search tolerance, min step and max trials must be > 0", ErrConfig)
	}
	s, err := newSession(ctx, cfg)
	if err != nil {
		return MaxResult{}, err
	}
	defer s.close()
	return s.search(ctx, opt)
}

// search runs the trials of FindMax.
func (s *session) search(ctx context.Context, opt SearchOptions) (MaxResult, error) {
	seed, dur, n := s.cfg.Seed, s.cfg.Duration, uint64(0)
	defer func() { s.cfg.Seed, s.cfg.Duration = seed, dur }()
	return search(ctx, s.cfg.Rate, opt, func(ctx context.Context, rate float64, confirm bool) (Trial, error) {
		if opt.FreshSeeds {
			s.cfg.Seed = seed + n
			n++
		}
		s.cfg.Duration = dur
		if confirm {
			s.cfg.Duration = opt.Confirm
		}
		t, err := s.trial(ctx, rate)
		t.Confirm = confirm
		return t, err
	})
}

// search runs trials from rate on until the bracket closes, then the
// confirming runs (opt.Confirm); trial runs one rate, a confirming run
// if confirm.
func search(ctx context.Context, rate float64, opt SearchOptions, trial func(ctx context.Context, rate float64, confirm bool) (Trial, error)) (MaxResult, error) {
	var res MaxResult
	n := 0
	for n < opt.MaxTrials {
		t, err := trial(ctx, rate, false)
		n++
		if err != nil {
			return res, err
		}
		res.add(t, opt.OnTrial)
		if res.narrow(opt) {
			res.Converged = true
			break
		}
		rate = res.next()
	}
	if opt.Confirm <= 0 || !res.Converged {
		return res, nil
	}
	// The rate found held for one short trial; the run it is for is
	// longer, on a machine whose other load varies. Step down until a
	// run as long is clean.
	for rate = res.MaxRPS; rate > 0 && n < opt.MaxTrials; n++ {
		t, err := trial(ctx, rate, true)
		if err != nil {
			return res, err
		}
		res.Trials = append(res.Trials, t)
		if opt.OnTrial != nil {
			opt.OnTrial(t)
		}
		if t.Clean {
			res.MaxRPS, res.Confirmed = rate, true
			return res, nil
		}
		res.FailRPS = rate
		rate = math.Floor(rate * (1 - opt.Tolerance))
	}
	// None held: the search's answer stands, unconfirmed.
	return res, nil
}

// trial runs rate once.
func (s *session) trial(ctx context.Context, rate float64) (Trial, error) {
	rep, err := s.run(ctx, rate)
	if err != nil {
		return Trial{}, err
	}
	return Trial{RateRPS: rate, Clean: rep.Requests > 0 && rep.Misses == 0,
		Requests: rep.Requests, Errors: rep.Errors, Misses: rep.Misses,
		MissRatio: rep.MissRatio, ThroughputRPS: rep.ThroughputRPS,
		P50Ms: rep.P50Ms, P99Ms: rep.P99Ms, MaxMs: rep.MaxMs, ErrorKinds: rep.ErrorKinds, Report: rep}, nil
}

// add records a trial and moves the bracket [MaxRPS, FailRPS].
func (m *MaxResult) add(t Trial, onTrial func(Trial)) {
	m.Trials = append(m.Trials, t)
	if t.Clean {
		m.MaxRPS = t.RateRPS
	} else {
		m.FailRPS = t.RateRPS
	}
	if onTrial != nil {
		onTrial(t)
	}
}

// narrow reports whether the bracket is closed within the tolerance.
func (m *MaxResult) narrow(opt SearchOptions) bool {
	if m.FailRPS == 0 {
		return false
	}
	return m.FailRPS-m.MaxRPS <= math.Max(opt.Tolerance*m.MaxRPS, opt.MinStep)
}

// next is the rate of the next trial: double while no trial failed, then
// the middle of the bracket.
func (m *MaxResult) next() float64 {
	if m.FailRPS == 0 {
		return 2 * m.MaxRPS
	}
	return (m.MaxRPS + m.FailRPS) / 2
}
