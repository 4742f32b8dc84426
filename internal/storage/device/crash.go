package device

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"sync"
)

// CrashMode says which completed but unsynced writes survive a simulated
// crash.
type CrashMode int

// Crash modes.
const (
	// CrashDropUnsynced keeps only what was synced.
	CrashDropUnsynced CrashMode = iota
	// CrashKeepUnsynced keeps every completed write, synced or not.
	CrashKeepUnsynced
	// CrashKeepRandom keeps each completed unsynced write with probability
	// 1/2, independently, drawn from CrashOptions.Rand.
	CrashKeepRandom
)

// CrashOptions configures Crashable.CrashClone.
type CrashOptions struct {
	// Unsynced chooses which completed unsynced writes and trims survive.
	Unsynced CrashMode
	// Tear, when there is an unsynced write (completed or in progress),
	// picks one at random and keeps only a prefix of it, cut at a random
	// aligned offset shorter than the write (possibly empty), whatever
	// Unsynced says about it.
	Tear bool
	// Rand drives CrashKeepRandom and Tear; nil means a generator seeded
	// with 0, so a clone is reproducible unless the caller seeds otherwise.
	Rand *rand.Rand
}

// A pendingOp is a write or trim issued since the last Sync.
type pendingOp struct {
	off  int64
	n    int64
	data []byte // a copy of the written bytes; nil for a trim
	done bool   // completed: the call returned success
}

// A Crashable is a Device over a Mem that remembers which writes have not
// been synced, so CrashClone can produce the device a crash would leave
// behind (after pebble's vfs.CrashableMem). The original keeps working after
// a clone. It is safe for concurrent use.
type Crashable struct {
	inner *Mem

	mu struct {
		sync.Mutex              // protects synced and pending
		synced     *Mem         // contents as of the last Sync
		pending    []*pendingOp // unsynced writes and trims, in issue order
	}
}

var _ Device = (*Crashable)(nil)

// NewCrashable wraps inner, whose current contents count as synced. All
// later I/O must go through the Crashable.
func NewCrashable(inner *Mem) *Crashable {
	c := &Crashable{inner: inner}
	c.mu.synced = inner.clone()
	return c
}

// Size returns the device size.
func (c *Crashable) Size() int64 { return c.inner.Size() }

// Alignment returns the device alignment.
func (c *Crashable) Alignment() int { return c.inner.Alignment() }

// ReadAt reads the current contents, synced or not.
func (c *Crashable) ReadAt(p []byte, off int64) (int, error) { return c.inner.ReadAt(p, off) }

// SetLifetime sets the inner Mem's lifetime class.
func (c *Crashable) SetLifetime(l Lifetime) error { return c.inner.SetLifetime(l) }

// Close closes the inner Mem. CrashClone still works afterwards.
func (c *Crashable) Close() error { return c.inner.Close() }

// WriteAt writes p at off. Until it returns, a concurrent CrashClone sees
// the write as in progress.
func (c *Crashable) WriteAt(p []byte, off int64) (int, error) {
	if err := CheckAligned(off, int64(len(p)), c.Alignment(), c.Size()); err != nil || len(p) == 0 {
		return c.inner.WriteAt(p, off) // reports the error, or ErrClosed
	}
	op := c.begin(&pendingOp{off: off, n: int64(len(p)), data: bytes.Clone(p)})
	n, err := c.inner.WriteAt(p, off)
	c.finish(op, err)
	return n, err
}

// Trim trims [off, off+n); like a write, it is lost in a crash unless
// synced.
func (c *Crashable) Trim(off, n int64) error {
	if err := CheckAligned(off, n, c.Alignment(), c.Size()); err != nil || n == 0 {
		return c.inner.Trim(off, n) // reports the error, or ErrClosed
	}
	op := c.begin(&pendingOp{off: off, n: n})
	err := c.inner.Trim(off, n)
	c.finish(op, err)
	return err
}

func (c *Crashable) begin(op *pendingOp) *pendingOp {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.pending = append(c.mu.pending, op)
	return op
}

// finish marks op completed, or forgets it if it failed: a Mem operation
// that fails changes nothing.
func (c *Crashable) finish(op *pendingOp, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		op.done = true
		return
	}
	if i := slices.Index(c.mu.pending, op); i >= 0 {
		c.mu.pending = slices.Delete(c.mu.pending, i, i+1)
	}
}

// Sync makes every completed write and trim survive later crashes. Writes
// still in progress stay unsynced.
func (c *Crashable) Sync() error {
	if err := c.inner.Sync(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.mu.pending[:0]
	for _, op := range c.mu.pending {
		if op.done {
			applyOp(c.mu.synced, op, op.n)
		} else {
			kept = append(kept, op)
		}
	}
	clear(c.mu.pending[len(kept):])
	c.mu.pending = kept
	return nil
}

// CrashClone returns a new Mem holding what a crash at this moment would
// leave: everything synced, plus the unsynced writes and trims opts keeps,
// applied in issue order. Writes in progress never survive whole: they are
// absent unless Tear picks one, which then survives as a prefix.
func (c *Crashable) CrashClone(opts CrashOptions) *Mem {
	r := opts.Rand
	if r == nil {
		r = rand.New(rand.NewPCG(0, 0))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	clone := c.mu.synced.clone()
	torn, cut := c.pickTearLocked(opts.Tear, r)
	for _, op := range c.mu.pending {
		switch {
		case op == torn:
			applyOp(clone, op, cut)
		case op.done && keepOp(opts.Unsynced, r):
			applyOp(clone, op, op.n)
		}
	}
	return clone
}

// pickTearLocked chooses the write to tear, if any, and the length of the
// prefix that survives: a multiple of the alignment below the write's
// length.
func (c *Crashable) pickTearLocked(tear bool, r *rand.Rand) (*pendingOp, int64) {
	if !tear {
		return nil, 0
	}
	var writes []*pendingOp
	for _, op := range c.mu.pending {
		if op.data != nil && op.n > 0 {
			writes = append(writes, op)
		}
	}
	if len(writes) == 0 {
		return nil, 0
	}
	op := writes[r.IntN(len(writes))]
	return op, AlignDown(r.Int64N(op.n), c.Alignment())
}

func keepOp(mode CrashMode, r *rand.Rand) bool {
	switch mode {
	case CrashKeepUnsynced:
		return true
	case CrashKeepRandom:
		return r.IntN(2) == 0
	}
	return false
}

// applyOp applies the first n bytes of op to m.
func applyOp(m *Mem, op *pendingOp, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if op.data == nil {
		m.zeroLocked(op.off, n)
	} else {
		m.storeLocked(op.data[:n], op.off)
	}
}
