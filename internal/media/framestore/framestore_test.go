package framestore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-media/strata/internal/core/framegroup"
	"github.com/strata-media/strata/internal/storage/device"
)

// memFS holds a store's files as in-memory devices.
type memFS struct{ files map[string]*device.Mem }

// kept is a Mem whose Close keeps its bytes, so a test can reopen it.
type kept struct{ *device.Mem }

func (kept) Close() error { return nil }

func newMemFS() *memFS { return &memFS{files: map[string]*device.Mem{}} }

func (m *memFS) open(path string, size int64, readOnly bool) (device.Device, error) {
	if readOnly {
		f, ok := m.files[path]
		if !ok {
			return nil, fmt.Errorf("%s: %w", path, os.ErrNotExist)
		}
		return kept{f}, nil
	}
	f := device.NewMem(size, 4096)
	f.SetLifetime(device.LifetimeLong)
	m.files[path] = f
	return kept{f}, nil
}

// testFrame is a picture with its bytes, as the model keeps it.
type testFrame struct {
	Frame
	data []byte
}

// randomFrames makes n pictures in a GOP pattern with B-pyramid
// references, of random sizes up to maxSize, with recognizable bytes.
func randomFrames(rng *rand.Rand, n, maxSize int) []testFrame {
	var g framegroup.Grouper
	out := make([]testFrame, n)
	for i := range out {
		k, ref := framegroup.KindB, rng.IntN(3) == 0
		switch {
		case i%12 == 0:
			k, ref = framegroup.KindI, true
		case i%3 == 1:
			k, ref = framegroup.KindP, true
		}
		size := 1 + rng.IntN(maxSize)
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(i*7 + j)
		}
		rec := framegroup.FrameRecord{DTS: uint64(i) * 512, CTO: int32(rng.IntN(2048)) - 1024, Size: uint32(size),
			Flags: framegroup.MakeFlags(k, ref, k == framegroup.KindI)}
		out[i] = testFrame{Frame{Stream: g.Assign(k, ref), FrameRecord: rec}, data}
	}
	return out
}

func input(frames []testFrame) Input {
	in := Input{Timescale: 12288, EndTime: uint64(len(frames)) * 512,
		Read: func(i int) ([]byte, error) { return frames[i].data, nil }}
	for _, f := range frames {
		in.Frames = append(in.Frames, f.Frame)
	}
	return in
}

// TestRandomRoundTrip writes random stores and checks every level against
// a model: the level's pictures in decoding order, byte for byte, from
// exactly the blocks of the level's streams, every write a whole block.
func TestRandomRoundTrip(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	rounds := 40
	if testing.Short() {
		rounds = 8
	}
	for r := range rounds {
		size := 4096 * (1 + rng.IntN(4))
		frames := randomFrames(rng, 1+rng.IntN(400), []int{100, 3000, 20000}[rng.IntN(3)])
		t.Run(fmt.Sprint(r), func(t *testing.T) { checkRoundTrip(t, frames, size) })
	}
}

func checkRoundTrip(t *testing.T, frames []testFrame, size int) {
	fs := newMemFS()
	opts := Options{BlockSize: size, OpenDevice: fs.open}
	sum, err := Create("st", input(frames), opts)
	if err != nil {
		t.Fatal(err)
	}
	blocks := fs.files[filepath.Join("st", BlocksFile)]
	if blocks.Writes() != int64(sum.DataBlocks) || blocks.BytesWritten(device.LifetimeLong) != int64(sum.DataBlocks*size) {
		t.Fatalf("%d writes, %d bytes for %d blocks of %d", blocks.Writes(), blocks.BytesWritten(device.LifetimeLong), sum.DataBlocks, size)
	}
	for _, l := range framegroup.Levels {
		checkLevel(t, fs, opts, frames, l, sum)
	}
}

func checkLevel(t *testing.T, fs *memFS, opts Options, frames []testFrame, l framegroup.Level, sum Summary) {
	st, err := Open("st", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var want []testFrame
	wantBlocks := 0
	for _, f := range frames {
		if l.Includes(f.Stream) {
			want = append(want, f)
		}
	}
	for _, s := range l.Streams() {
		wantBlocks += sum.StreamBlock[s]
	}
	i := 0
	for f, err := range st.Frames(l) {
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if i >= len(want) || f.FrameRecord != want[i].FrameRecord || !bytes.Equal(f.Data, want[i].data) {
			t.Fatalf("%s: picture %d differs", l, i)
		}
		i++
	}
	if i != len(want) {
		t.Fatalf("%s: %d pictures, want %d", l, i, len(want))
	}
	if got := st.Stats().DataBlocks; got != int64(wantBlocks) {
		t.Fatalf("%s: read %d data blocks, want %d", l, got, wantBlocks)
	}
}

// TestPaperExample follows the paper's Fig. 7 and Fig. 10: P frames fill
// a block and fragment into the next one, and link offsets chain each
// stream's blocks in write order.
func TestPaperExample(t *testing.T) {
	const s = 4096
	var frames []testFrame
	add := func(st framegroup.Stream, size int) {
		i := len(frames)
		frames = append(frames, testFrame{Frame{Stream: st, FrameRecord: framegroup.FrameRecord{DTS: uint64(i), Size: uint32(size)}},
			bytes.Repeat([]byte{byte(i)}, size)})
	}
	add(framegroup.IOdd, 3000)
	for range 6 { // P1..P6: 6 × 800 = 4800 bytes: P6 straddles two blocks
		add(framegroup.P, 800)
	}
	add(framegroup.IEven, 5000) // larger than a block
	add(framegroup.IOdd, 2000)  // IOdd fills up: 5000 bytes
	fs := newMemFS()
	if _, err := Create("st", input(frames), Options{BlockSize: s, OpenDevice: fs.open}); err != nil {
		t.Fatal(err)
	}
	st, err := Open("st", Options{OpenDevice: fs.open})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got := fmt.Sprint(st.Records())
	// Block 0: P1-P6 (P6 fragmented), 1: I2's head, 2: I1 and I3's head,
	// then the partial buffers at the end in stream order: the second
	// P block is block 5, so the first P block links 5 ahead, as in the
	// paper's Fig. 10.
	want := "[{P true 0 6 5} {I-even true 0 1 3} {I-odd true 0 2 1} {I-odd false 1 1 0} {I-even false 0 1 0} {P false 5 1 0}]"
	if got != want {
		t.Fatalf("records\n got %s\nwant %s", got, want)
	}
}

// TestCorruptIndex flips one byte of each index region and expects
// ErrCorrupt from whichever read covers it.
func TestCorruptIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	frames := randomFrames(rng, 200, 3000)
	for _, off := range []int64{10, 4096 + 3, 2*4096 + 5} {
		fs := newMemFS()
		opts := Options{BlockSize: 4096, OpenDevice: fs.open}
		if _, err := Create("st", input(frames), opts); err != nil {
			t.Fatal(err)
		}
		flip(t, fs.files[filepath.Join("st", IndexFile)], off)
		err := openAndRead(opts)
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: %v, want ErrCorrupt", off, err)
		}
	}
}

func flip(t *testing.T, m *device.Mem, off int64) {
	buf := make([]byte, 4096)
	base := off &^ 4095
	if _, err := m.ReadAt(buf, base); err != nil {
		t.Fatal(err)
	}
	buf[off-base] ^= 0x40
	if _, err := m.WriteAt(buf, base); err != nil {
		t.Fatal(err)
	}
}

func openAndRead(opts Options) error {
	st, err := Open("st", opts)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, err := range st.Frames(framegroup.L1) {
		if err != nil {
			return err
		}
	}
	return nil
}

func TestOnDiskFiles(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	frames := randomFrames(rng, 300, 5000)
	sum, err := Create(dir, input(frames), Options{BlockSize: 8192})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, BlocksFile))
	if err != nil || fi.Size() != int64(sum.DataBlocks*8192) {
		t.Fatalf("blocks file: %v, %d bytes for %d blocks", err, fi.Size(), sum.DataBlocks)
	}
	if err := openAndRead(Options{}); err == nil {
		t.Fatal("opened a store that does not exist")
	}
	st, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	for _, err := range st.Frames(framegroup.L3) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if want := sum.Frames[framegroup.IOdd] + sum.Frames[framegroup.IEven] + sum.Frames[framegroup.P]; n != want {
		t.Fatalf("L3: %d pictures, want %d", n, want)
	}
}

func FuzzDecodeHeader(f *testing.F) {
	no := framegroup.NoBlock
	h := framegroup.Header{BlockSize: 4096, Timescale: 90000, Blocks: 3, FirstBlock: [5]uint32{0, no, no, no, no}, Frames: [5]uint32{2}}
	f.Add(h.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := framegroup.DecodeHeader(b)
		if err == nil {
			framegroup.LayoutOf(&h)
		}
	})
}
