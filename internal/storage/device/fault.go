package device

import (
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"time"
)

// An Op is a set of device operations, the target of a fault.
type Op uint8

// Operations a Fault can fail or delay.
const (
	OpRead Op = 1 << iota
	OpWrite
	OpTrim
	OpSync

	numOps = iota
)

// OpAll is every operation.
const OpAll = OpRead | OpWrite | OpTrim | OpSync

var opNames = [numOps]string{"read", "write", "trim", "sync"}

// String returns the operation names joined by "|", e.g. "read|write".
func (o Op) String() string {
	var names []string
	for i, n := range opNames {
		if o&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

// A faultRule fails operations in ops: count more of them (or all, if
// count < 0), only those overlapping [off, off+n) when ranged.
type faultRule struct {
	ops    Op
	count  int
	ranged bool
	off, n int64
	err    error // the cause the failure wraps besides ErrInjected; nil: none
}

func (r *faultRule) matches(op Op, off, n int64) bool {
	if r.ops&op == 0 {
		return false
	}
	return !r.ranged || (off < r.off+r.n && r.off < off+n)
}

// A Fault wraps a Device and injects failures, latency, torn writes and
// corrupted reads, configured while it runs. Injected failures return
// errors wrapping ErrInjected. It is safe for concurrent use.
type Fault struct {
	inner Device

	mu struct {
		sync.Mutex // protects everything below
		rules      []faultRule
		latency    [numOps]time.Duration
		sleep      func(time.Duration)
		tear       int64 // offset of the pending torn write, or -1
		tearAll    bool  // tear every write, until Reset
		corrupt    []faultRule
		injected   int64
	}
}

var _ Device = (*Fault)(nil)

// NewFault returns a Fault over inner that injects nothing until told to.
func NewFault(inner Device) *Fault {
	f := &Fault{inner: inner}
	f.Reset()
	return f
}

// Reset removes every configured fault and latency, and restores
// time.Sleep. The Injected count is kept.
func (f *Fault) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.rules, f.mu.corrupt = nil, nil
	f.mu.latency = [numOps]time.Duration{}
	f.mu.sleep = time.Sleep
	f.mu.tear = -1
	f.mu.tearAll = false
}

// FailAll makes every operation in ops fail, until Reset.
func (f *Fault) FailAll(ops Op) { f.addRule(faultRule{ops: ops, count: -1}) }

// FailAllWith makes every operation in ops fail with an error wrapping
// both ErrInjected and err (syscall.ENOSPC, syscall.EIO: what a real
// device returns), until Reset.
func (f *Fault) FailAllWith(ops Op, err error) { f.addRule(faultRule{ops: ops, count: -1, err: err}) }

// FailNext makes the next n operations in ops fail (n <= 0 does nothing).
func (f *Fault) FailNext(ops Op, n int) {
	if n > 0 {
		f.addRule(faultRule{ops: ops, count: n})
	}
}

// FailRange makes the reads, writes and trims in ops that overlap
// [off, off+n) fail, until Reset.
func (f *Fault) FailRange(ops Op, off, n int64) {
	f.addRule(faultRule{ops: ops &^ OpSync, count: -1, ranged: true, off: off, n: n})
}

func (f *Fault) addRule(r faultRule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.rules = append(f.mu.rules, r)
}

// SetLatency makes every operation in ops sleep for d before it runs.
func (f *Fault) SetLatency(ops Op, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.mu.latency {
		if ops&(1<<i) != 0 {
			f.mu.latency[i] = d
		}
	}
}

// SetSleep replaces the function that sleeps for latency (time.Sleep by
// default; nil restores it), so tests can record or fake the delays.
func (f *Fault) SetSleep(sleep func(time.Duration)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.sleep = sleep
	if sleep == nil {
		f.mu.sleep = time.Sleep
	}
}

// TearWriteAt makes the next write that covers byte off write only its
// bytes before off rounded down to the alignment, then fail with an error
// wrapping ErrInjected, as if the machine lost power mid-write. It replaces
// an earlier pending tear.
func (f *Fault) TearWriteAt(off int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.tear = max(off, 0)
}

// TearWrites makes every write, until Reset, write only its first half
// (rounded down to the alignment) and fail with an error wrapping
// ErrInjected: a device that keeps losing writes midway.
func (f *Fault) TearWrites() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.tearAll = true
}

// CorruptReads makes every successful read overlapping [off, off+n) return
// the first byte of the overlap with all its bits flipped, until Reset. The
// device's contents are unchanged.
func (f *Fault) CorruptReads(off, n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.corrupt = append(f.mu.corrupt, faultRule{ops: OpRead, ranged: true, off: off, n: n})
}

// Injected returns how many faults (failures, tears and corruptions) have
// been injected.
func (f *Fault) Injected() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.injected
}

// Size returns the inner device's size.
func (f *Fault) Size() int64 { return f.inner.Size() }

// Alignment returns the inner device's alignment.
func (f *Fault) Alignment() int { return f.inner.Alignment() }

// ReadAt reads from the inner device, unless a fault fails it first.
func (f *Fault) ReadAt(p []byte, off int64) (int, error) {
	if err := f.before(OpRead, off, int64(len(p))); err != nil {
		return 0, err
	}
	n, err := f.inner.ReadAt(p, off)
	if err == nil {
		f.corruptRead(p, off)
	}
	return n, err
}

// WriteAt writes to the inner device, unless a fault fails or tears it.
func (f *Fault) WriteAt(p []byte, off int64) (int, error) {
	if err := f.before(OpWrite, off, int64(len(p))); err != nil {
		return 0, err
	}
	if cut, ok := f.takeTear(off, int64(len(p))); ok {
		return f.tornWrite(p, off, cut)
	}
	return f.inner.WriteAt(p, off)
}

// Trim trims the inner device, unless a fault fails it first.
func (f *Fault) Trim(off, n int64) error {
	if err := f.before(OpTrim, off, n); err != nil {
		return err
	}
	return f.inner.Trim(off, n)
}

// Sync syncs the inner device, unless a fault fails it first.
func (f *Fault) Sync() error {
	if err := f.before(OpSync, 0, 0); err != nil {
		return err
	}
	return f.inner.Sync()
}

// SetLifetime passes the class to the inner device.
func (f *Fault) SetLifetime(l Lifetime) error { return f.inner.SetLifetime(l) }

// Close closes the inner device.
func (f *Fault) Close() error { return f.inner.Close() }

// before applies op's latency and returns an injected error if a rule
// matches [off, off+n).
func (f *Fault) before(op Op, off, n int64) error {
	f.mu.Lock()
	d, sleep := f.mu.latency[bits.TrailingZeros8(uint8(op))], f.mu.sleep
	hit, cause := f.matchLocked(op, off, n)
	f.mu.Unlock()
	if d > 0 {
		sleep(d)
	}
	switch {
	case hit && cause != nil:
		return fmt.Errorf("%w: %s at %d length %d: %w", ErrInjected, op, off, n, cause)
	case hit:
		return fmt.Errorf("%w: %s at %d length %d", ErrInjected, op, off, n)
	}
	return nil
}

// matchLocked reports whether a rule fails op, and the rule's cause,
// consuming one use of a counted rule.
func (f *Fault) matchLocked(op Op, off, n int64) (bool, error) {
	for i := range f.mu.rules {
		r := &f.mu.rules[i]
		if !r.matches(op, off, n) {
			continue
		}
		if r.count > 0 {
			if r.count--; r.count == 0 {
				f.mu.rules = append(f.mu.rules[:i], f.mu.rules[i+1:]...)
			}
		}
		f.mu.injected++
		return true, r.err
	}
	return false, nil
}

// takeTear consumes the pending tear if a valid write of n bytes at off
// covers it, and returns how many leading bytes to write.
func (f *Fault) takeTear(off, n int64) (int64, bool) {
	if CheckAligned(off, n, f.inner.Alignment(), f.inner.Size()) != nil {
		return 0, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.tearAll {
		f.mu.injected++
		return AlignDown(n/2, f.inner.Alignment()), true
	}
	t := f.mu.tear
	if t < off || t >= off+n {
		return 0, false
	}
	f.mu.tear = -1
	f.mu.injected++
	return AlignDown(t, f.inner.Alignment()) - off, true
}

func (f *Fault) tornWrite(p []byte, off, cut int64) (int, error) {
	if cut > 0 {
		if n, err := f.inner.WriteAt(p[:cut], off); err != nil {
			return n, err
		}
	}
	return int(cut), fmt.Errorf("%w: torn write at %d: %d of %d bytes written", ErrInjected, off, cut, len(p))
}

// corruptRead flips the first byte of p inside each corrupt range.
func (f *Fault) corruptRead(p []byte, off int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.mu.corrupt {
		if r.matches(OpRead, off, int64(len(p))) {
			p[max(r.off, off)-off] ^= 0xff
			f.mu.injected++
		}
	}
}
