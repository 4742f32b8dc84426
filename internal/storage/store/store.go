// Package store carries out the tier core's flash decisions on a Device:
// it formats and recovers the flash cache, writes planned blocks and
// metadata, and reads segments back verified: each record's data
// checksum once per process, its header on every read (verify.go).
package store

import (
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/wtrace"
)

// ErrMismatch reports a chunk read from flash that verified but is not the
// one the index expected: the block was overwritten since the lookup.
var ErrMismatch = errors.New("store: flash content changed under the read")

// Flash executes block and metadata writes and segment reads for one cache.
// It is safe for concurrent use as far as its Device is: reads may run
// alongside one write.
type Flash struct {
	dev      device.Device
	bs       int64
	align    int
	formatID uint64
	wbuf     []byte // block write buffer; the tier core issues one write at a time
	mbuf     []byte // metadata write buffer
	rbuf     []byte // block scan buffer
	marks    *marks // records verified since start (verify.go); nil in Fsck
	pins     *pins  // blocks whose bytes are being sent (sendfile.go); nil in Fsck
	// pageCache: hits are sent from the device's page cache descriptor
	// (pageCacheDevice, decision 0034).
	pageCache bool
	// pcReads: a pinned hit's small reads (its header, its unaligned
	// ends) go through the page cache descriptor (decision 0038).
	pcReads bool
	// beforeFileRead is Options.BeforeFileRead (a test hook).
	beforeFileRead func() error

	name      string         // device name in write traces
	trace     *wtrace.Writer // nil: no trace
	dataClass atomic.Uint64  // device.Lifetime of data blocks
	written   [device.LifetimeExtreme + 1]atomic.Uint64
}

// Options configure Open.
type Options struct {
	// Logger receives recovery and format messages. Nil: slog.Default().
	Logger *slog.Logger
	// Progress, if set, is called after every scanned block during recovery.
	Progress func(done, total int)
	// Name names the device in write traces, e.g. "segments".
	Name string
	// Trace, if set, records every write (strata serve --trace-writes).
	Trace *wtrace.Writer
	// DataClass is the lifetime class of data blocks (multi-streamed SSD
	// §3); metadata blocks are short-lived. Default medium.
	DataClass device.Lifetime
	// BeforeFileRead, a test hook, is called before each read of a
	// FileHit's bytes from the device's file (FileHit.BeginFileRead),
	// inside the read's time: a delay is a slow device, an error the
	// read's error (as EIO), and the read is not made. Nil (production):
	// nothing.
	BeforeFileRead func() error
}

// Open recovers the cache on dev or, if dev holds none or one of another
// geometry, formats it. tierOpts.DeviceSize and Alignment are taken from dev.
// It returns the executor, the rebuilt core and what recovery found.
func Open(dev device.Device, tierOpts tier.Options, opts Options) (*Flash, *tier.Cache, tier.RecoveryReport, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	tierOpts.DeviceSize = dev.Size()
	tierOpts.Alignment = dev.Alignment()
	tierOpts.EnsureDefaults()
	f := newFlash(dev, tierOpts.BlockSize)
	f.name, f.trace, f.beforeFileRead = opts.Name, opts.Trace, opts.BeforeFileRead
	if f.name == "" {
		f.name = "flash"
	}
	f.SetDataClass(cmp.Or(opts.DataClass, device.LifetimeMedium))
	super, slot, err := f.readMeta()
	if err == nil {
		c, rep, err := f.recover(tierOpts, super, opts.Progress)
		if err == nil {
			log.Info("flash cache recovered", "slot", slot, "segments", rep.Segments, "bytes", rep.Bytes,
				"blocks_with_data", rep.BlocksWithData, "corrupt_records", rep.CorruptRecords, "orphan_records", rep.OrphanRecords)
			return f, c, rep, nil
		}
		if !errors.Is(err, tier.ErrGeometry) {
			return nil, nil, tier.RecoveryReport{}, err
		}
		log.Warn("flash cache geometry changed: formatting anew, cached copies are dropped", "err", err)
	} else if !errors.Is(err, tier.ErrNoRecord) {
		log.Warn("flash cache metadata unreadable: formatting anew, cached copies are dropped", "err", err)
	}
	c, err := f.format(tierOpts)
	return f, c, tier.RecoveryReport{}, err
}

func newFlash(dev device.Device, blockSize int64) *Flash {
	f := &Flash{
		dev:   dev,
		bs:    blockSize,
		align: dev.Alignment(),
		wbuf:  device.AlignedBuffer(int(blockSize), dev.Alignment()),
		mbuf:  device.AlignedBuffer(int(blockSize), dev.Alignment()),
		rbuf:  device.AlignedBuffer(int(blockSize), dev.Alignment()),
		marks: newMarks(int(dev.Size() / blockSize)),
		pins:  newPins(int(dev.Size() / blockSize)),
	}
	if pd, ok := dev.(pageCacheDevice); ok {
		f.pageCache, f.pcReads = pd.PageCache(), pd.PageCacheReads()
	}
	return f
}

// format starts an empty cache with a new random format id, so that blocks
// of any earlier format are ignored, and writes its metadata.
func (f *Flash) format(opts tier.Options) (*tier.Cache, error) {
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	c, mw, err := tier.New(opts, binary.LittleEndian.Uint64(id[:])|1)
	if err != nil {
		return nil, err
	}
	f.formatID = c.FormatID()
	f.marks.forget() // nothing of another format is ours
	if mw == nil {
		return c, nil
	}
	// Both slots: an older cache's metadata in the other slot, with a
	// higher sequence number, would otherwise win at the next start.
	for _, w := range []*tier.MetaWrite{mw, c.Checkpoint()} {
		err = f.WriteMeta(w)
		c.MetaDone(w, err)
		if err != nil {
			return c, err
		}
	}
	return c, nil
}

// readMeta returns the valid metadata block with the highest sequence number.
func (f *Flash) readMeta() (*tier.Super, int, error) {
	var best *tier.Super
	slot := -1
	firstErr := error(tier.ErrNoRecord)
	for i := 0; i < tier.MetaBlocks; i++ {
		s, err := f.readMetaSlot(i)
		if err != nil {
			if !errors.Is(err, tier.ErrNoRecord) {
				firstErr = err
			}
			continue
		}
		if best == nil || s.Seq > best.Seq {
			best, slot = s, i
		}
	}
	if best == nil {
		return nil, -1, firstErr
	}
	return best, slot, nil
}

// readMetaSlot reads metadata block i. The block size is not known before a
// super record is read: block 0's tells where block 1 starts; if block 0 is
// unreadable (torn), the configured size and then every power of two are
// tried, each costing one small read.
func (f *Flash) readMetaSlot(i int) (*tier.Super, error) {
	head := device.AlignedBuffer(f.align, f.align)
	var s *tier.Super
	var err error
	if i == 0 {
		s, err = f.readSuperAt(head, 0)
	} else {
		s, err = f.findSuper(head, i)
	}
	if err != nil {
		return nil, err
	}
	buf := device.AlignedBuffer(int(s.BlockSize), f.align)
	if _, err := f.dev.ReadAt(buf, int64(i)*s.BlockSize); err != nil {
		return nil, err
	}
	return tier.DecodeMeta(buf)
}

func (f *Flash) findSuper(head []byte, i int) (*tier.Super, error) {
	sizes := []int64{f.bs}
	if s0, err := f.readSuperAt(head, 0); err == nil {
		sizes = []int64{s0.BlockSize}
	} else {
		for bs := int64(f.align); bs <= 1<<30; bs *= 2 {
			sizes = append(sizes, bs)
		}
	}
	err := error(tier.ErrNoRecord)
	for _, bs := range sizes {
		if int64(i+1)*bs > f.dev.Size() {
			continue
		}
		s, e := f.readSuperAt(head, int64(i)*bs)
		if e == nil && s.BlockSize == bs {
			return s, nil
		}
		if e != nil && !errors.Is(e, tier.ErrNoRecord) {
			err = e
		}
	}
	return nil, err
}

func (f *Flash) readSuperAt(buf []byte, off int64) (*tier.Super, error) {
	if _, err := f.dev.ReadAt(buf, off); err != nil {
		return nil, err
	}
	s, err := tier.DecodeSuper(buf)
	if err != nil {
		return nil, err
	}
	if s.BlockSize <= 0 || s.BlockSize%int64(f.align) != 0 || int64(s.Blocks)*s.BlockSize > f.dev.Size() {
		return nil, fmt.Errorf("%w: super record geometry %d x %d bytes on a %d byte device", tier.ErrCorrupt, s.Blocks, s.BlockSize, f.dev.Size())
	}
	return s, nil
}

// recover scans every data block of the device and rebuilds the core.
func (f *Flash) recover(opts tier.Options, super *tier.Super, progress func(int, int)) (*tier.Cache, tier.RecoveryReport, error) {
	r, err := tier.Recover(opts, super)
	if err != nil {
		return nil, tier.RecoveryReport{}, err
	}
	f.formatID = super.FormatID
	n := int(super.Blocks)
	for b := tier.MetaBlocks; b < n; b++ {
		bc, err := f.ReadBlock(uint32(b))
		if err != nil {
			return nil, tier.RecoveryReport{}, err
		}
		r.Add(bc)
		if progress != nil {
			progress(b+1-tier.MetaBlocks, n-tier.MetaBlocks)
		}
	}
	c, rep := r.Finish()
	return c, rep, nil
}

// ReadBlock reads data block b whole and decodes its records. A read error
// is returned as an error; undecodable content is reported in the result.
// Calls must not overlap each other.
func (f *Flash) ReadBlock(b uint32) (tier.BlockContents, error) {
	if _, err := f.dev.ReadAt(f.rbuf, int64(b)*f.bs); err != nil {
		return tier.BlockContents{}, fmt.Errorf("store: reading block %d: %w", b, err)
	}
	return tier.DecodeBlock(f.rbuf, b, f.formatID), nil
}

// WriteBlock encodes w and writes it as one whole, aligned block.
func (f *Flash) WriteBlock(w *tier.BlockWrite) error {
	if err := tier.EncodeBlock(f.wbuf, w, f.formatID); err != nil {
		return err
	}
	f.marks.rewriting(w.Block, w.Gen)
	f.pins.await(w.Block) // a sender of the block's bytes yields within a slice
	if err := f.write(f.wbuf, int64(w.Block)*f.bs, device.Lifetime(f.dataClass.Load())); err != nil {
		return err
	}
	f.marks.written(w.Block, w.Gen)
	return nil
}

// WriteMeta writes a metadata block whole and syncs the device. It syncs
// first too: a pruned invalidation table must not become durable before
// the block writes that made the pruning safe.
func (f *Flash) WriteMeta(w *tier.MetaWrite) error {
	if err := tier.EncodeMeta(f.mbuf, &w.Super); err != nil {
		return err
	}
	if err := f.dev.Sync(); err != nil {
		return err
	}
	if err := f.write(f.mbuf, int64(w.Slot)*f.bs, device.LifetimeShort); err != nil {
		return err
	}
	return f.dev.Sync()
}

// write writes p at off, counting and tracing it under its lifetime class.
// The kernel knows one class per file (F_SET_RW_HINT is per inode): the
// data class; a metadata block's class is recorded, not passed down.
func (f *Flash) write(p []byte, off int64, class device.Lifetime) error {
	if _, err := f.dev.WriteAt(p, off); err != nil {
		return err
	}
	f.written[min(class, device.LifetimeExtreme)].Add(uint64(len(p)))
	f.trace.Write(time.Now(), f.name, off, int64(len(p)), class.String(), int(class))
	return nil
}

// SetDataClass sets the lifetime class of data blocks and passes it to the
// kernel for the device's file (F_SET_RW_HINT); it returns the device's
// error when the kernel refuses the hint (the class is still recorded).
func (f *Flash) SetDataClass(l device.Lifetime) error {
	if device.Lifetime(f.dataClass.Swap(uint64(l))) == l && l != 0 {
		return nil
	}
	return f.dev.SetLifetime(l)
}

// DataClass is the lifetime class of data blocks.
func (f *Flash) DataClass() device.Lifetime { return device.Lifetime(f.dataClass.Load()) }

// Written returns the bytes written in each lifetime class, by name.
func (f *Flash) Written() map[string]uint64 {
	out := make(map[string]uint64)
	for l := range f.written {
		if n := f.written[l].Load(); n > 0 {
			out[device.Lifetime(l).String()] = n
		}
	}
	return out
}

// Sync makes completed block writes durable.
func (f *Flash) Sync() error { return f.dev.Sync() }

// BlockSize is the cache's block size.
func (f *Flash) BlockSize() int64 { return f.bs }

// FormatID is the id of the cache's format.
func (f *Flash) FormatID() uint64 { return f.formatID }

// Device is the underlying device.
func (f *Flash) Device() device.Device { return f.dev }

// ReadSegment reads seg's chunks with aligned reads and verifies each
// record's checksums, key, generation and sequence. It returns the
// segment's bytes, or an error wrapping tier.ErrCorrupt (bad bytes),
// ErrMismatch (overwritten since the lookup) or the device's error.
// The bytes are the caller's own, exactly seg.Size long (a copy out of
// the aligned read buffer); ReadSegmentInto reads into a buffer the
// caller holds, without the copy.
func (f *Flash) ReadSegment(seg tier.Segment) ([]byte, error) {
	data, err := f.ReadSegmentInto(seg, device.AlignedBuffer(f.SpanSize(seg), f.align))
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), data...), nil
}

// SpanSize is the length of the buffer ReadSegmentInto needs for seg: its
// chunks' aligned record spans, laid out as ReadSegmentInto reads them.
func (f *Flash) SpanSize(seg tier.Segment) int {
	var need, cur int64
	for i, ch := range seg.Chunks {
		off, span, lead := f.chunkSpan(seg, ch)
		pos := device.AlignUp(cur, f.align)
		if i == 0 {
			pos, cur = 0, off-device.AlignDown(off, f.align)+lead
		}
		need = max(need, pos+span)
		cur += int64(ch.Len)
	}
	return int(max(need, int64(f.align)))
}

// chunkSpan is where chunk ch of seg lies on the device: its record's
// offset, the length of the aligned read that holds the record, and the
// length of the record's header and key (its data follows them).
func (f *Flash) chunkSpan(seg tier.Segment, ch tier.Chunk) (off, span, lead int64) {
	off = ch.RecordOff(f.bs)
	rl := ch.RecordLen(len(seg.Key))
	start := device.AlignDown(off, f.align)
	return off, device.AlignUp(off+rl, f.align) - start, rl - int64(ch.Len)
}

// ReadSegmentInto is ReadSegment into buf, which must be aligned
// (device.AlignedBuffer) and at least SpanSize(seg) long: the segment's
// bytes it returns alias buf, and are returned only once every chunk has
// verified. The first chunk's data is left where its aligned read put it;
// each later chunk is read past the bytes gathered so far and its
// verified data moved down after them, so a segment of one chunk (the
// common case: a segment within one block) is never copied.
func (f *Flash) ReadSegmentInto(seg tier.Segment, buf []byte) ([]byte, error) {
	if len(buf) < f.SpanSize(seg) {
		return nil, fmt.Errorf("store: a %d byte buffer for %q, which needs %d", len(buf), seg.Key, f.SpanSize(seg))
	}
	var base, cur int64
	for i, ch := range seg.Chunks {
		off, span, lead := f.chunkSpan(seg, ch)
		pos := device.AlignUp(cur, f.align)
		if i == 0 {
			pos = 0
		}
		data, err := f.readChunk(seg, i, ch, buf[pos:pos+span], off)
		if err != nil {
			return nil, err
		}
		if i == 0 { // left in place: the data follows the record's header
			base = off - device.AlignDown(off, f.align) + lead
			cur = base + int64(len(data))
			continue
		}
		cur += int64(copy(buf[cur:], data)) // verified; cur <= pos: moved down
	}
	out := buf[base:cur:cur]
	if int64(len(out)) != seg.Size {
		return nil, fmt.Errorf("%w: %q has %d bytes, want %d", tier.ErrCorrupt, seg.Key, len(out), seg.Size)
	}
	return out, nil
}

// readChunk reads chunk seq of seg, whose record starts at device offset
// off, into rec (its aligned span) and returns its verified data, which
// aliases rec. The record's header (key, generations, sequence, length)
// is always checked; its data's checksum only if the record was not
// verified since start (decision 0030), after which it is marked.
func (f *Flash) readChunk(seg tier.Segment, seq int, ch tier.Chunk, rec []byte, off int64) ([]byte, error) {
	start := device.AlignDown(off, f.align)
	if _, err := f.dev.ReadAt(rec, start); err != nil {
		return nil, fmt.Errorf("store: reading %q chunk %d: %w", seg.Key, seq, err)
	}
	buf := rec[off-start:]
	h, err := tier.DecodeRecordHeader(buf)
	if err != nil {
		return nil, err
	}
	if h.Key != seg.Key || h.SegGen != seg.Gen || h.BlockGen != ch.Gen || int(h.Seq) != seq || h.Len != ch.Len {
		return nil, fmt.Errorf("%w: %q chunk %d", ErrMismatch, seg.Key, seq)
	}
	// Checked after the read: a rewrite clears the marks before it
	// writes, so bytes read while one ran are never taken as verified.
	if f.marks.verified(ch) {
		if f.marks != nil {
			f.marks.skipped.Add(1)
		}
		lead := ch.RecordLen(len(seg.Key)) - int64(ch.Len)
		return buf[lead : lead+int64(ch.Len)], nil
	}
	_, data, err := tier.DecodeRecord(buf)
	if err != nil {
		return nil, err
	}
	if f.marks != nil {
		f.marks.checked.Add(1)
		f.marks.mark(ch)
	}
	return data, nil
}

// ReadRange reads bytes [off, off+n) of seg, reading and verifying only
// the chunks that hold them (a range request into a whole file on flash).
func (f *Flash) ReadRange(seg tier.Segment, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > seg.Size {
		return nil, fmt.Errorf("store: range %d+%d outside %q of %d bytes", off, n, seg.Key, seg.Size)
	}
	out := make([]byte, 0, n)
	var pos int64
	for i, ch := range seg.Chunks {
		end := pos + int64(ch.Len)
		if end > off && pos < off+n {
			recOff, span, _ := f.chunkSpan(seg, ch)
			data, err := f.readChunk(seg, i, ch, device.AlignedBuffer(int(span), f.align), recOff)
			if err != nil {
				return nil, err
			}
			out = append(out, data[max(off-pos, 0):min(off+n, end)-pos]...)
		}
		pos = end
	}
	return out, nil
}
