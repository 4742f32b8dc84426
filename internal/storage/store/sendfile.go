package store

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/device"
)

// A device whose records can be sent straight from its file descriptor
// (device.File): spliced from it to a socket.
type fdDevice interface {
	WithFD(fn func(fd int) error) error
}

// pins count, per block, the hits whose bytes are being sent straight from
// the device (FileHit). WriteBlock clears the block's marks, then waits
// for its pins to go before it writes: a pinned sender sends in bounded
// slices and, between them, sees the writer waiting (FileHit.Yield) and
// copies the rest of its bytes into memory (FileHit.Rest), then unpins. A
// writer therefore waits at most one slice of one client (its write
// deadline) and one read.
type pins struct {
	n      []atomic.Int32
	wanted atomic.Int64  // the block the writer waits for, plus one; 0: none
	gone   chan struct{} // a pin of the wanted block went (1 buffered)
	waits  atomic.Uint64 // writes that found their block pinned
	rests  atomic.Uint64 // hits whose rest was read into memory (FileHit.Rest)
}

func newPins(blocks int) *pins {
	return &pins{n: make([]atomic.Int32, blocks), gone: make(chan struct{}, 1)}
}

// pinPoll is how often a waiting writer looks at the pins again, should
// it miss a wake-up; the wake-up comes from the last unpin.
const pinPoll = 5 * time.Millisecond

// await waits until no hit pins block b. The marks are cleared already,
// so no new pin takes.
func (p *pins) await(b uint32) {
	if p == nil || int(b) >= len(p.n) || p.n[b].Load() == 0 {
		return
	}
	p.waits.Add(1)
	p.wanted.Store(int64(b) + 1)
	defer p.wanted.Store(0)
	t := time.NewTimer(pinPoll)
	defer t.Stop()
	for p.n[b].Load() > 0 {
		select {
		case <-p.gone:
		case <-t.C:
			t.Reset(pinPoll)
		}
	}
}

func (p *pins) unpin(b uint32) {
	if p.n[b].Add(-1) == 0 && p.wanted.Load() == int64(b)+1 {
		select {
		case p.gone <- struct{}{}:
		default:
		}
	}
}

// ErrNotPinned reports a FileHit whose bytes are no longer to be sent from
// the device (it was released, or its rest read into memory).
var ErrNotPinned = errors.New("store: the hit is no longer pinned")

// A FileHit is a flash hit of verified records, pinned so that their
// blocks are not rewritten while their bytes are sent straight from the
// device (sendfile). Its bytes come in parts: ranges of the device's
// file, aligned as O_DIRECT wants them (offset and length), and the
// unaligned heads and tails of its chunks (and chunks too small to be
// worth a sendfile), read into a small hit buffer. It is not safe for
// concurrent use.
type FileHit struct {
	f     *Flash
	hits  *Hits
	ctx   context.Context
	seg   tier.Segment
	parts []filePart
	pin   bool
	mbuf  *Buf // the memory parts' buffer, held until Release
	buf   *Buf // Rest's buffer, held until Release
	rest  []byte
}

// A filePart is device bytes [off, off+n): sent from the file, or, if
// mem, read into memory first (data, once read).
type filePart struct {
	off, n int64
	mem    bool
	data   []byte
}

// MinFilePart is the shortest aligned range sent from the file: a chunk
// with less is read into memory whole.
const MinFilePart = 64 << 10

// PinHit pins seg's blocks for a send from the device, if seg's records
// are all verified (decision 0030) and the device has a file descriptor;
// nil otherwise (read it, verified, into a buffer instead). Rest takes
// its buffer from hits, waiting in line until ctx ends. Release unpins.
func (f *Flash) PinHit(ctx context.Context, seg tier.Segment, hits *Hits) *FileHit {
	if _, ok := f.dev.(fdDevice); !ok || f.pins == nil || len(seg.Chunks) == 0 {
		return nil
	}
	for i, ch := range seg.Chunks {
		if int(ch.Block) >= len(f.pins.n) {
			f.unpinFirst(seg, i)
			return nil
		}
		f.pins.n[ch.Block].Add(1)
	}
	// After the pins: a rewrite clears its marks before it looks at the
	// pins, so either it sees them, or this sees the marks gone.
	for _, ch := range seg.Chunks {
		if !f.marks.verified(ch) {
			f.unpinFirst(seg, len(seg.Chunks))
			return nil
		}
	}
	h := &FileHit{f: f, hits: hits, ctx: ctx, seg: seg, pin: true}
	a := int64(f.align)
	for _, ch := range seg.Chunks {
		off, _, lead := f.chunkSpan(seg, ch)
		s, e := off+lead, off+lead+int64(ch.Len)
		fs, fe := device.AlignUp(s, int(a)), device.AlignDown(e, int(a))
		if fe-fs < MinFilePart {
			h.parts = append(h.parts, filePart{off: s, n: e - s, mem: true})
			continue
		}
		if fs > s {
			h.parts = append(h.parts, filePart{off: s, n: fs - s, mem: true})
		}
		h.parts = append(h.parts, filePart{off: fs, n: fe - fs})
		if e > fe {
			h.parts = append(h.parts, filePart{off: fe, n: e - fe, mem: true})
		}
	}
	return h
}

func (f *Flash) unpinFirst(seg tier.Segment, n int) {
	for _, ch := range seg.Chunks[:n] {
		f.pins.unpin(ch.Block)
	}
}

// Len is the length of the hit's bytes.
func (h *FileHit) Len() int64 { return h.seg.Size }

// Parts is the number of parts the bytes come in.
func (h *FileHit) Parts() int { return len(h.parts) }

// Part is part i: a range of the file (its offset and length, aligned),
// or bytes in memory (mem, read from the device on the first call for
// a memory part, while the hit is pinned).
func (h *FileHit) Part(i int) (off, n int64, mem []byte, err error) {
	p := &h.parts[i]
	if !p.mem {
		return p.off, p.n, nil, nil
	}
	if p.data == nil {
		if err := h.readMem(); err != nil {
			return 0, 0, nil, err
		}
	}
	return p.off, p.n, p.data, nil
}

// readMem reads every memory part into one hit buffer, each part's
// aligned span at an aligned place.
func (h *FileHit) readMem() error {
	if !h.pin {
		return ErrNotPinned
	}
	a := int64(h.f.align)
	var need int64
	for _, p := range h.parts {
		if p.mem {
			need += device.AlignUp(p.off+p.n, int(a)) - device.AlignDown(p.off, int(a))
		}
	}
	buf, err := h.hits.Acquire(h.ctx, int(need))
	if err != nil {
		return err
	}
	h.mbuf = buf
	b := buf.Bytes()
	var at int64
	for i := range h.parts {
		p := &h.parts[i]
		if !p.mem {
			continue
		}
		start := device.AlignDown(p.off, int(a))
		span := device.AlignUp(p.off+p.n, int(a)) - start
		if _, err := h.f.dev.ReadAt(b[at:at+span], start); err != nil {
			return fmt.Errorf("store: reading %q: %w", h.seg.Key, err)
		}
		p.data = b[at+p.off-start : at+p.off-start+p.n]
		at += span
	}
	return nil
}

// WithFD runs fn with the device's file descriptor, which stays open
// while it runs; ErrNotPinned once the hit is not pinned.
func (h *FileHit) WithFD(fn func(fd int) error) error {
	if !h.pin {
		return ErrNotPinned
	}
	return h.f.dev.(fdDevice).WithFD(fn)
}

// Yield reports whether the sender is to stop sending from the device:
// a block write waits for one of the hit's blocks.
func (h *FileHit) Yield() bool {
	w := h.f.pins.wanted.Load()
	if !h.pin || w == 0 {
		return !h.pin
	}
	for _, ch := range h.seg.Chunks {
		if int64(ch.Block)+1 == w {
			return true
		}
	}
	return false
}

// Rest reads the hit's bytes into a hit buffer (Hits: it waits in line
// for room, ErrBusy past the queue deadline) while they are still pinned,
// verifying any record whose marks a waiting rewrite cleared, then
// unpins, and returns the bytes from off on. The buffer is held until
// Release.
func (h *FileHit) Rest(off int64) ([]byte, error) {
	if h.rest == nil {
		if !h.pin {
			return nil, ErrNotPinned
		}
		buf, err := h.hits.Acquire(h.ctx, h.f.SpanSize(h.seg))
		if err != nil {
			return nil, err
		}
		data, err := h.f.ReadSegmentInto(h.seg, buf.Bytes())
		h.unpin()
		h.f.pins.rests.Add(1)
		if err != nil {
			buf.Release()
			return nil, err
		}
		h.buf, h.rest = buf, data
	}
	return h.rest[min(max(off, 0), int64(len(h.rest))):], nil
}

func (h *FileHit) unpin() {
	if h.pin {
		h.pin = false
		h.f.unpinFirst(h.seg, len(h.seg.Chunks))
	}
}

// Release unpins the hit and returns Rest's buffer, if any. Nothing of
// the hit may be used after; a second Release does nothing.
func (h *FileHit) Release() {
	if h == nil {
		return
	}
	h.unpin()
	h.buf.Release()
	h.mbuf.Release()
	h.buf, h.rest, h.mbuf = nil, nil, nil
	for i := range h.parts {
		h.parts[i].data = nil
	}
}

// PinStats counts the sends straight from the device.
type PinStats struct {
	// Pinned is the pins held now; WriterWaits the block writes that
	// found their block pinned and waited for a sender to yield; Rests
	// the hits whose rest was read into memory (a writer waited for
	// their block; or the Front could not send from the file).
	Pinned      int64  `json:"pinned"`
	WriterWaits uint64 `json:"writer_waits"`
	Rests       uint64 `json:"rests"`
}

// PinStats returns the pins' counters.
func (f *Flash) PinStats() PinStats {
	if f.pins == nil {
		return PinStats{}
	}
	var n int64
	for i := range f.pins.n {
		n += int64(f.pins.n[i].Load())
	}
	return PinStats{Pinned: n, WriterWaits: f.pins.waits.Load(), Rests: f.pins.rests.Load()}
}
