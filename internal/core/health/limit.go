package health

import "time"

// Defaults of LimitOptions.
const (
	DefaultLimitTarget = 25 * time.Millisecond
	DefaultLimitWindow = 100 * time.Millisecond
	DefaultLimitMin    = 4
	DefaultLimitMax    = 1024
)

// LimitOptions configure a Limit. Zero fields take the defaults of
// EnsureDefaults.
type LimitOptions struct {
	// Target is the time a read may spend on the device before the
	// device counts as overloaded: when the reads that ended in a window
	// took longer than it on average, the limit falls. Default 25 ms, a
	// tenth of the flash read deadline: an SSD reads a segment in 1 to 5
	// ms, so a read that takes five times that or more waited in the
	// device's queue. A negative Target turns the limit off.
	Target time.Duration
	// Window is how often the limit moves, from the reads that ended in
	// it. Default 100 ms: a loaded device ends tens of reads in it, and
	// a block-layer throttle dispatches in slices of that length.
	Window time.Duration
	// Min and Max bound the limit. Defaults 4 and 1024: the limit never
	// sheds the reads of a device that answers slowly for its own
	// reasons below four at once (the health monitor's business), and
	// starts at Max, where it sheds nothing.
	Min, Max int
}

// EnsureDefaults fills zero fields with defaults and returns o.
func (o *LimitOptions) EnsureDefaults() *LimitOptions {
	if o.Target == 0 {
		o.Target = DefaultLimitTarget
	}
	if o.Window <= 0 {
		o.Window = DefaultLimitWindow
	}
	if o.Min <= 0 {
		o.Min = DefaultLimitMin
	}
	if o.Max <= 0 {
		o.Max = DefaultLimitMax
	}
	o.Max = max(o.Max, o.Min)
	return o
}

// A Limit bounds the reads a device serves at once while it is
// overloaded, so that a device that is the bottleneck serves what it can
// within its deadline and the rest goes to the next tier at once, rather
// than every read waiting in its queue until they pass the deadline
// together and the health monitor marks the device degraded for all of
// them. It moves as TCP's congestion window does: down by a quarter
// after each window whose reads took longer than Target on average, up
// by an eighth (one at least) after each window whose reads were within
// it while the limit turned some away; a window where it turned none
// away, or where no read ended (a device that hangs is the health
// monitor's), leaves it, so that it does not climb without evidence. It does
// no I/O: the driver asks Admit before each read with the reads in
// flight, reports each read's time with Done, and passes the time in.
type Limit struct {
	o     LimitOptions
	limit int

	start   time.Duration // the window's start
	n       int           // reads ended in the window
	took    time.Duration // their total time
	refused bool          // the limit turned a read away in the window

	shed uint64
}

// NewLimit returns a limit at o.Max.
func NewLimit(o LimitOptions) *Limit {
	o.EnsureDefaults()
	return &Limit{o: o, limit: o.Max}
}

// Admit reports whether a read may be issued with inflight reads in
// flight (not counting it). A refused read is counted as shed: the
// driver serves it from the next tier.
func (l *Limit) Admit(inflight int, now time.Duration) bool {
	if l.o.Target < 0 {
		return true
	}
	l.roll(now)
	if inflight < l.limit {
		return true
	}
	l.refused = true
	l.shed++
	return false
}

// Done reports a read that took took, ending at now.
func (l *Limit) Done(took, now time.Duration) {
	if l.o.Target < 0 {
		return
	}
	l.roll(now)
	l.n++
	l.took += took
}

// roll closes the window if now is past it and moves the limit.
func (l *Limit) roll(now time.Duration) {
	if now-l.start < l.o.Window {
		return
	}
	switch {
	case l.n > 0 && l.took/time.Duration(l.n) > l.o.Target:
		l.limit = max(l.o.Min, l.limit-max(1, l.limit/4))
	case l.refused && l.n > 0:
		l.limit = min(l.o.Max, l.limit+max(1, l.limit/8))
	}
	l.start, l.n, l.took, l.refused = now, 0, 0, false
}

// LimitReport is a Limit's state for /stats.
type LimitReport struct {
	// Limit is the reads the device may serve at once now.
	Limit int `json:"limit"`
	// Shed counts the reads turned away: served from the next tier.
	Shed uint64 `json:"shed"`
}

// Report returns the limit's state.
func (l *Limit) Report() LimitReport { return LimitReport{Limit: l.limit, Shed: l.shed} }
