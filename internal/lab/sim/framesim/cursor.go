package framesim

import "github.com/strata-media/strata/internal/core/framegroup"

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
	cursor(t *Title, lv framegroup.Level, from int) cursor
	// writes is the sequence of writes that uploads the file.
	writes() []write
}

// A write is one upload request: n blocks at block at, carrying useful
// bytes of frames (the rest is padding or index).
type write struct {
	at, n  int64
	useful int64
}

// groupedCursor plays a grouped file with framegroup's Cursor, the one
// the server's store reads with (FG §III.3, Fig. 11), and reads the
// metadata block of each data block before the block itself.
type groupedCursor struct {
	t        *Title
	g        *groupedFile
	c        *framegroup.Cursor
	metaRead map[int32]bool
	data     uint32 // the layout's data block of the pending read
	meta     bool   // the pending read is its metadata block
}

func (g *groupedFile) cursor(t *Title, lv framegroup.Level, from int) cursor {
	return &groupedCursor{t: t, g: g, c: framegroup.NewCursor(g.layout, lv, t.at, int64(from)), metaRead: map[int32]bool{}}
}

func (c *groupedCursor) next() (int64, bool) {
	b, ok := c.c.Next()
	if !ok {
		return 0, false
	}
	c.data = b
	m := c.g.meta[b]
	if c.meta = !c.metaRead[m]; c.meta {
		return int64(m), true
	}
	return int64(c.g.file[b]), true
}

func (c *groupedCursor) done() int64 {
	if c.meta {
		c.metaRead[c.g.meta[c.data]] = true
		return 0
	}
	c.c.Done()
	var n int64
	for st, j, ok := c.c.Pop(); ok; st, j, ok = c.c.Pop() {
		n += int64(c.t.Frames[c.t.at[st][j]].Size)
	}
	return n
}

func (g *groupedFile) writes() []write {
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
	c       *conventionalFile
	lv      framegroup.Level
	nf      int   // next needed frame not yet completely read
	pos     int64 // file offset just past the last data block read
	idxRead map[int64]bool
	pending int64
	index   bool
}

func (c *conventionalFile) cursor(t *Title, lv framegroup.Level, from int) cursor {
	cc := &conventionalCursor{t: t, c: c, lv: lv, nf: from, idxRead: map[int64]bool{}}
	cc.skip()
	return cc
}

// skip moves nf to the next frame the level needs.
func (c *conventionalCursor) skip() {
	for c.nf < len(c.t.Frames) && !c.lv.Includes(c.t.Frames[c.nf].Stream) {
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

func (c *conventionalFile) writes() []write {
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
