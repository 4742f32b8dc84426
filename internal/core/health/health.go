// Package health decides whether a device may be used: it marks a device's
// reads or writes degraded after consecutive failures, lets one probe
// through after a backoff that doubles while the probes keep failing, and
// marks them healthy again when a probe succeeds. It does no I/O and
// starts no goroutine: the driver reports each operation's outcome and
// passes the time in.
package health

import (
	"cmp"
	"time"
)

// An Op is the kind of operation whose health is tracked: reads and
// writes fail independently (a full device still reads).
type Op uint8

// Operations.
const (
	Read Op = iota
	Write
	numOps
)

// String returns "read" or "write".
func (o Op) String() string {
	if o == Write {
		return "write"
	}
	return "read"
}

// A Kind classifies a failure, for the counters.
type Kind uint8

// Kinds of failure.
const (
	// IOError is an error the device returned (EIO, a torn write).
	IOError Kind = iota
	// NoSpace is ENOSPC.
	NoSpace
	// Timeout is an operation past its deadline (a stalled device).
	Timeout
	numKinds
)

var kindNames = [numKinds]string{"io", "nospace", "timeout"}

// String returns "io", "nospace" or "timeout".
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "unknown"
}

// Kinds lists every kind, in order.
func Kinds() []Kind { return []Kind{IOError, NoSpace, Timeout} }

// Defaults of Options.
const (
	DefaultFailAfter  = 3
	DefaultBackoff    = time.Second
	DefaultMaxBackoff = 30 * time.Second
)

// Options configure a Monitor. Zero fields take the defaults of
// EnsureDefaults.
type Options struct {
	// FailAfter is how many consecutive failures of an operation mark it
	// degraded. Default 3: one bad sector or one slow read is not a
	// failing device.
	FailAfter int
	// Backoff is the time from the failure that marks an operation
	// degraded to its first probe. Default 1 s.
	Backoff time.Duration
	// MaxBackoff caps the backoff, which doubles after each failed
	// probe. It also bounds how long a probe may stay unreported before
	// another is let through. Default 30 s.
	MaxBackoff time.Duration
}

// EnsureDefaults fills zero fields with defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.FailAfter <= 0 {
		o.FailAfter = DefaultFailAfter
	}
	o.Backoff = cmp.Or(o.Backoff, DefaultBackoff)
	o.MaxBackoff = max(cmp.Or(o.MaxBackoff, DefaultMaxBackoff), o.Backoff)
	return o
}

// A Monitor is the health of one device's reads and writes. It is not safe
// for concurrent use: the driver serializes its calls.
type Monitor struct {
	opts Options
	ops  [numOps]opState
}

type opState struct {
	fails    int // consecutive failures
	degraded bool
	since    time.Duration // when it was marked degraded
	backoff  time.Duration // current backoff while degraded
	next     time.Duration // earliest next probe while degraded
	probing  bool
	probeAt  time.Duration // when the probe in flight was let through
	ok       uint64
	errors   [numKinds]uint64
	probes   uint64
	recovery uint64
	starved  uint64 // timeouts excused: the process was starved of CPU
}

// New returns a Monitor with both operations healthy.
func New(opts Options) *Monitor {
	opts.EnsureDefaults()
	return &Monitor{opts: opts}
}

// Options returns the options in effect.
func (m *Monitor) Options() Options { return m.opts }

// Admit reports whether op may go to the device at now: always while it
// is healthy; while it is degraded, once per backoff, as a probe (probe is
// then true). The driver must report a probe's outcome with Succeeded or
// Failed, or with Abort if it did not issue it after all.
func (m *Monitor) Admit(op Op, now time.Duration) (ok, probe bool) {
	s := &m.ops[op]
	if !s.degraded {
		return true, false
	}
	if s.probing && now-s.probeAt < m.opts.MaxBackoff {
		return false, false
	}
	if now < s.next {
		return false, false
	}
	s.probing, s.probeAt = true, now
	s.probes++
	return true, true
}

// Abort withdraws a probe that Admit let through but the driver did not
// issue (the feed had no block to write): the next Admit may probe.
func (m *Monitor) Abort(op Op) { m.ops[op].probing = false }

// Succeeded records an operation that completed in time. A probe's
// success marks op healthy again; an operation let through before op was
// marked degraded changes nothing but the counts.
func (m *Monitor) Succeeded(op Op, probe bool, now time.Duration) {
	s := &m.ops[op]
	s.ok++
	if s.degraded && !probe {
		return
	}
	if s.degraded {
		s.recovery++
	}
	s.fails, s.degraded, s.probing, s.backoff = 0, false, false, 0
}

// Failed records a failure of kind k. The FailAfter-th consecutive
// failure marks op degraded, with a first probe Backoff later; a failed
// probe doubles the backoff, up to MaxBackoff.
func (m *Monitor) Failed(op Op, k Kind, probe bool, now time.Duration) {
	s := &m.ops[op]
	if k < numKinds {
		s.errors[k]++
	}
	s.fails++
	switch {
	case s.degraded && probe:
		s.probing = false
		s.backoff = min(2*s.backoff, m.opts.MaxBackoff)
		s.next = now + s.backoff
	case !s.degraded && s.fails >= m.opts.FailAfter:
		s.degraded, s.since, s.probing = true, now, false
		s.backoff = m.opts.Backoff
		s.next = now + s.backoff
	}
}

// StarvedShare decides whether an operation past its deadline is the
// device's doing: it is not when the process's own scheduling latency
// over the same time (how long its runnable goroutines waited for a CPU)
// was at least deadline/StarvedShare. A read's time is measured from the
// process, so it includes the wait for a CPU after the device has
// answered; on a process starved of CPU (a server at or past its
// capacity) that wait, not the device, makes reads late, and calling the
// device degraded then would send every flash hit to the capacity tier,
// which costs far more CPU than the read: the overload would feed
// itself. A stalled device is still a timeout as soon as the process
// gets its CPU back, and its reads stop at their deadline either way.
const StarvedShare = 4

// Starved reports whether a scheduling latency of lag excuses an
// operation past deadline (see StarvedShare).
func Starved(lag, deadline time.Duration) bool {
	return lag > 0 && deadline > 0 && lag*StarvedShare >= deadline
}

// Late records an operation past its deadline while the process's
// scheduling latency was lag. It is a Timeout failure (Failed) unless
// Starved(lag, deadline): then it is counted as starved and changes
// nothing else, but for a probe, which is withdrawn and due again one
// backoff later (not doubled: the device was not found late). It
// reports whether the lateness was excused.
func (m *Monitor) Late(op Op, probe bool, now, lag, deadline time.Duration) (excused bool) {
	if !Starved(lag, deadline) {
		m.Failed(op, Timeout, probe, now)
		return false
	}
	s := &m.ops[op]
	s.starved++
	if s.degraded && probe {
		s.probing = false
		s.next = now + s.backoff
	}
	return true
}

// Degraded reports whether reads or writes are degraded.
func (m *Monitor) Degraded() bool { return m.ops[Read].degraded || m.ops[Write].degraded }

// OpReport is the health of one operation.
type OpReport struct {
	// Degraded is set while the operation is not used but to probe.
	Degraded bool `json:"degraded"`
	// DegradedFor is how long it has been degraded.
	DegradedFor time.Duration `json:"degraded_for_ns,omitempty"`
	// NextProbeIn is the time to the next probe while degraded (0: due).
	NextProbeIn time.Duration `json:"next_probe_in_ns,omitempty"`
	// ConsecutiveFailures counts the failures since the last success.
	ConsecutiveFailures int `json:"consecutive_failures"`
	// Succeeded counts the operations that completed in time.
	Succeeded uint64 `json:"succeeded"`
	// Errors counts failures by kind ("io", "nospace", "timeout").
	Errors map[string]uint64 `json:"errors"`
	// Probes counts the probes let through while degraded.
	Probes uint64 `json:"probes"`
	// Recoveries counts the probes that marked the operation healthy.
	Recoveries uint64 `json:"recoveries"`
	// Starved counts the operations past their deadline that were not
	// counted as timeouts: the process was starved of CPU (Late).
	Starved uint64 `json:"starved_timeouts"`
}

// Report is the health of a device's reads and writes.
type Report struct {
	Degraded bool     `json:"degraded"`
	Read     OpReport `json:"read"`
	Write    OpReport `json:"write"`
}

// Report returns the health at now.
func (m *Monitor) Report(now time.Duration) Report {
	return Report{Degraded: m.Degraded(), Read: m.report(Read, now), Write: m.report(Write, now)}
}

func (m *Monitor) report(op Op, now time.Duration) OpReport {
	s := &m.ops[op]
	r := OpReport{Degraded: s.degraded, ConsecutiveFailures: s.fails, Succeeded: s.ok,
		Errors: make(map[string]uint64, numKinds), Probes: s.probes, Recoveries: s.recovery, Starved: s.starved}
	for k, n := range s.errors {
		r.Errors[kindNames[k]] = n
	}
	if s.degraded {
		r.DegradedFor, r.NextProbeIn = now-s.since, max(s.next-now, 0)
	}
	return r
}
