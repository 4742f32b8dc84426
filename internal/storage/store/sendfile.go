package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/device"
)

// A device whose records can be sent straight from its file descriptor
// (device.File): spliced from it to a socket.
type fdDevice interface {
	WithFD(fn func(fd int) error) error
}

// A device that also has a descriptor of its file without O_DIRECT
// (device.FileOptions.PageCache): a hit is then spliced from the kernel's
// page cache, its window whole, at any offset (decision 0034).
type pageCacheDevice interface {
	PageCache() bool
	PageCacheReads() bool
	WithPageCacheFD(fn func(fd int) error) error
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
// worth a sendfile), read into a small hit buffer. On a device with a
// page cache descriptor (device.FileOptions.PageCache) the parts are
// its chunks' ranges whole, sent from that descriptor: from the page
// cache, unaligned, none in memory. It is not safe for concurrent use.
type FileHit struct {
	f     *Flash
	pc    bool // sent from the page cache descriptor
	hits  *Hits
	ctx   context.Context
	seg   tier.Segment
	parts []filePart
	pin   bool
	mbuf  *Buf // the memory parts' buffer, held until Release
	buf   *Buf // Rest's buffer, held until Release
	rest  []byte
	// base and size are the window of the segment's bytes the hit sends
	// (Window): all of them unless narrowed.
	base, size int64
	// head is Head's read: the aligned span of the device from headOff,
	// in hbuf; memory parts inside it are taken from it, not read again.
	hbuf    *Buf
	head    []byte
	headOff int64
	// reads is told of the sender's reads from the file and of Release
	// (SetReads); nil: nobody.
	reads FileReads
}

// FileReads is told of the reads of a FileHit's bytes from the device's
// file that its sender makes (BeginFileRead, EndFileRead: the device's
// part of each send, one at a time) and of the hit's Release, once: the
// engine times them against the read deadline for the device's health
// (decision 0035). Its methods are called on the sender's goroutine.
type FileReads interface {
	FileReadBegan()
	FileReadEnded(err error)
	FileHitReleased()
}

// SetReads has r told of the hit's reads from the device's file and of
// its Release.
func (h *FileHit) SetReads(r FileReads) { h.reads = r }

// BeginFileRead is called by the sender before each read of the hit's
// bytes from the device's file (front.TimedFileBody), EndFileRead after
// it with its error. BeginFileRead returns the error of Options'
// BeforeFileRead hook, if it is set and fails: the read is then not made.
func (h *FileHit) BeginFileRead() error {
	if h.reads != nil {
		h.reads.FileReadBegan()
	}
	if hook := h.f.beforeFileRead; hook != nil {
		return hook()
	}
	return nil
}

// EndFileRead reports the end of a read BeginFileRead began.
func (h *FileHit) EndFileRead(err error) {
	if h.reads != nil {
		h.reads.FileReadEnded(err)
	}
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
	h := &FileHit{f: f, hits: hits, ctx: ctx, seg: seg, pin: true, size: seg.Size, pc: f.pageCache}
	h.layout()
	return h
}

// layout splits the window's bytes into parts: per chunk, the aligned
// middle sent from the file and the unaligned ends in memory.
func (h *FileHit) layout() {
	a := int64(h.f.align)
	h.parts = h.parts[:0]
	lo, hi := h.base, h.base+h.size
	var at int64 // the chunk's place in the segment's bytes
	for _, ch := range h.seg.Chunks {
		cs, ce := max(at, lo), min(at+int64(ch.Len), hi)
		if cs >= ce {
			at += int64(ch.Len)
			continue
		}
		off, _, lead := h.f.chunkSpan(h.seg, ch)
		s, e := off+lead+cs-at, off+lead+ce-at
		at += int64(ch.Len)
		if h.pc {
			h.parts = append(h.parts, filePart{off: s, n: e - s})
			continue
		}
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
}

// Window narrows the hit to the segment's bytes [off, off+n): Len,
// Parts, Part and Rest then see those only (a record's body inside a
// segment that begins with its header). Window(0, Size()) is the whole
// segment again. It reports false, and changes nothing, for a range
// outside the segment or once the rest is in memory.
func (h *FileHit) Window(off, n int64) bool {
	if off < 0 || n < 0 || off+n > h.seg.Size || h.rest != nil || !h.pin {
		return false
	}
	h.base, h.size = off, n
	h.layout()
	return true
}

// Record is the identity of the segment the hit reads: its key and
// generation (of the block write that stored its first chunk). While
// the process runs, the same key, generation and Size are the same
// bytes on the device: a segment written again gets a new generation.
func (h *FileHit) Record() (key string, gen uint64) { return h.seg.Key, h.seg.Gen }

// Size is the length of the whole segment, whatever the window.
func (h *FileHit) Size() int64 { return h.seg.Size }

// Head returns the segment's first bytes, up to n of them and no more
// than its first chunk holds, read from the device while pinned into a
// hit buffer held until Release: a record's header, read to decide
// whether and what to send. The memory parts that lie in the same
// aligned span are taken from it later, not read again.
func (h *FileHit) Head(n int) ([]byte, error) {
	if !h.pin {
		return nil, ErrNotPinned
	}
	ch := h.seg.Chunks[0]
	n = min(n, int(ch.Len))
	a := h.f.align
	off, _, lead := h.f.chunkSpan(h.seg, ch)
	s := off + lead
	if h.pc {
		return h.pageCacheHead(s, n)
	}
	start, end := device.AlignDown(s, a), device.AlignUp(s+int64(n), a)
	if h.head == nil || h.headOff != start || int64(len(h.head)) < end-start {
		buf, err := h.acquire(int(end - start))
		if err != nil {
			return nil, err
		}
		b := buf.Bytes()[:end-start]
		if err := h.readSpan(b, start); err != nil {
			buf.Release()
			return nil, fmt.Errorf("store: reading %q: %w", h.seg.Key, err)
		}
		h.hbuf.Release()
		h.hbuf, h.head, h.headOff = buf, b, start
	}
	return h.head[s-start : s-start+int64(n)], nil
}

// pageCacheHead is Head from the page cache descriptor: the n bytes at
// device offset s, read as they are.
func (h *FileHit) pageCacheHead(s int64, n int) ([]byte, error) {
	if h.head == nil || h.headOff != s || len(h.head) < n {
		buf, err := h.acquire(n)
		if err != nil {
			return nil, err
		}
		b := buf.Bytes()[:n]
		err = h.f.dev.(pageCacheDevice).WithPageCacheFD(func(fd int) error { return preadFull(fd, b, s) })
		if err != nil {
			buf.Release()
			return nil, fmt.Errorf("store: reading %q from the page cache: %w", h.seg.Key, err)
		}
		h.hbuf.Release()
		h.hbuf, h.head, h.headOff = buf, b, s
	}
	return h.head[:n], nil
}

// readSpan reads the aligned span b of the device at off, while the hit
// is pinned: through the page cache descriptor where the device has one
// for small reads (decision 0038: the next hit of the record finds its
// header and ends there, with no device read), else from the device.
// The page cache cannot hold bytes of an earlier generation of a pinned
// block: every write is an O_DIRECT write of whole blocks, which
// invalidates the block's cached pages, and it waits for the pins
// (decision 0034).
func (h *FileHit) readSpan(b []byte, off int64) error {
	if h.f.pcReads {
		return h.f.dev.(pageCacheDevice).WithPageCacheFD(func(fd int) error { return preadFull(fd, b, off) })
	}
	_, err := h.f.dev.ReadAt(b, off)
	return err
}

// preadFull reads len(p) bytes of fd at off.
func preadFull(fd int, p []byte, off int64) error {
	for len(p) > 0 {
		k, err := unix.Pread(fd, p, off)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case k == 0:
			return io.ErrUnexpectedEOF
		}
		p, off = p[k:], off+int64(k)
	}
	return nil
}

// fromHead returns device bytes [off, off+n) from Head's read, if it
// holds them.
func (h *FileHit) fromHead(off, n int64) []byte {
	if h.head == nil || off < h.headOff || off+n > h.headOff+int64(len(h.head)) {
		return nil
	}
	return h.head[off-h.headOff : off-h.headOff+n]
}

func (f *Flash) unpinFirst(seg tier.Segment, n int) {
	for _, ch := range seg.Chunks[:n] {
		f.pins.unpin(ch.Block)
	}
}

// Len is the length of the hit's bytes (its window's).
func (h *FileHit) Len() int64 { return h.size }

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

// ReadMem reads the hit's memory parts (its window's unaligned ends)
// now, taking their hit buffer, as Part would on the first call for a
// memory part: a sender that knows no header read took hit memory
// calls it before the answer's header goes out, so that a full hit
// memory (ErrBusy) is an answer not begun, not one cut short.
func (h *FileHit) ReadMem() error {
	for i := range h.parts {
		if h.parts[i].mem && h.parts[i].data == nil {
			return h.readMem()
		}
	}
	return nil
}

// readMem reads every memory part into one hit buffer, each part's
// aligned span at an aligned place.
func (h *FileHit) readMem() error {
	if !h.pin {
		return ErrNotPinned
	}
	a := int64(h.f.align)
	var need int64
	for i := range h.parts {
		p := &h.parts[i]
		if p.mem {
			if p.data = h.fromHead(p.off, p.n); p.data == nil {
				need += device.AlignUp(p.off+p.n, int(a)) - device.AlignDown(p.off, int(a))
			}
		}
	}
	if need == 0 {
		return nil
	}
	buf, err := h.acquire(int(need))
	if err != nil {
		return err
	}
	h.mbuf = buf
	b := buf.Bytes()
	var at int64
	for i := range h.parts {
		p := &h.parts[i]
		if !p.mem || p.data != nil {
			continue
		}
		start := device.AlignDown(p.off, int(a))
		span := device.AlignUp(p.off+p.n, int(a)) - start
		if err := h.readSpan(b[at:at+span], start); err != nil {
			return fmt.Errorf("store: reading %q: %w", h.seg.Key, err)
		}
		p.data = b[at+p.off-start : at+p.off-start+p.n]
		at += span
	}
	return nil
}

// WithFD runs fn with the device's file descriptor (its page cache one,
// if it has one), which stays open while it runs; ErrNotPinned once the
// hit is not pinned.
func (h *FileHit) WithFD(fn func(fd int) error) error {
	if !h.pin {
		return ErrNotPinned
	}
	if h.pc {
		return h.f.dev.(pageCacheDevice).WithPageCacheFD(fn)
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

// Rest reads the segment's bytes into a hit buffer (Hits: it waits in line
// for room, ErrBusy past the queue deadline) while they are still pinned,
// verifying any record whose marks a waiting rewrite cleared, then
// unpins, and returns the window's bytes from off on. The buffer is
// held until Release.
func (h *FileHit) Rest(off int64) ([]byte, error) {
	if h.rest == nil {
		if !h.pin {
			return nil, ErrNotPinned
		}
		buf, err := h.acquire(h.f.SpanSize(h.seg))
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
	w := h.rest[h.base : h.base+h.size]
	return w[min(max(off, 0), int64(len(w))):], nil
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
	h.hbuf.Release()
	h.buf, h.rest, h.mbuf, h.hbuf, h.head = nil, nil, nil, nil, nil
	if r := h.reads; r != nil {
		h.reads = nil
		r.FileHitReleased()
	}
	for i := range h.parts {
		h.parts[i].data = nil
	}
}

// PinStats counts the sends straight from the device.
type PinStats struct {
	// Pinned is the pins held now; WriterWaits the block writes that
	// found their block pinned and waited for a sender to yield; Rests
	// the hits whose rest was read into memory (a writer waited for
	// their block; the Front could not send from the file; or the
	// edge, having read the record's header, did not answer it from
	// the file: a sliced object, a stale response, another variant).
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
