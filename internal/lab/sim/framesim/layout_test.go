package framesim

import (
	"math/rand/v2"
	"slices"
	"testing"

	fg "github.com/strata-media/strata/internal/core/framegroup"
)

// figSeven is a short title in decode order, small enough to lay out by
// hand with S = 200 bytes (like FG Fig. 7, where frames straddle blocks).
func figSeven() *Title {
	return newTitle([]frame{
		{fg.IOdd, 250}, {fg.P, 120}, {fg.BOdd, 40}, {fg.BEven, 40}, {fg.P, 120}, {fg.BOdd, 40}, {fg.BEven, 40},
		{fg.IEven, 250}, {fg.P, 120}, {fg.BOdd, 40}, {fg.BEven, 40}, {fg.IOdd, 250},
	})
}

// TestGroupedBlocksByHand checks the file the simulator plays, the
// server's data blocks with the paper's metadata blocks among them, and
// which blocks each level reads against a layout worked out by hand:
//
//	block 0 I-odd  I1[0:200]            (fragment)
//	block 1 P      P1 P2[0:80]          (fragment)
//	block 2 I-even I2[0:200]            (fragment)
//	block 3 I-odd  I1[200:] I3[0:150]   (fragment)
//	block 4 I-odd  I3[150:]             padded at the end, then
//	block 5 I-even, 6 P, 7 B-odd, 8 B-even, 9 metadata
func TestGroupedBlocksByHand(t *testing.T) {
	tt := figSeven()
	g := newGroupedFile(tt, 200)
	const meta = "metadata"
	kinds := []string{"I-odd", "P", "I-even", "I-odd", "I-odd", "I-even", "P", "B-odd", "B-even", meta}
	if len(g.blocks) != len(kinds) {
		t.Fatalf("%d blocks, want %d", len(g.blocks), len(kinds))
	}
	for i, k := range kinds {
		got := meta
		if d := g.blocks[i].data; d >= 0 {
			got = g.layout.Record(uint32(d)).Stream.String()
		}
		if got != k {
			t.Errorf("block %d is %v, want %v", i, got, k)
		}
	}
	cases := []struct {
		lv   fg.Level
		from int
		want []int64
	}{
		{5, 0, []int64{0, 3, 4}},
		{4, 0, []int64{0, 2, 3, 4, 5}},
		{3, 0, []int64{0, 1, 2, 3, 4, 5, 6}},
		{2, 0, []int64{0, 1, 2, 3, 4, 5, 6, 7}},
		{1, 0, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{5, 7, []int64{3, 4}},          // from I2: the next odd I is I3, which starts in block 3
		{3, 7, []int64{2, 3, 4, 5, 6}}, // P3 (frame 8) is in block 6 only
	}
	for _, c := range cases {
		if got := g.DataBlocks(tt, c.lv, c.from); !slices.Equal(got, c.want) {
			t.Errorf("L%d from %d reads %v, want %v", c.lv, c.from, got, c.want)
		}
	}
}

func TestConventionalBlocksByHand(t *testing.T) {
	tt := figSeven() // frames at 0, 250, 370, 410, 450, 570, 610, 650, 900, 1020, 1060, 1100..1350
	c := newConventionalFile(tt, 200, 5)
	if c.chunks != 10 || c.index != 1 {
		t.Fatalf("%d data blocks and %d index blocks, want 10 and 1", c.chunks, c.index)
	}
	cases := []struct {
		lv   fg.Level
		want []int64
	}{
		{5, []int64{0, 1, 5, 6}},
		{4, []int64{0, 1, 3, 4, 5, 6}},
		{3, []int64{0, 1, 2, 3, 4, 5, 6}},
	}
	for _, x := range cases {
		if got := c.DataBlocks(tt, x.lv, 0); !slices.Equal(got, x.want) {
			t.Errorf("L%d reads %v, want %v", x.lv, got, x.want)
		}
	}
}

// TestGroupedStreamsHoldTheirFrames checks on a real-sized title that each
// stream's blocks hold exactly its frames, that only a stream's last block
// is short, and that there is one metadata block per S/6 data blocks.
func TestGroupedStreamsHoldTheirFrames(t *testing.T) {
	tt := testTitle(42, 40)
	for _, s := range []int64{8 << 10, 128 << 10, 4 << 20} {
		g := newGroupedFile(tt, s)
		var want, got [fg.NumStreams]int64
		for _, f := range tt.Frames {
			want[f.Stream] += int64(f.Size)
		}
		data := 0
		for k := range fg.Stream(fg.NumStreams) {
			bs := g.layout.Stream(k)
			for i, b := range bs {
				used := g.blocks[g.file[b]].used
				got[k] += int64(used)
				if i < len(bs)-1 && int64(used) != s {
					t.Errorf("S=%d: %v block %d holds %d bytes", s, k, b, used)
				}
				data++
			}
		}
		if got != want {
			t.Errorf("S=%d: streams hold %v bytes, frames are %v", s, got, want)
		}
		perMeta := int(s / metaRecord)
		if metas := len(g.blocks) - data; metas != (data+perMeta-1)/perMeta {
			t.Errorf("S=%d: %d metadata blocks for %d data blocks", s, metas, data)
		}
	}
}

// TestCursorsReadTheLevelsBlocks plays random titles from random GOPs and
// checks that each layout's cursor reads exactly the blocks DataBlocks
// lists, plus its index, and delivers exactly the needed frames.
func TestCursorsReadTheLevelsBlocks(t *testing.T) {
	seed := uint64(7)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for trial := range 20 {
		tt := testTitle(seed+uint64(trial), 10+rng.IntN(30))
		from := rng.IntN(len(tt.Frames)/90) * 90
		s := int64(4<<10) << rng.IntN(8)
		lv := fg.Level(1 + rng.IntN(5))
		files := map[string]interface {
			file
			DataBlocks(*Title, fg.Level, int) []int64
		}{"grouped": newGroupedFile(tt, s), "conventional": newConventionalFile(tt, s, 5)}
		for name, f := range files {
			data, meta, bytes := drain(f.cursor(tt, lv, from), f)
			if want := f.DataBlocks(tt, lv, from); !slices.Equal(data, want) {
				t.Errorf("%s S=%d L%d from %d: read %d data blocks, DataBlocks lists %d", name, s, lv, from, len(data), len(want))
			}
			if meta == 0 {
				t.Errorf("%s S=%d L%d: no index read", name, s, lv)
			}
			if want := tt.NeededBytes(lv, from); bytes != want {
				t.Errorf("%s S=%d L%d from %d: delivered %d bytes, want %d", name, s, lv, from, bytes, want)
			}
		}
	}
}

// drain runs a cursor to the end and returns the data blocks it read (in
// file order), how many index or metadata reads it made, and the bytes it
// delivered.
func drain(c cursor, f file) (data []int64, meta int, bytes int64) {
	isMeta := func(b int64) bool {
		switch f := f.(type) {
		case *groupedFile:
			return f.blocks[b].data < 0
		case *conventionalFile:
			return b >= f.chunks
		}
		return false
	}
	for {
		b, ok := c.next()
		if !ok {
			break
		}
		if isMeta(b) {
			meta++
		} else {
			data = append(data, b)
		}
		bytes += c.done()
	}
	slices.Sort(data)
	return data, meta, bytes
}

func testTitle(seed uint64, gops int) *Title {
	return newTitle(newFrames(videoOptions{}, gops, rand.New(rand.NewPCG(seed, 2))))
}

func TestFramesMatchThePaper(t *testing.T) {
	o := videoOptions{}
	o.EnsureDefaults()
	fr := newFrames(o, 200, rand.New(rand.NewPCG(1, 1)))
	var bytes int64
	var n [fg.NumStreams]int
	for _, f := range fr {
		bytes += int64(f.Size)
		n[f.Stream]++
	}
	secs := float64(len(fr)) / 30
	if rate := float64(bytes) * 8 / secs; rate < 1.95e6 || rate > 2.05e6 {
		t.Errorf("bitrate %.0f, want 2 Mbps", rate)
	}
	// per GOP of 90: 1 I (odd and even alternate), 29 P, 60 B (half odd)
	if want := [fg.NumStreams]int{100, 100, 200 * 29, 200 * 30, 200 * 30}; n != want {
		t.Errorf("frame counts %v, want %v", n, want)
	}
}

func TestMixAssign(t *testing.T) {
	cases := []struct {
		m    Mix
		n    int
		want [numOps]int
	}{
		{mix2, 20, [numOps]int{2, 6, 3, 3, 3, 3}},
		{mix2, 50, [numOps]int{5, 15, 8, 8, 7, 7}},
		{mix1, 80, [numOps]int{8, 40, 8, 8, 8, 8}},
		{only(3), 20, [numOps]int{0, 0, 0, 20, 0, 0}},
	}
	for _, c := range cases {
		var got [numOps]int
		for _, op := range c.m.Assign(c.n) {
			got[op]++
		}
		if got != c.want {
			t.Errorf("%s over %d users: %v, want %v", c.m.Name, c.n, got, c.want)
		}
	}
}
