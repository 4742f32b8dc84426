package feed

import (
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/strata-media/strata/internal/core/health"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/store"
)

// ErrDeadline is a flash read that did not complete within its deadline:
// the request was served from the next tier.
var ErrDeadline = errors.New("feed: flash read past its deadline")

// Defaults of HealthOptions.
const (
	DefaultSlowWrite    = 2 * time.Second
	DefaultMaxLateReads = 16
)

// HealthOptions configure a Health.
type HealthOptions struct {
	// Monitor is the core's thresholds and backoff.
	Monitor health.Options
	// SlowWrite is how long a block write (and its sync) may take before
	// it counts as a timeout for the device's health, though its data is
	// kept. Default 2 s: a 1 MiB block takes milliseconds on any SSD.
	SlowWrite time.Duration
	// MaxLateReads caps the reads abandoned at their deadline that the
	// device may still hold: past it, reads are not issued (served from
	// the next tier) until some return, so that a device that hangs for
	// good holds a bounded number of goroutines and buffers. Default 16.
	MaxLateReads int
	// Now is the monitor's clock. Nil: the time since NewHealth.
	Now func() time.Duration
}

// Health is the live driver of one device's health.Monitor: the engine
// asks it before each flash read and the feed before each block write,
// and reports every outcome; the monitor decides. It is safe for
// concurrent use.
type Health struct {
	name      string
	now       func() time.Duration
	slowWrite time.Duration
	maxLate   int64

	mu struct {
		sync.Mutex // protects m
		m          *health.Monitor
	}
	late    atomic.Int64  // reads past their deadline still running on the device
	skipped atomic.Uint64 // reads not issued because reads are degraded
}

// NewHealth returns the health of the device called name, healthy.
func NewHealth(name string, o HealthOptions) *Health {
	if o.Now == nil {
		start := time.Now()
		o.Now = func() time.Duration { return time.Since(start) }
	}
	if o.SlowWrite <= 0 {
		o.SlowWrite = DefaultSlowWrite
	}
	if o.MaxLateReads <= 0 {
		o.MaxLateReads = DefaultMaxLateReads
	}
	h := &Health{name: name, now: o.Now, slowWrite: o.SlowWrite, maxLate: int64(o.MaxLateReads)}
	h.mu.m = health.New(o.Monitor)
	return h
}

// Admit reports whether op may be issued now, and whether it is the
// probe of a degraded device (see health.Monitor.Admit). A read is also
// refused while MaxLateReads are late. A refused read is counted as
// skipped.
func (h *Health) Admit(op health.Op) (ok, probe bool) {
	if op == health.Read && h.late.Load() >= h.maxLate {
		h.skipped.Add(1)
		return false, false
	}
	h.mu.Lock()
	ok, probe = h.mu.m.Admit(op, h.now())
	h.mu.Unlock()
	if !ok && op == health.Read {
		h.skipped.Add(1)
	}
	return ok, probe
}

// probeDue reports whether op is degraded and its probe is due now, and
// if so takes the probe: the caller must report it with Done.
func (h *Health) probeDue(op health.Op) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ok, probe := h.mu.m.Admit(op, h.now())
	return ok && probe
}

// Abort withdraws a probe that was not issued.
func (h *Health) Abort(op health.Op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mu.m.Abort(op)
}

// Done reports an operation's outcome. A record that did not verify is
// not the device's fault (a torn or stale record): it counts as an
// answer.
func (h *Health) Done(op health.Op, probe bool, err error) {
	kind, failed := classify(err)
	h.mu.Lock()
	defer h.mu.Unlock()
	if failed {
		h.mu.m.Failed(op, kind, probe, h.now())
	} else {
		h.mu.m.Succeeded(op, probe, h.now())
	}
}

// Timeout reports an operation abandoned at its deadline while the
// process's scheduling latency was lag: a timeout of the device unless
// the process was starved of CPU (health.Monitor.Late decides).
func (h *Health) Timeout(op health.Op, probe bool, lag, deadline time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mu.m.Late(op, probe, h.now(), lag, deadline)
}

// classify maps an I/O error to a kind of failure, and reports whether
// it is one.
func classify(err error) (health.Kind, bool) {
	switch {
	case err == nil, errors.Is(err, store.ErrMismatch), errors.Is(err, tier.ErrCorrupt):
		return 0, false
	case errors.Is(err, syscall.ENOSPC):
		return health.NoSpace, true
	case errors.Is(err, ErrDeadline):
		return health.Timeout, true
	}
	return health.IOError, true
}

// Late counts a read abandoned at its deadline (d = 1) or one that has
// since returned (d = -1).
func (h *Health) Late(d int64) { h.late.Add(d) }

// written reports a block write that took d.
func (h *Health) written(probe bool, d time.Duration, err error) {
	if err == nil && d > h.slowWrite {
		err = ErrDeadline
	}
	h.Done(health.Write, probe, err)
}

// DeviceReport is a device's health as /readyz, /stats and the metrics
// show it.
type DeviceReport struct {
	// Device names the device ("segments").
	Device string `json:"device"`
	health.Report
	// LateReads counts reads abandoned at their deadline that the device
	// has not completed yet.
	LateReads int64 `json:"late_reads"`
	// SkippedReads counts reads served from the next tier without trying
	// the device: its reads were degraded, or MaxLateReads were late.
	SkippedReads uint64 `json:"skipped_reads"`
	// ReadLimit is how many flash hits may read the device at once now
	// (health.Limit: lower while its reads wait in its queue), HitsReading
	// how many do, and ShedReads counts the hits it turned away, served
	// from the next tier: an overloaded device, not a failing one. Set by
	// the engine, which keeps the limit.
	ReadLimit   int    `json:"read_limit"`
	HitsReading int64  `json:"hits_reading"`
	ShedReads   uint64 `json:"shed_reads"`
}

// Report returns the device's health now.
func (h *Health) Report() DeviceReport {
	h.mu.Lock()
	r := h.mu.m.Report(h.now())
	h.mu.Unlock()
	return DeviceReport{Device: h.name, Report: r, LateReads: h.late.Load(), SkippedReads: h.skipped.Load()}
}
