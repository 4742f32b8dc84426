package framegroup

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// title is a random title for the model checks: each picture's stream,
// size and bytes, in decoding order.
type title struct {
	streams []Stream
	data    [][]byte
	order   [NumStreams][]int64
}

func randomTitle(rng *rand.Rand, n, maxSize int) *title {
	t := &title{}
	var g Grouper
	for i := range n {
		k := []Kind{KindI, KindP, KindB, KindB}[rng.IntN(4)]
		st := g.Assign(k, rng.IntN(4) == 0)
		data := make([]byte, 1+rng.IntN(maxSize))
		for j := range data {
			data[j] = byte(i*31 + j)
		}
		t.streams = append(t.streams, st)
		t.data = append(t.data, data)
		t.order[st] = append(t.order[st], int64(i))
	}
	return t
}

// pack lays t out with bytes, returning the layout and each block's bytes.
func (t *title) pack(tb testing.TB, size int) (*Layout, [][]byte) {
	var blocks [][]byte
	p := NewPacker(size, true, func(b Block) error {
		if int(b.Number) != len(blocks) || len(b.Data) != size {
			tb.Fatalf("block %d of %d bytes after %d blocks", b.Number, len(b.Data), len(blocks))
		}
		blocks = append(blocks, bytes.Clone(b.Data))
		return nil
	})
	for i, d := range t.data {
		if err := p.Add(t.streams[i], len(d), d); err != nil {
			tb.Fatal(err)
		}
	}
	if err := p.Finish(); err != nil {
		tb.Fatal(err)
	}
	return p.Layout(), blocks
}

// TestPackerModel packs random titles and checks them against the
// pictures: each stream's blocks hold its pictures' bytes back to back,
// zero-padded only in its last block; the records, stored and reloaded,
// give the same streams; and a cursor from a random picture reads exactly
// the blocks LevelBlocks lists, each once, and hands out exactly the
// level's pictures from there, in decoding order.
func TestPackerModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for range 50 {
		tt := randomTitle(rng, 1+rng.IntN(300), 1+rng.IntN(3000))
		size := 1 + rng.IntN(2048)
		l, blocks := tt.pack(t, size)
		checkStreams(t, tt, l, blocks, size)
		checkReload(t, l)
		lv := Levels[rng.IntN(len(Levels))]
		checkCursor(t, tt, l, lv, int64(rng.IntN(len(tt.data))))
	}
}

func checkStreams(t *testing.T, tt *title, l *Layout, blocks [][]byte, size int) {
	for st := range Stream(NumStreams) {
		var want, got []byte
		for i, d := range tt.data {
			if tt.streams[i] == st {
				want = append(want, d...)
			}
		}
		for _, b := range l.Stream(st) {
			got = append(got, blocks[b]...)
		}
		if pad := len(got) - len(want); pad < 0 || pad >= size && len(want) > 0 || !bytes.Equal(got[:len(want)], want) ||
			!bytes.Equal(got[len(want):], make([]byte, pad)) {
			t.Fatalf("S=%d %s: blocks hold %d bytes, pictures %d", size, st, len(got), len(want))
		}
	}
}

func checkReload(t *testing.T, l *Layout) {
	recs, err := DecodeRecords(EncodeRecords(l.Records()))
	if err != nil {
		t.Fatal(err)
	}
	var frames [NumStreams]uint32
	for st := range Stream(NumStreams) {
		frames[st] = uint32(l.Frames(st))
	}
	back, err := NewLayout(l.BlockSize(), recs, l.First(), frames)
	if err != nil {
		t.Fatal(err)
	}
	for st := range Stream(NumStreams) {
		if !slices.Equal(back.Stream(st), l.Stream(st)) {
			t.Fatalf("%s: reloaded %v, packed %v", st, back.Stream(st), l.Stream(st))
		}
	}
}

func checkCursor(t *testing.T, tt *title, l *Layout, lv Level, from int64) {
	var want []int64
	for i, st := range tt.streams {
		if int64(i) >= from && lv.Includes(st) {
			want = append(want, int64(i))
		}
	}
	var read []uint32
	var got []int64
	c := NewCursor(l, lv, tt.order, from)
	for b, ok := c.Next(); ok; b, ok = c.Next() {
		read = append(read, b)
		c.Done()
		for st, j, ok := c.Pop(); ok; st, j, ok = c.Pop() {
			got = append(got, tt.order[st][j])
		}
	}
	slices.Sort(read)
	if lb := l.LevelBlocks(lv, tt.order, from); !slices.Equal(read, lb) {
		t.Fatalf("%s from %d: read %v, LevelBlocks %v", lv, from, read, lb)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s from %d: handed out %v, want %v", lv, from, got, want)
	}
}

// TestFarLink puts more than 65,535 blocks between two P blocks: the
// first links with FarLink and NewLayout finds the second by searching.
func TestFarLink(t *testing.T) {
	p := NewPacker(1, false, nil)
	add := func(st Stream, size int) {
		if err := p.Add(st, size, nil); err != nil {
			t.Fatal(err)
		}
	}
	add(P, 1)
	add(IOdd, FarLink+10)
	add(P, 1)
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	l := p.Layout()
	ps := l.Stream(P)
	if len(ps) != 2 || l.Record(ps[0]).Link != FarLink || ps[1]-ps[0] != FarLink+11 {
		t.Fatalf("P blocks %v, first links %d", ps, l.Record(ps[0]).Link)
	}
	checkReload(t, l)
}

// TestBlockClosesAtMaxFrames fills one block with more pictures than a
// record can count: it closes early, padded, at MaxFrames.
func TestBlockClosesAtMaxFrames(t *testing.T) {
	p := NewPacker(1<<20, false, nil)
	for range MaxFrames + 1 {
		if err := p.Add(BOdd, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	recs := p.Layout().Records()
	if len(recs) != 2 || recs[0].Frames != MaxFrames || recs[0].Fragment || recs[1].Start != MaxFrames || recs[1].Frames != 1 {
		t.Fatalf("records %v", recs)
	}
}
