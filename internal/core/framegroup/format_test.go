package framegroup

import (
	"errors"
	"testing"
)

func TestHeaderRoundTrip(t *testing.T) {
	h := Header{BlockSize: 128 << 10, Timescale: 90000, Blocks: 7, EndTime: 1 << 40,
		Frames: [NumStreams]uint32{3, 2, 9, 0, 0}, FirstBlock: [NumStreams]uint32{0, 2, 1, NoBlock, NoBlock},
		RecordsCRC: 0xdeadbeef, FramesCRC: [NumStreams]uint32{1, 2, 3, 4, 5}}
	got, err := DecodeHeader(h.Encode())
	if err != nil || got != h {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, h)
	}
	if l := LayoutOf(&h); l.RecordStart != 1 || l.FrameStart != [NumStreams]int64{2, 3, 4, 5, 5} || l.Total != 5 {
		t.Errorf("index regions %+v", l)
	}
}

// TestHeaderRejects changes one field at a time and expects ErrCorrupt.
func TestHeaderRejects(t *testing.T) {
	good := Header{BlockSize: 4096, Timescale: 1, Blocks: 1, Frames: [NumStreams]uint32{1},
		FirstBlock: [NumStreams]uint32{0, NoBlock, NoBlock, NoBlock, NoBlock}}
	for name, change := range map[string]func(h *Header){
		"block size":           func(h *Header) { h.BlockSize = 1000 },
		"timescale":            func(h *Header) { h.Timescale = 0 },
		"first past the end":   func(h *Header) { h.FirstBlock[0] = 1 },
		"frames without block": func(h *Header) { h.Frames[1] = 2 },
	} {
		h := good
		change(&h)
		if _, err := DecodeHeader(h.Encode()); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	b := good.Encode()
	b[30] ^= 1
	if _, err := DecodeHeader(b); !errors.Is(err, ErrCorrupt) {
		t.Errorf("flipped bit: %v, want ErrCorrupt", err)
	}
	if _, err := DecodeHeader(b[:64]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("short header: %v, want ErrCorrupt", err)
	}
}

func TestRecordsRoundTrip(t *testing.T) {
	recs := []BlockRecord{
		{Stream: BEven, Fragment: true, Start: MaxStartIndex, Frames: MaxFrames, Link: FarLink},
		{Stream: IOdd, Start: 0, Frames: 1, Link: 0},
	}
	b := EncodeRecords(recs)
	if len(b) != 2*BlockRecordSize || b[0] != 0x9f {
		t.Fatalf("encoded % x", b)
	}
	got, err := DecodeRecords(b)
	if err != nil || len(got) != 2 || got[0] != recs[0] || got[1] != recs[1] {
		t.Fatalf("decoded %v, %v", got, err)
	}
	for _, v := range []uint64{0, 5<<61 | 1<<16} { // no pictures; stream 5
		if _, err := DecodeBlockRecord(v); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%#x: %v, want ErrCorrupt", v, err)
		}
	}
}

func TestFrameRecordRoundTrip(t *testing.T) {
	f := FrameRecord{DTS: MaxDTS, Flags: MakeFlags(KindB, true, false), CTO: -1024, Size: 1 << 31}
	var b [FrameRecordSize]byte
	f.Encode(b[:])
	if got := DecodeFrameRecord(b[:]); got != f || got.Flags.Kind() != KindB || got.Flags&FlagRef == 0 || got.Flags&FlagSync != 0 {
		t.Fatalf("decoded %+v, want %+v", got, f)
	}
}

// FuzzNewLayout feeds stored records to NewLayout, which must reject
// what does not hold together and never panic.
func FuzzNewLayout(f *testing.F) {
	p := NewPacker(4096, false, nil)
	for i, size := range []int{3000, 800, 5000, 2000, 9000} {
		if err := p.Add(Stream(i%NumStreams), size, nil); err != nil {
			f.Fatal(err)
		}
	}
	if err := p.Finish(); err != nil {
		f.Fatal(err)
	}
	f.Add(EncodeRecords(p.Layout().Records()), uint32(0), uint32(1))
	f.Fuzz(func(t *testing.T, raw []byte, first, frames uint32) {
		recs, err := DecodeRecords(raw)
		if err != nil || frames > 1<<20 {
			return
		}
		l, err := NewLayout(4096, recs, [NumStreams]uint32{first, NoBlock, NoBlock, NoBlock, NoBlock}, [NumStreams]uint32{frames})
		if err != nil {
			return
		}
		c := NewCursor(l, L1, [NumStreams][]int64{make([]int64, frames)}, 0)
		for b, ok := c.Next(); ok; b, ok = c.Next() {
			if l.Record(b).Stream != IOdd {
				t.Fatalf("read block %d of %s", b, l.Record(b).Stream)
			}
			c.Done()
		}
	})
}
