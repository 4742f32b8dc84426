package tier

import "time"

// Signals are the inputs of an admission decision: what the feed knows
// about the flash device when it has a block ready to write.
type Signals struct {
	// Now is the current time.
	Now time.Duration
	// Utilization is the flash device's busy fraction over the last
	// completed epoch, in [0, 1] (FlashStream §4.4, from io_ticks).
	Utilization float64
	// ReadsWaiting is the number of flash reads issued and not yet done.
	ReadsWaiting int
	// ReadLatency is the mean time flash reads took over the last
	// completed epoch, queueing included (0 without reads).
	ReadLatency time.Duration
}

// An Admission decides whether the feed may write a block to flash now.
// Implementations are pure functions of their inputs and their own
// configuration, so the live server and the simulator decide alike.
type Admission interface {
	Admit(s Signals) bool
}

// DefaultThreshold is FlashStream's utilization threshold λ (§4.4).
const DefaultThreshold = 0.6

// The periods at which a driver runs the core, live or simulated.
const (
	// DefaultEpoch is the utilization epoch over which Signals.Utilization
	// is measured (FlashStream §4.4: 1 s).
	DefaultEpoch = time.Second
	// DefaultFeedPeriod is how often an idle feed asks Feed again for a
	// block that admission refused or that was not ready.
	DefaultFeedPeriod = 50 * time.Millisecond
	// DefaultMonitorPeriod is how often the RAM monitor runs (§3.2.1).
	DefaultMonitorPeriod = 100 * time.Millisecond
)

// Threshold is FlashStream's utilization-aware admission (§4.4): write
// only while the last epoch's utilization is below Max and, reads before
// writes, no flash read is waiting.
type Threshold struct {
	// Max is the utilization threshold, in (0, 1]; above 1 admits always.
	Max float64
	// IgnoreReads admits even while reads wait (the ZFS-like baseline,
	// which does not prioritize reads over writes).
	IgnoreReads bool
}

// Admit reports whether a caching write may be issued.
func (t Threshold) Admit(s Signals) bool {
	if s.ReadsWaiting > 0 && !t.IgnoreReads {
		return false
	}
	return s.Utilization < t.Max
}

// LatencyTarget is an adaptive admission beyond FlashStream (its §7 asks
// for dynamic indicators in place of the static threshold): it admits a
// caching write while no flash read waits and flash reads of the last epoch
// took less than Target on average, whatever the utilization. Utilization
// is a proxy for what matters, the delay writes add to reads; this measures
// that delay directly, so a device that absorbs writes without slowing
// reads is written at full speed, and one whose reads slow down is left
// alone until they recover.
type LatencyTarget struct {
	// Target is the mean read latency above which writes wait.
	Target time.Duration
}

// Admit reports whether a caching write may be issued.
func (l LatencyTarget) Admit(s Signals) bool {
	return s.ReadsWaiting == 0 && s.ReadLatency < l.Target
}

// SetAdmission replaces the admission policy (Options.Admission): the
// feed's next decision follows it. A nil a restores the default
// threshold. strata serve's config reload changes the threshold so.
func (c *Cache) SetAdmission(a Admission) {
	if a == nil {
		a = Threshold{Max: DefaultThreshold}
	}
	c.opts.Admission = a
}
