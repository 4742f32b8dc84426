package device

import (
	"sync"
	"time"
)

// A FractionBusy is a BusySource busy a settable fraction of the time that
// passes (the fake time, in a synctest bubble): a scripted device load for
// tests and demos of utilization-aware admission.
type FractionBusy struct {
	mu   sync.Mutex // protects the fields below
	frac float64
	last time.Time
	acc  time.Duration
}

// NewFractionBusy returns a source busy frac of the time, in [0, 1].
func NewFractionBusy(frac float64) *FractionBusy { return &FractionBusy{frac: frac} }

// Set makes the source busy frac of the time from now on.
func (b *FractionBusy) Set(frac float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.accrueLocked(time.Now())
	b.frac = frac
}

// Busy returns the busy time accrued since the first call.
func (b *FractionBusy) Busy() (time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.accrueLocked(time.Now())
	return b.acc, nil
}

func (b *FractionBusy) accrueLocked(now time.Time) {
	if !b.last.IsZero() {
		b.acc += time.Duration(float64(now.Sub(b.last)) * b.frac)
	}
	b.last = now
}
