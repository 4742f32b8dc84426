package framestore

import (
	"fmt"

	"github.com/strata-media/strata/internal/core/framegroup"
	"github.com/strata-media/strata/internal/storage/device"
)

// player reads the blocks of one play level in the order framegroup's
// cursor gives and cuts them into pictures.
type player struct {
	s       *Store
	cur     *framegroup.Cursor
	streams [framegroup.NumStreams]streamCutter
	buf     []byte // the block being cut
}

// streamCutter collects one stream's pictures from its blocks, read in
// order.
type streamCutter struct {
	frames []framegroup.FrameRecord
	idx    int      // next picture whose bytes are being collected
	part   []byte   // bytes of picture idx so far
	ready  [][]byte // complete pictures not handed out yet, in order
}

// next returns the level's next picture in decoding order, reading blocks
// as the cursor asks; ok is false after the last one.
func (p *player) next() (f Frame, ok bool, err error) {
	for {
		if st, j, ok := p.cur.Pop(); ok {
			c := &p.streams[st]
			data := c.ready[0]
			c.ready = c.ready[1:]
			return Frame{Stream: st, FrameRecord: c.frames[j], Data: data}, true, nil
		}
		b, ok := p.cur.Next()
		if !ok {
			return Frame{}, false, nil
		}
		if err := p.read(b); err != nil {
			return Frame{}, false, err
		}
		p.cur.Done()
	}
}

// read reads block b and cuts it into its stream's pictures.
func (p *player) read(b uint32) error {
	bs := p.s.BlockSize()
	if p.buf == nil {
		p.buf = device.AlignedBuffer(bs, p.s.blocks.Alignment())
	}
	if _, err := p.s.blocks.ReadAt(p.buf, int64(b)*int64(bs)); err != nil {
		return fmt.Errorf("framestore: reading block %d: %w", b, err)
	}
	p.s.dataReads.Add(1)
	r := p.s.groups.Record(b)
	if err := p.streams[r.Stream].cut(r, p.buf); err != nil {
		return fmt.Errorf("%w: block %d (%s, start %d): %w", ErrCorrupt, b, r.Stream, r.Start, err)
	}
	return nil
}

// cut takes the bytes of the pictures r says block holds, back to back
// from its start; the rest of the block is padding, or the head of a
// picture that continues in the stream's next block when r.Fragment.
func (c *streamCutter) cut(r framegroup.BlockRecord, block []byte) error {
	if int(r.Start) != c.idx {
		return fmt.Errorf("picture %d was expected", c.idx)
	}
	pos := 0
	for k := range int(r.Frames) {
		if c.idx >= len(c.frames) {
			return fmt.Errorf("more pictures than the stream's %d", len(c.frames))
		}
		size := int(c.frames[c.idx].Size)
		if c.part == nil {
			c.part = make([]byte, 0, size)
		}
		n := min(size-len(c.part), len(block)-pos)
		c.part = append(c.part, block[pos:pos+n]...)
		pos += n
		if len(c.part) < size { // continues in the stream's next block
			if k != int(r.Frames)-1 || !r.Fragment {
				return fmt.Errorf("picture %d does not fit", c.idx)
			}
			return nil
		}
		c.ready = append(c.ready, c.part)
		c.part = nil
		c.idx++
	}
	if r.Fragment {
		return fmt.Errorf("fragment flag on a block whose pictures all end in it")
	}
	return nil
}
