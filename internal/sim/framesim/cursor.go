package framesim

import "math"

// A cursor plays one title at one level from a starting frame and says
// which S-byte block of the file to read next. Reads happen one at a time,
// like the paper's one thread per user with synchronous O_DIRECT requests.
type cursor interface {
	// next returns the file block (in units of S) to read next; ok is
	// false when the level has nothing more to read in the title.
	next() (blk int64, ok bool)
	// done records that the block next returned has been read and returns
	// the bytes of needed frames it completed: frames are delivered in
	// decode order, so a frame counts once every needed frame before it
	// is in too. Bytes read but never delivered (skipped frames, padding,
	// metadata, the read-ahead of a stream when the user stops) are waste.
	done() int64
}

// A file is a title laid out on the device.
type file interface {
	Blocks() int64
	cursor(t *Title, lv Level, from int) cursor
	// writes is the sequence of writes that uploads the file.
	writes() []write
}

// A write is one upload request: n blocks at block at, carrying useful
// bytes of frames (the rest is padding or index).
type write struct {
	at, n  int64
	useful int64
}

const never = math.MaxInt32

// groupedCursor reads the streams a level needs, each block by block from
// the one holding the start frame, always extending the stream that
// delivered the least far (FG §III.3, Fig. 11), and the metadata block
// of each data block before the block itself.
type groupedCursor struct {
	t        *Title
	g        *GroupedFile
	streams  []streamCursor
	metaRead map[int32]bool
	cur      int  // stream of the pending read
	meta     bool // the pending read is a metadata block
}

// streamCursor is one stream's progress.
type streamCursor struct {
	k   Kind
	bi  int   // next position in the stream's block list
	cov int32 // decode index of the first frame not completely read; never when all are
	d   int32 // next stream frame to deliver
}

func (g *GroupedFile) cursor(t *Title, lv Level, from int) cursor {
	c := &groupedCursor{t: t, g: g, metaRead: map[int32]bool{}}
	for _, k := range lv.Streams() {
		j := t.firstFrom(k, from)
		s := streamCursor{k: k, bi: g.startBlock(k, j), cov: never, d: j}
		if int(j) < len(t.at[k]) {
			s.cov = t.at[k][j]
		}
		c.streams = append(c.streams, s)
	}
	return c
}

func (c *groupedCursor) next() (int64, bool) {
	c.cur = -1
	for i, s := range c.streams {
		if s.cov != never && (c.cur < 0 || s.cov < c.streams[c.cur].cov) {
			c.cur = i
		}
	}
	if c.cur < 0 {
		return 0, false
	}
	s := c.streams[c.cur]
	b := c.g.byKind[s.k][s.bi]
	m := c.g.blocks[b].meta
	if c.meta = !c.metaRead[m]; c.meta {
		return int64(m), true
	}
	return int64(b), true
}

func (c *groupedCursor) done() int64 {
	s := &c.streams[c.cur]
	b := c.g.byKind[s.k][s.bi]
	if c.meta {
		c.metaRead[c.g.blocks[b].meta] = true
		return 0
	}
	s.bi++
	s.cov = never
	if n := c.g.blocks[b].complete(); int(n) < len(c.t.at[s.k]) {
		s.cov = c.t.at[s.k][n]
	}
	return c.deliver()
}

// deliver hands out every needed frame before the least far stream.
func (c *groupedCursor) deliver() int64 {
	front := int32(never)
	for _, s := range c.streams {
		front = min(front, s.cov)
	}
	var n int64
	for i := range c.streams {
		s := &c.streams[i]
		at := c.t.at[s.k]
		for int(s.d) < len(at) && at[s.d] < front {
			n += int64(c.t.Frames[at[s.d]].Size)
			s.d++
		}
	}
	return n
}

func (g *GroupedFile) writes() []write {
	ws := make([]write, len(g.blocks))
	for i, b := range g.blocks {
		ws[i] = write{at: int64(i), n: 1, useful: int64(b.used)}
	}
	return ws
}

// conventionalCursor reads the play-order file S bytes at a time, jumping
// over blocks that hold no needed frame, and the index block describing
// the next needed frame before its data.
type conventionalCursor struct {
	t       *Title
	c       *ConventionalFile
	lv      Level
	nf      int   // next needed frame not yet completely read
	pos     int64 // file offset just past the last data block read
	idxRead map[int64]bool
	pending int64
	index   bool
}

func (c *ConventionalFile) cursor(t *Title, lv Level, from int) cursor {
	cc := &conventionalCursor{t: t, c: c, lv: lv, nf: from, idxRead: map[int64]bool{}}
	cc.skip()
	return cc
}

// skip moves nf to the next frame the level needs.
func (c *conventionalCursor) skip() {
	for c.nf < len(c.t.Frames) && !c.lv.Needs(c.t.Frames[c.nf].Kind) {
		c.nf++
	}
}

func (c *conventionalCursor) next() (int64, bool) {
	if c.nf >= len(c.t.Frames) {
		return 0, false
	}
	if ib := c.c.indexBlock(c.nf); !c.idxRead[ib] {
		c.pending, c.index = ib, true
		return ib, true
	}
	c.pending, c.index = max(c.pos, c.t.offset[c.nf])/c.c.S, false
	return c.pending, true
}

func (c *conventionalCursor) done() int64 {
	if c.index {
		c.idxRead[c.pending] = true
		return 0
	}
	c.pos = (c.pending + 1) * c.c.S
	var n int64
	for c.nf < len(c.t.Frames) && c.t.offset[c.nf+1] <= c.pos {
		n += int64(c.t.Frames[c.nf].Size)
		c.nf++
		c.skip()
	}
	return n
}

func (c *ConventionalFile) writes() []write {
	var ws []write
	for at := int64(0); at < c.chunks; at += c.WriteBlocks {
		lo := at * c.S
		useful := max(0, min(c.data, lo+c.WriteBlocks*c.S)-lo)
		ws = append(ws, write{at: at, n: c.WriteBlocks, useful: useful})
	}
	for i := range c.index {
		ws = append(ws, write{at: c.chunks + i, n: 1})
	}
	return ws
}
