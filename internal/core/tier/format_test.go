package tier

import (
	"bytes"
	"errors"
	"testing"
)

func testBlock(t testing.TB, blockSize int64) ([]byte, *BlockWrite) {
	w := &BlockWrite{Block: 5, Gen: 9, Used: blockHdrLen}
	add := func(key string, seq, chunks uint32, data []byte, segSize int64, segGen uint64) {
		r := PlannedRecord{Off: w.Used, Data: data, RecordHeader: RecordHeader{
			Key: key, Seq: seq, Chunks: chunks, Len: uint32(len(data)), SegSize: segSize, SegGen: segGen, BlockGen: 9,
		}}
		w.Records = append(w.Records, r)
		w.Used += recordLen(len(key), len(data))
	}
	add("v/a/1/1.m4s", 2, 3, bytes.Repeat([]byte("x"), 100), 1000, 7)
	add("v/a/1/2.m4s", 0, 1, []byte("hello"), 5, 9)
	buf := make([]byte, blockSize)
	if err := EncodeBlock(buf, w, 42); err != nil {
		t.Fatal(err)
	}
	return buf, w
}

func TestBlockRoundTrip(t *testing.T) {
	buf, w := testBlock(t, 4096)
	bc := DecodeBlock(buf, 5, 42)
	if bc.Header == nil || bc.Corrupt != 0 || len(bc.Records) != 2 {
		t.Fatalf("decoded %+v", bc)
	}
	for i, r := range bc.Records {
		if r.RecordHeader != w.Records[i].RecordHeader || r.Off != w.Records[i].Off {
			t.Errorf("record %d = %+v, want %+v", i, r, w.Records[i])
		}
		_, data, err := DecodeRecord(buf[r.Off:])
		if err != nil || !bytes.Equal(data, w.Records[i].Data) {
			t.Errorf("record %d data %q err %v", i, data, err)
		}
	}
	// Another format's block, or another position, holds nothing of ours.
	if bc := DecodeBlock(buf, 5, 43); bc.Header != nil || len(bc.Records) != 0 {
		t.Errorf("foreign format decoded: %+v", bc)
	}
	if bc := DecodeBlock(buf, 6, 42); len(bc.Records) != 0 || bc.Corrupt == 0 {
		t.Errorf("misplaced block decoded: %+v", bc)
	}
	if bc := DecodeBlock(make([]byte, 4096), 5, 42); bc.Header != nil || bc.Corrupt != 0 {
		t.Errorf("zero block decoded: %+v", bc)
	}
}

// Every single-byte corruption of a record is caught by a checksum; the
// damage stays within the record when only its data is hit.
func TestBlockCorruptionDetected(t *testing.T) {
	buf, w := testBlock(t, 4096)
	for i := int64(0); i < w.Used; i++ {
		b := bytes.Clone(buf)
		b[i] ^= 0x40
		bc := DecodeBlock(b, 5, 42)
		if bc.Corrupt == 0 && bc.Header != nil {
			t.Fatalf("flip at %d not detected: %+v", i, bc)
		}
		for _, r := range bc.Records {
			_, data, err := DecodeRecord(b[r.Off:])
			if err != nil || r.Key != w.Records[0].Key && r.Key != w.Records[1].Key {
				t.Fatalf("flip at %d: bad record accepted %+v %v", i, r, err)
			}
			want := w.Records[0].Data
			if r.Key == w.Records[1].Key {
				want = w.Records[1].Data
			}
			if !bytes.Equal(data, want) {
				t.Fatalf("flip at %d: wrong data accepted", i)
			}
		}
	}
}

// A torn write leaves the new header over the old block's tail: records
// of the old generation are rejected.
func TestTornBlockRejectsOldRecords(t *testing.T) {
	old, _ := testBlock(t, 4096)
	w := &BlockWrite{Block: 5, Gen: 10, Used: blockHdrLen}
	r := PlannedRecord{Off: blockHdrLen, Data: []byte("new"), RecordHeader: RecordHeader{
		Key: "k", Seq: 0, Chunks: 1, Len: 3, SegSize: 3, SegGen: 10, BlockGen: 10,
	}}
	w.Records = []PlannedRecord{r}
	w.Used += recordLen(1, 3)
	nb := make([]byte, 4096)
	if err := EncodeBlock(nb, w, 42); err != nil {
		t.Fatal(err)
	}
	// Claim more records than were written, as a header from a later
	// layout would, over the old content.
	torn := bytes.Clone(old)
	copy(torn, nb[:blockHdrLen])
	bc := DecodeBlock(torn, 5, 42)
	if len(bc.Records) != 0 {
		t.Fatalf("old-generation records accepted under a new header: %+v", bc.Records)
	}
}

func TestMetaRoundTrip(t *testing.T) {
	s := &Super{Alignment: 4096, BlockSize: 1 << 16, Blocks: 10, FormatID: 77, Seq: 3, GenFloor: 12,
		Invalidate: []Invalidation{{Prefix: "", Gen: 4}, {Prefix: "v/a/", Gen: 11}}}
	buf := make([]byte, 1<<16)
	if err := EncodeMeta(buf, s); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeMeta(buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.FormatID != 77 || got.Seq != 3 || got.GenFloor != 12 || len(got.Invalidate) != 2 || got.Invalidate[1] != s.Invalidate[1] {
		t.Fatalf("got %+v", got)
	}
	buf[70] ^= 1
	if _, err := DecodeMeta(buf); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt table: err %v", err)
	}
	if _, err := DecodeMeta(make([]byte, 1<<16)); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("zeros: err %v", err)
	}
}

// FuzzDecodeBlock feeds arbitrary bytes to the block and record decoders:
// they must not panic, and whatever they accept must verify again.
func FuzzDecodeBlock(f *testing.F) {
	buf, _ := testBlock(f, 4096)
	f.Add(buf)
	f.Add(buf[:200])
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		bc := DecodeBlock(b, 5, 42)
		for _, r := range bc.Records {
			h, _, err := DecodeRecord(b[r.Off:])
			if err != nil || h.Key != r.Key || h.BlockGen != bc.Header.Gen {
				t.Fatalf("accepted record does not verify: %+v %v", r, err)
			}
		}
		DecodeRecord(b)
		DecodeMeta(b)
	})
}
