package model

import (
	"sync"
	"time"

	"github.com/strata-media/strata/internal/storage/device"
)

// EmulatedOptions are the seams of an Emulated device.
type EmulatedOptions struct {
	// Now is the clock; default time.Now. The model's virtual time is
	// Now() minus the time the device was created.
	Now func() time.Time
	// Sleep waits; default time.Sleep.
	Sleep func(time.Duration)
}

func (o *EmulatedOptions) ensureDefaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = time.Sleep
	}
}

// Emulated is a device.Device whose data lives in an inner device and whose
// timing comes from a Model: each I/O is submitted to the model when it
// arrives (virtual time is wall time since the device was created) and the
// call returns no earlier than the model's completion time. Lifetime hints become write
// streams. It is safe for concurrent use; concurrent I/Os queue inside the
// model as they would on the device.
type Emulated struct {
	inner device.Device
	opts  EmulatedOptions
	start time.Time

	mu struct {
		sync.Mutex // protects the model and the fields below
		m          Model
		stream     int
	}
}

var (
	_ device.Device     = (*Emulated)(nil)
	_ device.BusySource = (*Emulated)(nil)
)

// NewEmulated wraps inner with m's timing. The model should be at least as
// large as inner; I/O beyond the model's size costs no model time.
func NewEmulated(inner device.Device, m Model, opts EmulatedOptions) *Emulated {
	opts.ensureDefaults()
	e := &Emulated{inner: inner, opts: opts, start: opts.Now()}
	e.mu.m = m
	return e
}

// Size returns the inner device's size.
func (e *Emulated) Size() int64 { return e.inner.Size() }

// Alignment returns the inner device's alignment.
func (e *Emulated) Alignment() int { return e.inner.Alignment() }

// ReadAt reads from the inner device and waits out the model's read time.
func (e *Emulated) ReadAt(p []byte, off int64) (int, error) {
	return e.timed(Read, off, int64(len(p)), func() (int, error) { return e.inner.ReadAt(p, off) })
}

// WriteAt writes to the inner device and waits out the model's write time.
func (e *Emulated) WriteAt(p []byte, off int64) (int, error) {
	return e.timed(Write, off, int64(len(p)), func() (int, error) { return e.inner.WriteAt(p, off) })
}

// Trim discards the range on the inner device and in the model.
func (e *Emulated) Trim(off, n int64) error {
	_, err := e.timed(Trim, off, n, func() (int, error) { return 0, e.inner.Trim(off, n) })
	return err
}

// Sync syncs the inner device; the models have no volatile write cache.
func (e *Emulated) Sync() error { return e.inner.Sync() }

// SetLifetime selects the write stream of later writes (none and not-set
// are stream 0, short 1, medium 2, long 3, extreme 4) and passes the hint
// on to the inner device, whose lack of support does not matter here.
func (e *Emulated) SetLifetime(l device.Lifetime) error {
	e.mu.Lock()
	e.mu.stream = StreamOf(l)
	e.mu.Unlock()
	_ = e.inner.SetLifetime(l)
	return nil
}

// StreamOf maps a lifetime class to a write stream: 0 for not-set and
// none, 1 to 4 for short to extreme (the four streams of MS §3.2).
func StreamOf(l device.Lifetime) int {
	if l < device.LifetimeShort || l > device.LifetimeExtreme {
		return 0
	}
	return int(l - device.LifetimeNone)
}

// Close closes the inner device.
func (e *Emulated) Close() error { return e.inner.Close() }

// Busy returns the model's cumulative busy time up to now, the emulated
// counterpart of the kernel's io_ticks.
func (e *Emulated) Busy() (time.Duration, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.mu.m.Busy(e.elapsed()), nil
}

// Model returns the wrapped model. Callers must not use it concurrently
// with the device.
func (e *Emulated) Model() Model { return e.mu.m }

// timed submits the I/O to the model at its arrival time, does the inner
// I/O, then sleeps until the model's completion time. Invalid arguments
// are rejected before the model sees them; an inner I/O that fails after
// that has still cost model time.
func (e *Emulated) timed(op Op, off, n int64, io func() (int, error)) (int, error) {
	if err := device.CheckAligned(off, n, e.inner.Alignment(), e.inner.Size()); err != nil {
		return 0, err
	}
	e.mu.Lock()
	done := e.mu.m.Submit(e.elapsed(), Request{Op: op, Offset: off, Length: n, Stream: e.mu.stream})
	e.mu.Unlock()
	k, err := io()
	if wait := done - e.elapsed(); wait > 0 {
		e.opts.Sleep(wait)
	}
	return k, err
}

// elapsed is the virtual time: time since the device was created.
func (e *Emulated) elapsed() time.Duration { return e.opts.Now().Sub(e.start) }
