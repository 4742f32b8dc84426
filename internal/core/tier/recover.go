package tier

import (
	"cmp"
	"fmt"
	"slices"
)

// RecoveryReport says what a recovery scan found (FlashStream §4.3).
type RecoveryReport struct {
	Blocks             int    // data blocks scanned
	BlocksWithData     int    // data blocks with a valid header of this cache
	Records            int    // records that verified
	CorruptRecords     int    // records or headers that failed verification
	OrphanRecords      int    // chunks of segments with a missing or corrupt chunk
	InvalidatedRecords int    // chunks of invalidated segments
	SupersededRecords  int    // chunks of older copies of a segment
	Segments           int    // segments recovered
	Bytes              int64  // their bytes
	MetaSeq            uint64 // sequence number of the metadata block used
	Invalidations      int    // entries of its invalidation table
}

// Recovery rebuilds a cache from a scan of every block of its device. Feed
// it each data block's contents with Add, then call Finish.
type Recovery struct {
	c        *Cache
	super    *Super
	headers  map[uint32]*BlockHeader
	keys     map[uint32][]string
	versions map[string]map[uint64]*version
	report   RecoveryReport
}

// version is one write of a segment found on flash: chunks by sequence.
type version struct {
	size   int64
	chunks []Chunk
	have   []bool
	bad    bool // records disagree on size or chunk count
}

func (v *version) complete() bool {
	if v.bad {
		return false
	}
	var sum int64
	for i, ok := range v.have {
		if !ok {
			return false
		}
		sum += int64(v.chunks[i].Len)
	}
	return sum == v.size
}

// Recover starts rebuilding a cache with opts from the metadata in super,
// which must match the configured geometry.
func Recover(opts Options, super *Super) (*Recovery, error) {
	c, err := newCache(opts)
	if err != nil {
		return nil, err
	}
	if super.BlockSize != c.opts.BlockSize || super.Blocks != c.nblocks {
		return nil, fmt.Errorf("%w: flash holds %d blocks of %d bytes, configured %d blocks of %d bytes",
			ErrGeometry, super.Blocks, super.BlockSize, c.nblocks, c.opts.BlockSize)
	}
	c.formatID, c.metaSeq, c.nextGen = super.FormatID, super.Seq, super.GenFloor
	for _, e := range super.Invalidate {
		c.inv.table[e.Prefix] = e.Gen
		c.nextGen = max(c.nextGen, e.Gen+1)
	}
	return &Recovery{
		c: c, super: super,
		headers:  make(map[uint32]*BlockHeader),
		keys:     make(map[uint32][]string),
		versions: make(map[string]map[uint64]*version),
		report:   RecoveryReport{MetaSeq: super.Seq, Invalidations: len(super.Invalidate)},
	}, nil
}

// Add takes the decoded contents of one data block.
func (r *Recovery) Add(bc BlockContents) {
	r.report.Blocks++
	r.report.CorruptRecords += bc.Corrupt
	if bc.Header == nil {
		return
	}
	r.report.BlocksWithData++
	r.headers[bc.Block] = bc.Header
	r.c.nextGen = max(r.c.nextGen, bc.Header.Gen+1)
	for _, rec := range bc.Records {
		r.report.Records++
		r.keys[bc.Block] = append(r.keys[bc.Block], rec.Key)
		r.addChunk(bc.Block, rec)
	}
}

func (r *Recovery) addChunk(block uint32, rec BlockRecord) {
	vs := r.versions[rec.Key]
	if vs == nil {
		vs = make(map[uint64]*version)
		r.versions[rec.Key] = vs
	}
	v := vs[rec.SegGen]
	if v == nil {
		v = &version{size: rec.SegSize, chunks: make([]Chunk, rec.Chunks), have: make([]bool, rec.Chunks)}
		vs[rec.SegGen] = v
	}
	if v.size != rec.SegSize || len(v.chunks) != int(rec.Chunks) || v.have[rec.Seq] {
		v.bad = true
		return
	}
	v.chunks[rec.Seq] = Chunk{Block: block, Off: uint32(rec.Off), Len: rec.Len, Gen: rec.BlockGen}
	v.have[rec.Seq] = true
}

// Finish builds the cache: the newest complete, valid copy of each segment
// is indexed; blocks holding none are free. Blocks enter the replacement
// policy in write order.
func (r *Recovery) Finish() (*Cache, RecoveryReport) {
	c := r.c
	nums := make([]uint32, 0, len(r.headers))
	for n, h := range r.headers {
		nums = append(nums, n)
		c.ondisk[n] = []content{{gen: h.Gen, keys: slices.Compact(r.keys[n])}}
	}
	slices.SortFunc(nums, func(a, b uint32) int { return cmp.Compare(r.headers[a].Gen, r.headers[b].Gen) })
	for _, n := range nums {
		c.ix.written(newBlock(n, r.headers[n].Gen))
	}
	for key, vs := range r.versions {
		r.pick(key, vs)
	}
	r.rebuildFree()
	return c, r.report
}

// pick indexes the newest complete copy of key that is not invalidated.
func (r *Recovery) pick(key string, vs map[uint64]*version) {
	gens := make([]uint64, 0, len(vs))
	for g := range vs {
		gens = append(gens, g)
	}
	slices.Sort(gens)
	found := false
	for i := len(gens) - 1; i >= 0; i-- {
		g, v := gens[i], vs[gens[i]]
		n := countTrue(v.have)
		switch {
		case r.c.inv.dead(key, g):
			r.report.InvalidatedRecords += n
		case !v.complete():
			r.report.OrphanRecords += n
		case found:
			r.report.SupersededRecords += n
		default:
			found = true
			r.c.ix.publish(&Segment{Key: key, Size: v.size, Gen: g, Chunks: v.chunks, count: 1})
			r.report.Segments++
			r.report.Bytes += v.size
		}
	}
}

func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// rebuildFree frees the blocks holding no live segment and lists every
// unused data block as free, lowest address handed out first.
func (r *Recovery) rebuildFree() {
	ix := r.c.ix
	for _, b := range ix.blocks {
		ix.release(b) // frees, so the list is rebuilt below anyway
	}
	f := ix.free
	f.lo, f.freed = f.n, f.freed[:0]
	for n := f.n; n > MetaBlocks; n-- {
		if _, used := ix.blocks[n-1]; !used {
			f.freed = append(f.freed, n-1)
		}
	}
}
