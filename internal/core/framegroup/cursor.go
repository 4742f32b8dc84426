package framegroup

import "math"

// A Cursor plays one level of a laid-out title block by block (FG §III.3,
// Fig. 11): it reads each stream the level needs from the block holding
// its first picture to play, always extending the stream whose first
// picture not completely read comes first in decoding order, and hands
// out pictures in decoding order once every picture before them is in.
// It does no I/O: Next says which block to read, Done that it was read.
type Cursor struct {
	layout  *Layout
	streams []streamCursor
	cur     int   // stream of the block Next returned, -1 if none
	front   int64 // least front of the streams: pictures before it are complete
}

// streamCursor is one stream's progress.
type streamCursor struct {
	st     Stream
	blocks []uint32 // the stream's blocks still to read
	order  []int64  // decoding-order key of each of the stream's pictures
	cov    int      // first picture not completely read
	d      int      // next picture to hand out
}

// never is the key of a stream that has read all its pictures.
const never = math.MaxInt64

// front is the decoding-order key of s's first picture not completely
// read, never when all are.
func (s *streamCursor) front() int64 {
	if s.cov >= len(s.order) {
		return never
	}
	return s.order[s.cov]
}

// NewCursor returns a cursor that plays level lv of layout l from the
// first picture whose key is at least from. order[st] gives the key of
// each of stream st's pictures, increasing in decoding order (a decode
// index or a decode time) and one per picture of the stream.
func NewCursor(l *Layout, lv Level, order [NumStreams][]int64, from int64) *Cursor {
	c := &Cursor{layout: l, cur: -1}
	for _, st := range lv.Streams() {
		j := firstAt(order[st], from)
		bs := l.Stream(st)
		c.streams = append(c.streams, streamCursor{st: st, blocks: bs[l.StartBlock(st, j):], order: order[st], cov: j, d: j})
	}
	c.setFront()
	return c
}

// setFront computes the least front of the streams.
func (c *Cursor) setFront() {
	c.front = never
	for i := range c.streams {
		c.front = min(c.front, c.streams[i].front())
	}
}

// Next returns the block to read next; ok is false when the level has
// nothing more to read. It does not move the cursor: the same block
// comes back until Done.
func (c *Cursor) Next() (block uint32, ok bool) {
	c.cur = -1
	best := int64(never)
	for i := range c.streams {
		if f := c.streams[i].front(); f < best {
			c.cur, best = i, f
		}
	}
	if c.cur < 0 {
		return 0, false
	}
	return c.streams[c.cur].blocks[0], true
}

// Done records that the block Next returned has been read.
func (c *Cursor) Done() {
	s := &c.streams[c.cur]
	r := c.layout.Record(s.blocks[0])
	s.blocks = s.blocks[1:]
	s.cov = int(r.Complete())
	c.cur = -1
	c.setFront()
}

// Pop returns the next picture to hand out, as its stream and its index
// within the stream: the first, in decoding order, of the pictures read
// completely with none missing before it. ok is false when there is none
// until more blocks are read, or none at all.
func (c *Cursor) Pop() (st Stream, j int, ok bool) {
	best, key := -1, c.front
	for i := range c.streams {
		s := &c.streams[i]
		if s.d < min(s.cov, len(s.order)) && s.order[s.d] < key {
			best, key = i, s.order[s.d]
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	s := &c.streams[best]
	s.d++
	return s.st, s.d - 1, true
}
