package framegroup

import "fmt"

// A Block is one block the Packer closed.
type Block struct {
	// Number is the block's place in the layout: blocks are numbered in
	// the order they close.
	Number uint32
	Stream Stream
	// Used is the bytes of pictures in the block; the rest is padding.
	Used int
	// Data is the block's S bytes, zero-padded, when the packer holds
	// bytes; nil when it only counts. It is the packer's buffer, valid
	// until the emit function returns.
	Data []byte
}

// A Packer is the placement with separated buffers (FG §III.1, Fig. 7):
// pictures go, in decoding order, into the buffer of their stream; a
// buffer that reaches S bytes becomes the next block, so blocks are
// numbered in write order and every block is exactly S bytes; a picture
// that does not fit is split and its tail opens the stream's next block.
// Finish closes the partly filled buffers, zero-padded, in stream order.
// It does no I/O: it hands each closed block to the emit function it was
// given, which writes it or records it.
type Packer struct {
	size    int                   // S, bytes
	bufs    [NumStreams][]byte    // per stream buffer of S bytes; nil when counting
	open    [NumStreams]openBlock // what each buffer holds
	next    [NumStreams]uint32    // pictures so far per stream
	layout  Layout
	emit    func(Block) error
	counted bool // no bytes: Add takes sizes only
}

// openBlock describes a stream's buffer: used bytes, and the pictures with
// bytes in it.
type openBlock struct {
	used   int
	start  uint32
	frames int
}

// NewPacker returns a packer of blocks of size bytes that calls emit, if
// not nil, with each block it closes. With withData it copies the bytes
// of each picture into its blocks; without, Add takes sizes only.
func NewPacker(size int, withData bool, emit func(Block) error) *Packer {
	p := &Packer{size: size, emit: emit, counted: !withData}
	p.layout.size = size
	for s := range NumStreams {
		p.layout.first[s] = NoBlock
		if withData {
			p.bufs[s] = make([]byte, size)
		}
	}
	return p
}

// Add places a picture of size bytes in stream st; data is its bytes, or
// nil when the packer only counts.
func (p *Packer) Add(st Stream, size int, data []byte) error {
	if st >= NumStreams || size <= 0 || p.counted != (data == nil) || data != nil && len(data) != size {
		return fmt.Errorf("%w: picture of %d bytes (%d given) in stream %d", ErrInvalid, size, len(data), st)
	}
	idx := p.next[st]
	if idx > MaxStartIndex {
		return fmt.Errorf("%w: more than %d pictures in stream %s", ErrInvalid, MaxStartIndex+1, st)
	}
	p.next[st]++
	p.layout.frames[st]++
	if p.open[st].frames == MaxFrames { // the count field is full: close the block early, padded
		if err := p.close(st, false); err != nil {
			return err
		}
	}
	return p.fill(st, idx, size, data)
}

// fill copies the picture into its stream's buffer, closing each buffer
// that fills up; a picture that does not fit continues in the next block.
func (p *Packer) fill(st Stream, idx uint32, size int, data []byte) error {
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
// link offset of the stream's previous block, and the emit.
func (p *Packer) close(st Stream, fragment bool) error {
	ob := &p.open[st]
	b := p.layout.add(BlockRecord{Stream: st, Fragment: fragment, Start: ob.start, Frames: uint16(ob.frames)})
	blk := Block{Number: b, Stream: st, Used: ob.used}
	*ob = openBlock{}
	if buf := p.bufs[st]; buf != nil {
		clear(buf[blk.Used:]) // FG pads the last block with zeros
		blk.Data = buf
	}
	if p.emit == nil {
		return nil
	}
	return p.emit(blk)
}

// Finish closes every non-empty buffer, in stream order, padded.
func (p *Packer) Finish() error {
	for st := range Stream(NumStreams) {
		if p.open[st].frames > 0 {
			if err := p.close(st, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// Layout returns the layout of the blocks closed so far, the whole
// title's after Finish. It is the packer's own and grows with it.
func (p *Packer) Layout() *Layout { return &p.layout }
