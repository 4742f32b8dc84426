package tier

import "fmt"

// A PlannedRecord is one chunk record of a block write.
type PlannedRecord struct {
	RecordHeader
	// Off is the record's offset within the block.
	Off int64
	// Data is the chunk's bytes; nil in the simulator.
	Data []byte
	// hold is the segment's Entry.Hold: kept with Data while the write
	// is encoded, even after a purge drops the segment from the write's
	// items.
	hold any

	hits  uint64 // access count the segment carries to flash
	reins uint8  // reinsertions without a read, carried to flash
	sum   uint64 // the RAM entry's digest (Segment.Sum)
}

// A BlockWrite is one whole, aligned block the driver must write to flash
// (FlashStream §3.2.2). Its chunks become visible in the index only when the
// driver reports completion with WriteDone.
type BlockWrite struct {
	// Block is the block number; the write covers
	// [Block x BlockSize, (Block+1) x BlockSize).
	Block uint32
	// Gen is the write's generation.
	Gen uint64
	// Records are the chunks in the block, in offset order.
	Records []PlannedRecord
	// Used is the number of bytes of header and records; the rest of the
	// block is zero padding.
	Used int64
	// Victim reports that the block was taken from the replacement
	// policy rather than the free list.
	Victim bool
	// Rescue lists segments of the replaced block (BlockReinsert) that
	// the driver must read from flash BEFORE writing this block, and hand
	// to Cache.Rescued: they are reinserted into the next blocks. Each is
	// still intact on flash until this write starts.
	Rescue []Segment

	items     map[string]RingItem // whole segments with a chunk here
	discarded []string            // keys dropped while in flight: not published
}

// EncodeBlock lays w out in buf, a whole block, for the cache formatted
// with formatID: header, records, zero padding. Records must carry data.
func EncodeBlock(buf []byte, w *BlockWrite, formatID uint64) error {
	if w.Used > int64(len(buf)) {
		return fmt.Errorf("tier: block write of %d bytes exceeds %d byte buffer", w.Used, len(buf))
	}
	encodeBlockHeader(buf, &BlockHeader{
		FormatID:   formatID,
		Gen:        w.Gen,
		Block:      w.Block,
		RecordsLen: uint32(w.Used - blockHdrLen),
		Records:    uint32(len(w.Records)),
	})
	for i := range w.Records {
		r := &w.Records[i]
		if int64(len(r.Data)) != int64(r.Len) {
			return fmt.Errorf("tier: record %q chunk %d has %d bytes, want %d", r.Key, r.Seq, len(r.Data), r.Len)
		}
		encodeRecord(buf[r.Off:], &r.RecordHeader, r.Data)
	}
	clear(buf[w.Used:])
	return nil
}

// packSeg is a segment taken from the ring for packing, possibly split
// over several blocks.
type packSeg struct {
	RingItem
	chunks  uint32 // number of chunks it is cut into
	segGen  uint64 // generation of the block holding chunk 0, once sealed
	packed  int64  // bytes assigned to blocks so far
	nextSeq uint32
}

// packPiece is one chunk of a packSeg bound for the block being packed.
type packPiece struct {
	seg      *packSeg
	off, len int64 // range of the segment's bytes
	seq      uint32
}

// packer fills one block-sized buffer plan with chunks from the ring
// (FlashStream §4.2: a segment that does not fit the rest of a block
// continues, as further chunks, at the front of the next ones).
type packer struct {
	blockSize int64
	used      int64 // header and records planned so far
	pieces    []packPiece
	cur       *packSeg // segment with bytes left for the next block
	segs      map[string]*packSeg
}

func newPacker(blockSize int64) *packer {
	return &packer{blockSize: blockSize, used: blockHdrLen, segs: make(map[string]*packSeg)}
}

// minFirstChunk is the smallest chunk worth starting a segment with at the
// end of a block; below it the block is sealed and the segment starts the
// next one.
func (p *packer) minFirstChunk() int64 { return min(max(p.blockSize/64, 1), 64<<10) }

// empty reports whether nothing is planned.
func (p *packer) empty() bool { return len(p.pieces) == 0 && p.cur == nil }

// space is the room left in the block for record headers and data.
func (p *packer) space() int64 { return p.blockSize - p.used }

// storable reports whether a segment with this key fits a block at all:
// an empty block holds its record header and a first chunk.
func (p *packer) storable(key string) bool {
	return len(key) <= MaxKeyLen && p.blockSize-blockHdrLen-recordLen(len(key), 0) >= p.minFirstChunk()
}

// startFits reports whether the next segment of size and key length may
// start in this block.
func (p *packer) startFits(it RingItem) bool {
	room := p.space() - recordLen(len(it.Key), 0)
	return room >= it.Size || room >= p.minFirstChunk()
}

// start begins packing it and returns false when it cannot start here.
func (p *packer) start(it RingItem) bool {
	if !p.startFits(it) {
		return false
	}
	over := recordLen(len(it.Key), 0)
	first := min(it.Size, p.space()-over)
	full := p.blockSize - blockHdrLen - over
	rest := it.Size - first
	s := &packSeg{RingItem: it, chunks: uint32(1 + (rest+full-1)/full)}
	p.segs[it.Key] = s
	p.cur = s
	p.continueCur()
	return true
}

// continueCur places as much of the current segment as fits.
func (p *packer) continueCur() {
	s := p.cur
	n := min(s.Size-s.packed, p.space()-recordLen(len(s.Key), 0))
	p.pieces = append(p.pieces, packPiece{seg: s, off: s.packed, len: n, seq: s.nextSeq})
	p.used += recordLen(len(s.Key), int(n))
	s.packed += n
	s.nextSeq++
	if s.packed == s.Size {
		p.cur = nil
	}
}

// full reports whether the block can take nothing more: a segment is left
// over for the next block, or the room left is below the smallest chunk.
func (p *packer) full() bool {
	return p.cur != nil || p.space() < recordHdrLen+p.minFirstChunk()
}

// seal turns the plan into the write of block num with generation gen and
// starts a new plan, in which a split segment continues.
func (p *packer) seal(num uint32, gen uint64) *BlockWrite {
	w := &BlockWrite{Block: num, Gen: gen, Used: p.used, items: make(map[string]RingItem)}
	off := int64(blockHdrLen)
	for _, pc := range p.pieces {
		s := pc.seg
		if pc.seq == 0 {
			s.segGen = gen
		}
		r := PlannedRecord{Off: off, hits: s.Hits, reins: s.reins, sum: s.Sum, RecordHeader: RecordHeader{
			Key: s.Key, Seq: pc.seq, Chunks: s.chunks, Len: uint32(pc.len),
			SegSize: s.Size, SegGen: s.segGen, BlockGen: gen,
		}}
		if s.Data != nil {
			r.Data, r.hold = s.Data[pc.off:pc.off+pc.len], s.Hold
		}
		w.Records = append(w.Records, r)
		w.items[s.Key] = s.RingItem
		off += recordLen(len(s.Key), int(pc.len))
		if s != p.cur {
			delete(p.segs, s.Key)
		}
	}
	p.pieces, p.used = p.pieces[:0], blockHdrLen
	if p.cur != nil {
		p.continueCur()
	}
	return w
}

// removeIf drops the planned segments for which drop returns true.
func (p *packer) removeIf(drop func(key string) bool) {
	kept := p.pieces[:0]
	p.used = blockHdrLen
	for _, pc := range p.pieces {
		if drop(pc.seg.Key) {
			delete(p.segs, pc.seg.Key)
			continue
		}
		kept = append(kept, pc)
		p.used += recordLen(len(pc.seg.Key), int(pc.len))
	}
	p.pieces = kept
	if p.cur != nil && drop(p.cur.Key) {
		delete(p.segs, p.cur.Key)
		p.cur = nil
	}
}
