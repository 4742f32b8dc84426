package store

import (
	"context"
	"errors"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/strata-media/strata/internal/storage/device"
)

// ErrBusy reports a flash hit that found the hit buffers' bytes all held
// and waited its queue deadline for room: the caller answers 503 with
// Retry-After. Nothing was read; the device is not at fault.
var ErrBusy = errors.New("store: flash hit memory full")

// Hits bounds the bytes of the buffers flash hits are read into, from
// the read until the response that serves them is written, and pools
// them: a semaphore by bytes (FIFO, so a large hit is not starved by
// small ones) over aligned buffers in size classes, reused without
// being zeroed (a read fills the part that is served). A hit that finds
// the bytes held waits in line up to the queue deadline, then gets
// ErrBusy. The wait happens before the read is issued, so it is never
// counted as the device's latency.
type Hits struct {
	limit int64
	wait  time.Duration
	unit  int // the smallest class, a multiple of the alignment
	align int
	sem   *semaphore.Weighted

	held, peak  atomic.Int64       // bytes held now, and at most
	waiting     atomic.Int64       // hits in line now
	waits, busy atomic.Uint64      // hits that waited, and that waited in vain
	acquired    atomic.Uint64      // buffers handed out
	hits        atomic.Uint64      // hits that took one or more
	pools       [classes]sync.Pool // of *pooled, by class index
	newBuffers  atomic.Uint64      // buffers allocated (not reused)
}

// HitsStats are Hits' counters.
type HitsStats struct {
	// LimitBytes is the bound on the bytes held.
	LimitBytes int64 `json:"limit_bytes"`
	// HeldBytes is the bytes held by hits now; PeakBytes the most ever.
	HeldBytes int64 `json:"held_bytes"`
	PeakBytes int64 `json:"peak_bytes"`
	// Waiting is the hits in line now; Waits counts those that had to
	// wait, Busy those that waited past the queue deadline (answered
	// 503).
	Waiting int64  `json:"waiting"`
	Waits   uint64 `json:"waits"`
	Busy    uint64 `json:"busy"`
	// Hits counts the hits that held hit memory, one per hit however
	// many buffers it took. Acquired counts the buffers handed out: one
	// per hit read into memory; a hit sent from the device (FileHit)
	// takes one for its header read (Head), one for the unaligned ends
	// of its chunks, one for its rest if read into memory (Rest).
	// NewBuffers counts those allocated because the pool had none of
	// their class.
	Hits       uint64 `json:"hits"`
	Acquired   uint64 `json:"acquired"`
	NewBuffers uint64 `json:"new_buffers"`
}

// NewHits bounds hit buffers to limit bytes (at least one unit of
// alignment), aligned for a device of alignment align, with hits
// waiting up to wait for room.
func NewHits(limit int64, wait time.Duration, align int) *Hits {
	align = max(align, 1)
	unit := max(align, 512)
	limit = max(limit, int64(unit))
	return &Hits{limit: limit, wait: wait, unit: unit, align: align, sem: semaphore.NewWeighted(limit)}
}

// A Buf is one hit's buffer, held from Acquire until Release.
type Buf struct {
	h        *Hits
	p        *pooled
	weight   int64
	released atomic.Bool
}

// pooled is a buffer in a pool (a pointer, so that Put does not
// allocate).
type pooled struct {
	b     []byte
	class int
}

// Bytes is the buffer: aligned, at least the size asked for. It is not
// zeroed: only the bytes a read filled may be used.
func (b *Buf) Bytes() []byte { return b.p.b }

// Release returns the buffer to the pool and its bytes to the bound.
// Nothing of it may be used after. A second Release does nothing; a nil
// Buf's does nothing.
func (b *Buf) Release() {
	if b == nil || !b.released.CompareAndSwap(false, true) {
		return
	}
	h := b.h
	if b.p.class >= 0 {
		h.pools[b.p.class].Put(b.p)
	}
	b.p = nil
	h.held.Add(-b.weight)
	h.sem.Release(b.weight)
}

// Acquire takes a buffer of at least n bytes for a hit that holds no
// other, waiting in line (up to the queue deadline, or until ctx is done)
// while the bytes are held by others. It returns ErrBusy past the
// deadline, ctx's error if ctx ended first.
func (h *Hits) Acquire(ctx context.Context, n int) (*Buf, error) {
	return h.acquire(ctx, n, true)
}

// acquire takes a buffer of n bytes for hit h (FileHit), counted as a
// hit only if it is the first buffer h holds (its header read, its
// unaligned ends and its rest are one hit).
func (h *FileHit) acquire(n int) (*Buf, error) {
	return h.hits.acquire(h.ctx, n, h.hbuf == nil && h.mbuf == nil && h.buf == nil)
}

// acquire is Acquire, counting a hit only if newHit.
func (h *Hits) acquire(ctx context.Context, n int, newHit bool) (*Buf, error) {
	size, class := h.class(n)
	weight := min(int64(size), h.limit) // a hit larger than the bound waits for all of it
	if !h.sem.TryAcquire(weight) {
		if err := h.queue(ctx, weight); err != nil {
			return nil, err
		}
	}
	held := h.held.Add(weight)
	for p := h.peak.Load(); held > p && !h.peak.CompareAndSwap(p, held); p = h.peak.Load() {
	}
	h.acquired.Add(1)
	if newHit {
		h.hits.Add(1)
	}
	b := &Buf{h: h, weight: weight}
	if class >= 0 {
		if p, ok := h.pools[class].Get().(*pooled); ok {
			b.p = p
			return b, nil
		}
	}
	h.newBuffers.Add(1)
	b.p = &pooled{b: device.AlignedBuffer(size, h.align), class: class}
	return b, nil
}

// queue waits for weight bytes, up to the queue deadline.
func (h *Hits) queue(ctx context.Context, weight int64) error {
	h.waits.Add(1)
	h.waiting.Add(1)
	defer h.waiting.Add(-1)
	qctx, cancel := context.WithTimeout(ctx, h.wait)
	defer cancel()
	if err := h.sem.Acquire(qctx, weight); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		h.busy.Add(1)
		return ErrBusy
	}
	return nil
}

// Stats returns the counters.
func (h *Hits) Stats() HitsStats {
	return HitsStats{
		LimitBytes: h.limit, HeldBytes: h.held.Load(), PeakBytes: h.peak.Load(),
		Waiting: h.waiting.Load(), Waits: h.waits.Load(), Busy: h.busy.Load(),
		Hits: h.hits.Load(), Acquired: h.acquired.Load(), NewBuffers: h.newBuffers.Load(),
	}
}

// classes is the number of size classes: 16 multiples of the unit, then
// 8 per doubling up to 2^(maxClassBits).
const (
	smallClasses = 16
	maxClassBits = 34 // 16 GiB: any object the tiers hold
	classes      = smallClasses + 8*maxClassBits
)

// class returns the size of the class that holds n bytes, and its index
// (-1: too large to pool). Classes are multiples of the unit up to 16
// units, then eight steps per doubling: at most an eighth is wasted.
func (h *Hits) class(n int) (int, int) {
	u := h.unit
	n = max(n, 1)
	if n <= smallClasses*u {
		k := (n + u - 1) / u
		return k * u, k - 1
	}
	k := bits.Len(uint(n - 1)) // 2^(k-1) < n <= 2^k
	step := 1 << (k - 4)       // >= u, since n > 16u >= 2^(log u + 4)
	size := (n + step - 1) / step * step
	if k > maxClassBits {
		return size, -1
	}
	return size, smallClasses + 8*(k-1) + (size-1<<(k-1))/step - 1
}
