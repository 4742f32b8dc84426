package framesim

import "github.com/strata-media/strata/internal/core/framegroup"

// A Title is one stored video: its frames in decode order, indexed by
// stream and by play-order file offset.
type Title struct {
	Frames []frame
	// at[k] lists the decode index of each frame of stream k, in order:
	// the decoding-order keys framegroup's cursor merges the streams by.
	at [framegroup.NumStreams][]int64
	// offset[i] is frame i's offset in the play-order file; the last entry
	// is the data size.
	offset []int64
}

// newTitle indexes frames (in decode order).
func newTitle(frames []frame) *Title {
	t := &Title{Frames: frames, offset: make([]int64, len(frames)+1)}
	var n [framegroup.NumStreams]int
	for _, f := range frames {
		n[f.Stream]++
	}
	for st, c := range n {
		t.at[st] = make([]int64, 0, c)
	}
	for i, f := range frames {
		t.at[f.Stream] = append(t.at[f.Stream], int64(i))
		t.offset[i+1] = t.offset[i] + int64(f.Size)
	}
	return t
}

// Bytes is the size of the coded frames.
func (t *Title) Bytes() int64 { return t.offset[len(t.Frames)] }

// NeededBytes is the size of the frames at or after frame from that level
// lv delivers.
func (t *Title) NeededBytes(lv framegroup.Level, from int) int64 {
	var n int64
	for _, f := range t.Frames[from:] {
		if lv.Includes(f.Stream) {
			n += int64(f.Size)
		}
	}
	return n
}

// metaRecord is the size of one block's metadata record (FG §III.3,
// Fig. 10: frame type, start frame index, number of frames, fragment bit,
// link offset in 6 bytes).
const metaRecord = 6

// groupedFile is a title stored in the frame-grouped layout (FG §III.1,
// Fig. 7) as framegroup's Packer lays it out for the server: the data
// blocks in the order the packer closes them, so block b lies at b*S.
// Every data block also gets a 6-byte metadata record in a metadata buffer
// of S bytes, written as a block among the data blocks whenever it fills
// and at the end (FG §III.3; the server keeps its 8-byte records in a
// separate index file instead).
type groupedFile struct {
	S      int64
	layout *framegroup.Layout
	blocks []fileBlock // in file order
	file   []int32     // file block of each of the layout's data blocks
	meta   []int32     // metadata block describing each data block
}

// A fileBlock is one S-byte block of a grouped file.
type fileBlock struct {
	data int32 // the layout's data block, -1 for a metadata block
	used int32 // bytes of frame data; the rest is padding
}

// newGroupedFile lays t out in blocks of s bytes.
func newGroupedFile(t *Title, s int64) *groupedFile {
	perMeta := max(1, int(s/metaRecord))
	data := int(t.Bytes()/s) + framegroup.NumStreams // at most, but for blocks closed early
	g := &groupedFile{S: s, blocks: make([]fileBlock, 0, data+data/perMeta+1),
		file: make([]int32, 0, data), meta: make([]int32, 0, data)}
	var pending []int32 // data blocks whose metadata record is buffered
	emitMeta := func() {
		m := int32(len(g.blocks))
		g.blocks = append(g.blocks, fileBlock{data: -1})
		for _, d := range pending {
			g.meta[d] = m
		}
		pending = pending[:0]
	}
	p := framegroup.NewPacker(int(s), false, func(b framegroup.Block) error {
		g.file = append(g.file, int32(len(g.blocks)))
		g.meta = append(g.meta, -1)
		g.blocks = append(g.blocks, fileBlock{data: int32(b.Number), used: int32(b.Used)})
		if pending = append(pending, int32(b.Number)); len(pending) == perMeta {
			emitMeta()
		}
		return nil
	})
	for _, f := range t.Frames {
		mustPack(p.Add(f.Stream, int(f.Size), nil))
	}
	mustPack(p.Finish())
	if len(pending) > 0 {
		emitMeta()
	}
	g.layout = p.Layout()
	return g
}

// mustPack panics on a packer error: the simulator's frames are always
// valid, so one is a broken invariant.
func mustPack(err error) {
	if err != nil {
		panic(err)
	}
}

// Blocks is the file size in blocks of S.
func (g *groupedFile) Blocks() int64 { return int64(len(g.blocks)) }

// DataBlocks returns, in file order, the data blocks that level lv reads
// to play t from frame from to the end (framegroup's Layout.LevelBlocks).
// Metadata blocks are not included.
func (g *groupedFile) DataBlocks(t *Title, lv framegroup.Level, from int) []int64 {
	var out []int64
	for _, b := range g.layout.LevelBlocks(lv, t.at, int64(from)) {
		out = append(out, int64(g.file[b])) // file order follows layout order
	}
	return out
}

// indexRecord is the size of one frame's entry in the play-order file's
// index (an MP4 'stsz' sample size; assumed, not in the paper).
const indexRecord = 4

// conventionalFile is a title stored in play order (FG §IV's conventional
// method): the coded frames back to back in decode order, written from a
// single buffer of WriteBlocks*S bytes (FG §IV: 640 KB and 1,280 KB for
// S = 128 and 256 KB, five times S) padded at the end, followed by the
// frame index in blocks of S. Reads are S bytes, aligned (FG §IV: "the
// read request sizes for both the proposed and conventional methods are
// the same as the size of the separated buffers").
type conventionalFile struct {
	S           int64
	WriteBlocks int64 // S blocks per write
	data        int64 // bytes of frames
	chunks      int64 // data blocks, a multiple of WriteBlocks
	index       int64 // index blocks after the data
}

// newConventionalFile lays t out in play order with reads of s bytes and
// writes of writeBlocks*s bytes.
func newConventionalFile(t *Title, s, writeBlocks int64) *conventionalFile {
	w := s * writeBlocks
	chunks := (t.Bytes() + w - 1) / w * writeBlocks
	index := (int64(len(t.Frames))*indexRecord + s - 1) / s
	return &conventionalFile{S: s, WriteBlocks: writeBlocks, data: t.Bytes(), chunks: chunks, index: index}
}

// Blocks is the file size in blocks of S.
func (c *conventionalFile) Blocks() int64 { return c.chunks + c.index }

// DataBlocks returns, in file order, the S-byte blocks that level lv reads
// to play t from frame from to the end: every block holding a byte of a
// frame the level needs. The frames it skips inside those blocks are read
// and dropped (FG §IV).
func (c *conventionalFile) DataBlocks(t *Title, lv framegroup.Level, from int) []int64 {
	var out []int64
	for i := from; i < len(t.Frames); i++ {
		if !lv.Includes(t.Frames[i].Stream) {
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
func (c *conventionalFile) indexBlock(i int) int64 {
	return c.chunks + int64(i)*indexRecord/c.S
}
