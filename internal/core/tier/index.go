package tier

import (
	"math/rand/v2"
	"slices"
)

// A Chunk is the part of a segment stored in one flash block.
type Chunk struct {
	Block uint32 // block number
	Off   uint32 // offset of the chunk's record within the block
	Len   uint32 // data length
	Gen   uint64 // generation of the block write that stored it
}

// RecordOff is the chunk's record offset from the start of the device.
func (c Chunk) RecordOff(blockSize int64) int64 { return int64(c.Block)*blockSize + int64(c.Off) }

// RecordLen is the length of the chunk's record for a key of keyLen bytes.
func (c Chunk) RecordLen(keyLen int) int64 { return recordLen(keyLen, int(c.Len)) }

// A Segment is a segment stored on flash: its chunks in order.
type Segment struct {
	Key    string
	Size   int64
	Gen    uint64 // segment generation: the block generation of chunk 0
	Chunks []Chunk
	// Sum is the digest the segment's RAM entry carried (Entry.Sum) of
	// the bytes written, 0 if unknown (recovered from flash, inserted
	// without one): a driver that verified the bytes read against the
	// records' checksums need not digest them again.
	Sum uint64

	count uint64 // access count, for the LFU policies
	base  uint64 // count when written: count > base means read since
	reins uint8  // times reinserted in a row without a read on flash

	kh     keyHash // hashes of Key, for scoring; set by hash
	hashed bool
}

// hash returns s's key hashes, computed once by hashOf.
func (s *Segment) hash(hashOf func(string) keyHash) keyHash {
	if !s.hashed {
		s.kh, s.hashed = hashOf(s.Key), true
	}
	return s.kh
}

// Count is the segment's access count.
func (s *Segment) Count() uint64 { return s.count }

// block is the in-memory state of one written flash block.
type block struct {
	num     uint32
	gen     uint64
	used    int64      // bytes of header and records
	segs    []*Segment // live segments with a chunk here, each once
	partial int        // chunks of segments not yet complete on flash

	lastAccess uint64 // logical access clock, for tie-breaks and LRU-after-recovery
	prev, next *block // listPolicy links
	heapIdx    int    // lfuPolicy heap position, or tinyLFUPolicy.all index; -1 when in neither
	score      float64
	dirty      bool
}

func newBlock(num uint32, gen uint64) *block {
	return &block{num: num, gen: gen, heapIdx: -1}
}

func (b *block) removeSeg(s *Segment) {
	if i := slices.Index(b.segs, s); i >= 0 {
		b.segs = slices.Delete(b.segs, i, i+1)
	}
}

// freeBlocks hands out free data blocks, in address order or (FlashStream
// §5.3's experiment) uniformly at random. Blocks [lo, n) of a virtual
// permutation are free; swapped holds the permutation's non-identity entries
// (a sparse Fisher-Yates shuffle), so a huge device of small blocks costs
// memory only for the blocks in use. Freed blocks join the freed stack.
type freeBlocks struct {
	lo, n   uint32
	swapped map[uint32]uint32
	freed   []uint32
	rng     *rand.Rand // nil: address order
}

func newFreeBlocks(first, n uint32, rng *rand.Rand) *freeBlocks {
	first = min(first, n)
	return &freeBlocks{lo: first, n: n, swapped: make(map[uint32]uint32), rng: rng}
}

func (f *freeBlocks) len() int { return len(f.freed) + int(f.n-f.lo) }

func (f *freeBlocks) at(i uint32) uint32 {
	if v, ok := f.swapped[i]; ok {
		return v
	}
	return i
}

// take returns a free block, false when none is left.
func (f *freeBlocks) take() (uint32, bool) {
	total := f.len()
	if total == 0 {
		return 0, false
	}
	r := len(f.freed) - 1 // address order: the most recently freed first
	if f.rng != nil {
		r = f.rng.IntN(total)
	} else if r < 0 {
		r = 0
	}
	if r < len(f.freed) {
		b := f.freed[r]
		f.freed[r] = f.freed[len(f.freed)-1]
		f.freed = f.freed[:len(f.freed)-1]
		return b, true
	}
	j := f.lo + uint32(r-len(f.freed))
	b := f.at(j)
	f.swapped[j] = f.at(f.lo)
	delete(f.swapped, f.lo)
	f.lo++
	return b, true
}

// put returns b to the free blocks.
func (f *freeBlocks) put(b uint32) { f.freed = append(f.freed, b) }

// Index is the SSD cache index (FlashStream §4.2): the segment table
// (key -> chunks), the block table (block -> segments), the free blocks and
// the block replacement policy.
type Index struct {
	blockSize int64
	blocks    map[uint32]*block
	segs      map[string]*Segment
	free      *freeBlocks
	policy    blockPolicy
	tick      uint64
	bytes     int64 // sum of the sizes of the segments on flash
}

func newIndex(blockSize int64, nblocks uint32, p BlockPolicy, freq *sketch, rng *rand.Rand) *Index {
	return &Index{
		blockSize: blockSize,
		blocks:    make(map[uint32]*block),
		segs:      make(map[string]*Segment),
		free:      newFreeBlocks(MetaBlocks, nblocks, rng),
		policy:    newBlockPolicy(p, freq),
	}
}

// get returns the segment stored for key.
func (ix *Index) get(key string) (*Segment, bool) {
	s, ok := ix.segs[key]
	return s, ok
}

// access counts a read of s and tells the policy about every block it
// touches.
func (ix *Index) access(s *Segment) {
	s.count++
	ix.tick++
	for i, c := range s.Chunks {
		if i > 0 && s.Chunks[i-1].Block == c.Block {
			continue
		}
		if b := ix.blocks[c.Block]; b != nil {
			b.lastAccess = ix.tick
			ix.policy.accessed(b)
		}
	}
}

// takeBlock returns a block to write: a free one, or the policy's victim,
// whose segments are dropped first. It returns the number of segments
// dropped with a victim, and false when no block can be had.
func (ix *Index) takeBlock() (num uint32, dropped int, ok bool) {
	if num, ok = ix.free.take(); ok {
		return num, 0, true
	}
	v := ix.policy.victim()
	if v == nil {
		return 0, 0, false
	}
	dropped = len(v.segs)
	for _, s := range slices.Clone(v.segs) {
		ix.remove(s)
	}
	if ix.blocks[v.num] == v { // remove may have freed it already
		ix.forget(v)
		return v.num, dropped, true
	}
	n, ok := ix.free.take()
	return n, dropped, ok
}

// forget takes b out of the block table and the policy, without freeing it.
func (ix *Index) forget(b *block) {
	delete(ix.blocks, b.num)
	ix.policy.removed(b)
}

// release frees b if nothing live or pending remains in it.
func (ix *Index) release(b *block) {
	if len(b.segs) == 0 && b.partial == 0 && ix.blocks[b.num] == b {
		ix.forget(b)
		ix.free.put(b.num)
	}
}

// written records a completed block write.
func (ix *Index) written(b *block) {
	ix.tick++
	b.lastAccess = ix.tick
	ix.blocks[b.num] = b
	ix.policy.written(b)
}

// publish makes s visible, replacing an older copy of the same key. The
// blocks holding its chunks must be current (see chunksCurrent).
func (ix *Index) publish(s *Segment) {
	if old, ok := ix.segs[s.Key]; ok {
		ix.remove(old)
	}
	ix.segs[s.Key] = s
	ix.bytes += s.Size
	for i, c := range s.Chunks {
		if i > 0 && s.Chunks[i-1].Block == c.Block {
			continue
		}
		b := ix.blocks[c.Block]
		b.segs = append(b.segs, s)
		ix.policy.changed(b)
	}
}

// chunksCurrent reports whether every chunk's block still holds the
// generation the chunk was written in.
func (ix *Index) chunksCurrent(chunks []Chunk) bool {
	for _, c := range chunks {
		b := ix.blocks[c.Block]
		if b == nil || b.gen != c.Gen {
			return false
		}
	}
	return true
}

// remove drops s from the segment and block tables and frees blocks left
// empty.
func (ix *Index) remove(s *Segment) {
	if ix.segs[s.Key] != s {
		return
	}
	delete(ix.segs, s.Key)
	ix.bytes -= s.Size
	for _, c := range s.Chunks {
		b := ix.blocks[c.Block]
		if b == nil || b.gen != c.Gen {
			continue
		}
		b.removeSeg(s)
		ix.policy.changed(b)
		ix.release(b)
	}
}

// Segments is the number of segments on flash.
func (ix *Index) Segments() int { return len(ix.segs) }

// UsedBlocks is the number of data blocks holding live or pending data.
func (ix *Index) UsedBlocks() int { return len(ix.blocks) }

// FreeBlocks is the number of free data blocks.
func (ix *Index) FreeBlocks() int { return ix.free.len() }
