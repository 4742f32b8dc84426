package edge

import (
	"context"
	"errors"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// fillMemory bounds the bytes of upstream bodies the edge holds in Go's
// heap at once: the records being filled from the upstream (a miss is laid
// out whole as soon as its length is known) and the answers streamed from
// them while they fill. Past the bound a fill waits for room (at most half
// of FetchTimeout, acquireFill) with the body left in the upstream socket: under
// overload the node answers later, it does not run out of memory. Once a
// load is over the engine keeps its bytes in RAM's memory file and the
// answers still being written read those (engine.Engine.GetWithHeld), so
// the heap's copy is held only by the load and the streams reading it as
// it arrives.
type fillMemory struct {
	sem *semaphore.Weighted
	max int64
	// held is the room taken now, bytes; waits counts the bodies that
	// found none at once.
	held, waits atomic.Int64
}

func newFillMemory(n int64) *fillMemory {
	if n <= 0 {
		return nil // unbounded
	}
	return &fillMemory{sem: semaphore.NewWeighted(n), max: n}
}

// errFillBusy is a body that found no room in fillMemory before its load's
// context ended: the node is overloaded (503), not the upstream failing.
var errFillBusy = errors.New("too many responses are being read from the upstream; retry later")

// acquireFill takes room for a body of n bytes in the handler's fill
// memory, waiting at most half of FetchTimeout (and until ctx ends): the
// exchange's own deadline runs meanwhile, and a body that waited longer
// would be cut short by it, counted against a healthy upstream.
func (h *Handler) acquireFill(ctx context.Context, n int64) (*fillHold, error) {
	ctx, cancel := context.WithTimeout(ctx, h.opts.FetchTimeout/2)
	defer cancel()
	return h.fill.acquire(ctx, n)
}

// stats returns the room held now and the bodies that waited for room.
func (m *fillMemory) stats() (held, waits int64) {
	if m == nil {
		return 0, 0
	}
	return m.held.Load(), m.waits.Load()
}

// fillHold is the room one body holds in fillMemory: released when its
// last user (the load, each stream reading it) lets go.
type fillHold struct {
	m    *fillMemory
	n    int64
	refs atomic.Int32
}

// acquire takes room for a body of n bytes (the whole bound for a larger
// one), waiting until ctx ends; the hold has one reference, the caller's.
// A nil fillMemory (unbounded) gives a nil hold, which every method
// accepts.
func (m *fillMemory) acquire(ctx context.Context, n int64) (*fillHold, error) {
	if m == nil {
		return nil, nil
	}
	n = min(max(n, 1), m.max)
	if !m.sem.TryAcquire(n) {
		m.waits.Add(1)
		if err := m.sem.Acquire(ctx, n); err != nil {
			return nil, err
		}
	}
	m.held.Add(n)
	h := &fillHold{m: m, n: n}
	h.refs.Store(1)
	return h, nil
}

// tryRef adds a user of the body unless its last user let go already (the
// load is over and the bytes are the engine's): nil then.
func (h *fillHold) tryRef() *fillHold {
	if h == nil {
		return nil
	}
	for {
		n := h.refs.Load()
		if n <= 0 {
			return nil
		}
		if h.refs.CompareAndSwap(n, n+1) {
			return h
		}
	}
}

// unref drops one user; the last gives the room back.
func (h *fillHold) unref() {
	if h == nil {
		return
	}
	switch n := h.refs.Add(-1); {
	case n == 0:
		h.m.held.Add(-h.n)
		h.m.sem.Release(h.n)
	case n < 0:
		panic("edge: fill memory released twice")
	}
}
