package framestore

import "fmt"

// packer is the paper's placement with separated buffers (§III.1, Fig. 7)
// as a plain data structure: pictures go, in decoding order, into the
// buffer of their stream; a buffer that reaches S bytes becomes the next
// block, so blocks are numbered in write order and every write is exactly
// S bytes. It does no I/O itself: with write set it hands each full block
// to it, and without (bufs nil) it only counts, which is how Create learns
// the size of the blocks file before writing it.
type packer struct {
	size    int                   // S, bytes
	bufs    [NumStreams][]byte    // per stream buffer of S bytes; nil when counting
	open    [NumStreams]openBlock // what each buffer holds
	last    [NumStreams]int       // record index of each stream's last block, -1 if none
	first   [NumStreams]uint32    // first block of each stream
	next    [NumStreams]uint32    // pictures so far per stream
	records []BlockRecord         // one per closed block, in block order
	write   func(block uint32, data []byte) error
}

// openBlock describes a stream's buffer: used bytes, and the pictures with
// bytes in it.
type openBlock struct {
	used   int
	start  uint32
	frames int
}

func newPacker(size int, write func(uint32, []byte) error) *packer {
	p := &packer{size: size, write: write}
	for s := range NumStreams {
		p.last[s] = -1
		p.first[s] = noBlock
		if write != nil {
			p.bufs[s] = make([]byte, size)
		}
	}
	return p
}

// add places a picture of size bytes in stream st; data is its bytes, or
// nil when counting.
func (p *packer) add(st Stream, size int, data []byte) error {
	if st >= NumStreams || size <= 0 || data != nil && len(data) != size {
		return fmt.Errorf("%w: picture of %d bytes (%d given) in stream %d", ErrInvalid, size, len(data), st)
	}
	idx := p.next[st]
	if idx > maxStartIndex {
		return fmt.Errorf("%w: more than %d pictures in stream %s", ErrInvalid, maxStartIndex+1, st)
	}
	p.next[st]++
	ob := &p.open[st]
	if ob.frames == maxFrames { // the count field is full: close the block early, padded
		if err := p.close(st, false); err != nil {
			return err
		}
	}
	return p.fill(st, idx, size, data)
}

// fill copies the picture into its stream's buffer, closing each buffer
// that fills up; a picture that does not fit continues in the next block.
func (p *packer) fill(st Stream, idx uint32, size int, data []byte) error {
	ob := &p.open[st]
	if ob.frames == 0 {
		ob.start = idx
	}
	ob.frames++
	for done := 0; done < size; {
		n := min(size-done, p.size-ob.used)
		if data != nil {
			copy(p.bufs[st][ob.used:], data[done:done+n])
		}
		ob.used += n
		done += n
		if ob.used < p.size {
			break
		}
		if err := p.close(st, done < size); err != nil {
			return err
		}
		if done < size { // the rest of the picture opens the next block
			ob.start, ob.frames = idx, 1
		}
	}
	return nil
}

// close turns stream st's buffer into the next block: its record, the
// link offset of the stream's previous block, and the write.
func (p *packer) close(st Stream, fragment bool) error {
	ob := &p.open[st]
	b := uint32(len(p.records))
	if l := p.last[st]; l >= 0 {
		p.records[l].Link = uint16(min(int64(b)-int64(l), farLink))
	} else {
		p.first[st] = b
	}
	p.records = append(p.records, BlockRecord{Stream: st, Fragment: fragment, Start: ob.start, Frames: uint16(ob.frames)})
	p.last[st] = int(b)
	used := ob.used
	*ob = openBlock{}
	if p.write == nil {
		return nil
	}
	clear(p.bufs[st][used:]) // the paper pads the last block with zeros
	return p.write(b, p.bufs[st])
}

// finish closes every non-empty buffer, in stream order, padded.
func (p *packer) finish() error {
	for st := range Stream(NumStreams) {
		if p.open[st].frames > 0 {
			if err := p.close(st, false); err != nil {
				return err
			}
		}
	}
	return nil
}
