package framegroup

import (
	"fmt"
	"slices"
	"sort"
)

// A Layout is a title's pictures grouped into blocks: the record of each
// block in block order, and each stream's blocks in order.
type Layout struct {
	size    int
	records []BlockRecord
	first   [NumStreams]uint32   // first block of each stream, NoBlock if empty
	streams [NumStreams][]uint32 // blocks of each stream, in order
	frames  [NumStreams]uint32   // pictures per stream
}

// add appends r as the next block and links the stream's previous block
// to it.
func (l *Layout) add(r BlockRecord) uint32 {
	b := uint32(len(l.records))
	if bs := l.streams[r.Stream]; len(bs) > 0 {
		prev := bs[len(bs)-1]
		l.records[prev].Link = uint16(min(int64(b)-int64(prev), FarLink))
	} else {
		l.first[r.Stream] = b
	}
	l.records = append(l.records, r)
	l.streams[r.Stream] = append(l.streams[r.Stream], b)
	return b
}

// NewLayout rebuilds a layout from stored records: each stream's blocks
// are found from its first block by the link offsets (FG §III.3),
// searching forward when the distance did not fit in 16 bits, and must
// hold its frames pictures in order without a gap.
func NewLayout(size int, recs []BlockRecord, first, frames [NumStreams]uint32) (*Layout, error) {
	l := &Layout{size: size, records: recs, first: first, frames: frames}
	for st := range Stream(NumStreams) {
		if err := l.follow(st); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// follow lists stream st's blocks and checks that each starts where the
// previous one stopped.
func (l *Layout) follow(st Stream) error {
	var want uint32 // the picture the next block must start with
	for b := l.first[st]; b != NoBlock; {
		if b >= uint32(len(l.records)) || l.records[b].Stream != st || l.records[b].Start != want {
			return fmt.Errorf("%w: %s: block %d where picture %d was expected", ErrCorrupt, st, b, want)
		}
		l.streams[st] = append(l.streams[st], b)
		want = l.records[b].Complete()
		b = l.nextBlock(st, b)
	}
	if want != l.frames[st] {
		return fmt.Errorf("%w: %s ends before picture %d of %d", ErrCorrupt, st, want, l.frames[st])
	}
	return nil
}

// nextBlock is the block of stream st after block b, NoBlock if none or
// if none can be found.
func (l *Layout) nextBlock(st Stream, b uint32) uint32 {
	switch link := l.records[b].Link; link {
	case 0:
		return NoBlock
	case FarLink:
		for n := int64(b) + FarLink; n < int64(len(l.records)); n++ {
			if l.records[n].Stream == st {
				return uint32(n)
			}
		}
		return NoBlock
	default:
		return b + uint32(link)
	}
}

// BlockSize is S, bytes.
func (l *Layout) BlockSize() int { return l.size }

// Blocks is the number of data blocks.
func (l *Layout) Blocks() int { return len(l.records) }

// Record returns block b's record.
func (l *Layout) Record(b uint32) BlockRecord { return l.records[b] }

// Records returns the block records in block order; the caller must not
// change them.
func (l *Layout) Records() []BlockRecord { return l.records }

// First returns each stream's first block, NoBlock if it has none.
func (l *Layout) First() [NumStreams]uint32 { return l.first }

// Frames returns the number of pictures of stream st.
func (l *Layout) Frames(st Stream) int { return int(l.frames[st]) }

// Stream returns stream st's blocks in order; the caller must not change
// them.
func (l *Layout) Stream(st Stream) []uint32 { return l.streams[st] }

// StartBlock is the position in Stream(st) of the block that holds the
// start of the stream's picture j (len(Stream(st)) when j is past the
// end).
func (l *Layout) StartBlock(st Stream, j int) int {
	bs := l.streams[st]
	return sort.Search(len(bs), func(i int) bool {
		r := l.records[bs[i]]
		return int(r.Start)+int(r.Frames)-1 >= j
	})
}

// LevelBlocks returns, in block order, the blocks level lv reads to play
// from the first picture whose key is at least from to the end: for each
// stream the level needs, every block from the one holding the start of
// that picture (FG §III.1). order is as for NewCursor.
func (l *Layout) LevelBlocks(lv Level, order [NumStreams][]int64, from int64) []uint32 {
	var out []uint32
	for _, st := range lv.Streams() {
		out = append(out, l.streams[st][l.StartBlock(st, firstAt(order[st], from)):]...)
	}
	slices.Sort(out)
	return out
}

// firstAt is the index of the first key at least from.
func firstAt(keys []int64, from int64) int {
	j, _ := slices.BinarySearch(keys, from)
	return j
}
