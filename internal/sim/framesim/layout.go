package framesim

import (
	"slices"
	"sort"
)

// A Title is one stored video: its frames in decode order, indexed by
// stream and by play-order file offset.
type Title struct {
	Frames []Frame
	// at[k] lists the decode index of each frame of stream k, in order.
	at [numKinds][]int32
	// pos[i] is frame i's index within its stream.
	pos []int32
	// offset[i] is frame i's offset in the play-order file; the last entry
	// is the data size.
	offset []int64
}

// NewTitle indexes frames (in decode order).
func NewTitle(frames []Frame) *Title {
	t := &Title{Frames: frames, pos: make([]int32, len(frames)), offset: make([]int64, len(frames)+1)}
	for i, f := range frames {
		t.pos[i] = int32(len(t.at[f.Kind]))
		t.at[f.Kind] = append(t.at[f.Kind], int32(i))
		t.offset[i+1] = t.offset[i] + int64(f.Size)
	}
	return t
}

// Bytes is the size of the coded frames.
func (t *Title) Bytes() int64 { return t.offset[len(t.Frames)] }

// NeededBytes is the size of the frames at or after frame from that level
// lv delivers.
func (t *Title) NeededBytes(lv Level, from int) int64 {
	var n int64
	for _, f := range t.Frames[from:] {
		if lv.Needs(f.Kind) {
			n += int64(f.Size)
		}
	}
	return n
}

// firstFrom is the index within stream k of its first frame at or after
// decode index from.
func (t *Title) firstFrom(k Kind, from int) int32 {
	at := t.at[k]
	return int32(sort.Search(len(at), func(j int) bool { return int(at[j]) >= from }))
}

// metaRecord is the size of one block's metadata record (FG §III.3,
// Fig. 10: frame type, start frame index, number of frames, fragment bit,
// link offset in 6 bytes).
const metaRecord = 6

// metaKind marks a metadata block.
const metaKind = numKinds

// A block is one S-byte block of a grouped file.
type block struct {
	kind Kind // metaKind for a metadata block
	// first and last are the stream indices of the first and last frames
	// with bytes in the block; frag reports that the last one continues
	// in the next block of the stream.
	first, last int32
	frag        bool
	used        int32 // bytes of frame data; the rest is padding
	meta        int32 // block number of the metadata block describing it
}

// complete is the number of the stream's frames that end in this block or
// an earlier one.
func (b block) complete() int32 {
	if b.frag {
		return b.last
	}
	return b.last + 1
}

// GroupedFile is a title stored in the frame-grouped layout (FG §III.1,
// Fig. 7): frames go, in decode order, into five buffers of S bytes, one
// per stream; a full buffer is written as the file's next block, so block
// b lies at b*S; a frame that does not fit is split and its tail opens the
// stream's next block. At the end of the video each partly filled buffer
// is padded and written. Every block gets a 6-byte metadata record in a
// sixth buffer of S bytes, written as a block whenever it fills and at the
// end (FG §III.3).
type GroupedFile struct {
	S      int64
	blocks []block
	byKind [numKinds][]int32 // block numbers of each stream, in order
}

// NewGroupedFile lays t out in blocks of s bytes.
func NewGroupedFile(t *Title, s int64) *GroupedFile {
	g := &GroupedFile{S: s}
	b := groupBuilder{g: g, perMeta: max(1, int(s/metaRecord))}
	for i, f := range t.Frames {
		b.add(f.Kind, t.pos[i], int64(f.Size))
	}
	b.flush()
	return g
}

// groupBuilder is the writer side of FG Fig. 7: the five frame buffers
// and the metadata buffer.
type groupBuilder struct {
	g       *GroupedFile
	fill    [numKinds]int64 // bytes in each buffer
	first   [numKinds]int32 // stream index of the first frame in each buffer
	last    [numKinds]int32 // stream index of the last frame added
	pending []int32         // data blocks whose metadata record is buffered
	perMeta int             // records per metadata block
}

// add appends frame j of stream k, writing every buffer it fills.
func (b *groupBuilder) add(k Kind, j int32, size int64) {
	b.last[k] = j
	for size > 0 {
		if b.fill[k] == 0 {
			b.first[k] = j
		}
		take := min(size, b.g.S-b.fill[k])
		b.fill[k] += take
		size -= take
		if b.fill[k] == b.g.S {
			b.emit(k, size > 0)
		}
	}
}

// emit writes stream k's buffer as the next block.
func (b *groupBuilder) emit(k Kind, frag bool) {
	n := int32(len(b.g.blocks))
	b.g.blocks = append(b.g.blocks, block{kind: k, first: b.first[k], last: b.last[k], frag: frag, used: int32(b.fill[k])})
	b.g.byKind[k] = append(b.g.byKind[k], n)
	b.fill[k] = 0
	b.pending = append(b.pending, n)
	if len(b.pending) == b.perMeta {
		b.emitMeta()
	}
}

// emitMeta writes the metadata buffer as the next block.
func (b *groupBuilder) emitMeta() {
	m := int32(len(b.g.blocks))
	b.g.blocks = append(b.g.blocks, block{kind: metaKind, meta: m})
	for _, n := range b.pending {
		b.g.blocks[n].meta = m
	}
	b.pending = b.pending[:0]
}

// flush pads and writes the partly filled buffers at the end of the video.
func (b *groupBuilder) flush() {
	for k := range numKinds {
		if b.fill[k] > 0 {
			b.emit(k, false)
		}
	}
	if len(b.pending) > 0 {
		b.emitMeta()
	}
}

// Blocks is the file size in blocks of S.
func (g *GroupedFile) Blocks() int64 { return int64(len(g.blocks)) }

// startBlock is the position in stream k's block list of the block that
// holds the start of the stream's frame j.
func (g *GroupedFile) startBlock(k Kind, j int32) int {
	bs := g.byKind[k]
	return sort.Search(len(bs), func(i int) bool { return g.blocks[bs[i]].last >= j })
}

// DataBlocks returns, in file order, the data blocks that level lv reads
// to play t from frame from to the end: for each stream the level needs,
// every block from the one holding the start of its first frame at or
// after from (FG §III.1). Metadata blocks are not included.
func (g *GroupedFile) DataBlocks(t *Title, lv Level, from int) []int64 {
	var out []int64
	for _, k := range lv.Streams() {
		bs := g.byKind[k]
		for _, b := range bs[g.startBlock(k, t.firstFrom(k, from)):] {
			out = append(out, int64(b))
		}
	}
	slices.Sort(out)
	return out
}

// indexRecord is the size of one frame's entry in the play-order file's
// index (an MP4 'stsz' sample size; assumed, not in the paper).
const indexRecord = 4

// ConventionalFile is a title stored in play order (FG §IV's conventional
// method): the coded frames back to back in decode order, written from a
// single buffer of WriteBlocks*S bytes (FG §IV: 640 KB and 1,280 KB for
// S = 128 and 256 KB, five times S) padded at the end, followed by the
// frame index in blocks of S. Reads are S bytes, aligned (FG §IV: "the
// read request sizes for both the proposed and conventional methods are
// the same as the size of the separated buffers").
type ConventionalFile struct {
	S           int64
	WriteBlocks int64 // S blocks per write
	data        int64 // bytes of frames
	chunks      int64 // data blocks, a multiple of WriteBlocks
	index       int64 // index blocks after the data
}

// NewConventionalFile lays t out in play order with reads of s bytes and
// writes of writeBlocks*s bytes.
func NewConventionalFile(t *Title, s, writeBlocks int64) *ConventionalFile {
	w := s * writeBlocks
	chunks := (t.Bytes() + w - 1) / w * writeBlocks
	index := (int64(len(t.Frames))*indexRecord + s - 1) / s
	return &ConventionalFile{S: s, WriteBlocks: writeBlocks, data: t.Bytes(), chunks: chunks, index: index}
}

// Blocks is the file size in blocks of S.
func (c *ConventionalFile) Blocks() int64 { return c.chunks + c.index }

// DataBlocks returns, in file order, the S-byte blocks that level lv reads
// to play t from frame from to the end: every block holding a byte of a
// frame the level needs. The frames it skips inside those blocks are read
// and dropped (FG §IV).
func (c *ConventionalFile) DataBlocks(t *Title, lv Level, from int) []int64 {
	var out []int64
	for i := from; i < len(t.Frames); i++ {
		if !lv.Needs(t.Frames[i].Kind) {
			continue
		}
		for b := t.offset[i] / c.S; b <= (t.offset[i+1]-1)/c.S; b++ {
			if len(out) == 0 || out[len(out)-1] != b {
				out = append(out, b)
			}
		}
	}
	return out
}

// indexBlock is the index block describing frame i.
func (c *ConventionalFile) indexBlock(i int) int64 {
	return c.chunks + int64(i)*indexRecord/c.S
}
