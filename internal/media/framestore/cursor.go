package framestore

import (
	"fmt"

	"github.com/strata-media/strata/internal/storage/device"
)

// cursor reads one stream's pictures in order, a whole block at a time.
type cursor struct {
	s      *Store
	st     Stream
	frames []FrameRecord
	idx    int // next picture

	block uint32 // block in buf, noBlock before the first
	buf   []byte
	pos   int // next unread byte of buf
	left  int // pictures of the block not yet finished
}

func (c *cursor) done() bool { return c.idx >= len(c.frames) }

// next returns the stream's next picture with its bytes, loading the
// stream's following blocks as its bytes run over.
func (c *cursor) next() (Frame, error) {
	rec := c.frames[c.idx]
	f := Frame{Stream: c.st, FrameRecord: rec, Data: make([]byte, 0, rec.Size)}
	if c.left == 0 && c.block != noBlock {
		c.pos = len(c.buf) // the rest of the block is padding
	}
	for need := int(rec.Size); need > 0; {
		if c.pos == len(c.buf) {
			if err := c.advance(len(f.Data) > 0); err != nil {
				return Frame{}, err
			}
		}
		n := min(need, len(c.buf)-c.pos)
		f.Data = append(f.Data, c.buf[c.pos:c.pos+n]...)
		c.pos += n
		need -= n
		if need == 0 || c.pos == len(c.buf) {
			c.left-- // the picture ends here or continues in the next block
		}
	}
	c.idx++
	return f, nil
}

// advance reads the stream's next block and checks that its record
// agrees: same stream, starting at the picture being read, and flagged as
// a continuation exactly when one is expected.
func (c *cursor) advance(continued bool) error {
	b, err := c.nextBlock()
	if err != nil {
		return err
	}
	r := c.s.records[b]
	if r.Stream != c.st || r.Start != uint32(c.idx) || continued != c.fragmented() {
		return fmt.Errorf("%w: block %d (%s, start %d) where %s picture %d was expected",
			ErrCorrupt, b, r.Stream, r.Start, c.st, c.idx)
	}
	if c.buf == nil {
		c.buf = device.AlignedBuffer(c.s.BlockSize(), c.s.blocks.Alignment())
	}
	if _, err := c.s.blocks.ReadAt(c.buf, int64(b)*int64(c.s.BlockSize())); err != nil {
		return fmt.Errorf("framestore: reading block %d: %w", b, err)
	}
	c.s.dataReads.Add(1)
	c.block, c.pos, c.left = b, 0, int(r.Frames)
	return nil
}

// fragmented reports whether the block in buf ends with a fragment.
func (c *cursor) fragmented() bool {
	return c.block != noBlock && c.s.records[c.block].Fragment
}

// nextBlock finds the stream's block after the current one: its first
// block, then by link offsets (paper §III.3), searching forward when the
// distance did not fit in 16 bits.
func (c *cursor) nextBlock() (uint32, error) {
	if c.block == noBlock {
		return c.s.hdr.FirstBlock[c.st], nil
	}
	link := c.s.records[c.block].Link
	switch link {
	case 0:
		return 0, fmt.Errorf("%w: %s ends at block %d before picture %d", ErrCorrupt, c.st, c.block, c.idx)
	case farLink:
		for b := int64(c.block) + farLink; b < int64(len(c.s.records)); b++ {
			if c.s.records[b].Stream == c.st {
				return uint32(b), nil
			}
		}
		return 0, fmt.Errorf("%w: %s: no block after %d", ErrCorrupt, c.st, c.block)
	}
	b := int64(c.block) + int64(link)
	if b >= int64(len(c.s.records)) {
		return 0, fmt.Errorf("%w: link from block %d past the end", ErrCorrupt, c.block)
	}
	return uint32(b), nil
}
