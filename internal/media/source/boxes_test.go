package source

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/Eyevinn/mp4ff/mp4"
)

// sparse is a file of size bytes, zero but for the pieces at their
// offsets, that counts the bytes read from it: a 300 MiB file costs
// nothing to make.
type sparse struct {
	size   int64
	pieces map[int64][]byte
	read   int64
}

func (s *sparse) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), s.size-off))
	clear(p[:n])
	for at, b := range s.pieces {
		lo, hi := max(at, off), min(at+int64(len(b)), off+int64(n))
		if lo < hi {
			copy(p[lo-off:hi-off], b[lo-at:hi-at])
		}
	}
	s.read += int64(n)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// header is a 32-bit box header.
func header(typ string, size uint32) []byte {
	return append(binary.BigEndian.AppendUint32(nil, size), typ...)
}

// movie is an encoded moov holding only an mvhd of duration d.
func movie(t testing.TB, d time.Duration) []byte {
	moov := mp4.NewMoovBox()
	mvhd := mp4.CreateMvhd()
	mvhd.Timescale = 1000
	mvhd.Duration = uint64(d / time.Millisecond)
	moov.AddChild(mvhd)
	var buf bytes.Buffer
	if err := moov.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const hugeBox = 300 << 20

// TestDurationReadsHeadersOnly: the probe of a 300 MiB file whose first
// box after ftyp is a 300 MiB free box, with the movie at the end, reads
// a few hundred bytes, not the free box.
func TestDurationReadsHeadersOnly(t *testing.T) {
	ftyp := append(header("ftyp", 16), "isom\x00\x00\x00\x00"...)
	moov := movie(t, 90*time.Second)
	f := &sparse{size: 16 + hugeBox + int64(len(moov)), pieces: map[int64][]byte{
		0: ftyp, 16: header("free", hugeBox), 16 + hugeBox: moov}}
	d, err := Duration(f, f.size)
	if err != nil || d != 90*time.Second {
		t.Fatalf("Duration = %v, %v; want 1m30s", d, err)
	}
	if f.read > 4096 {
		t.Errorf("read %d bytes to probe, want at most 4096", f.read)
	}
}

// TestDurationNotMP4: a WebM or MP3 file is named by its magic and never
// walked as boxes (its first bytes would read as a box of 440 MB).
func TestDurationNotMP4(t *testing.T) {
	for _, c := range []struct {
		magic string
		kind  string
	}{{"\x1a\x45\xdf\xa3\x9f\x42\x86\x81", KindMatroska}, {"ID3\x04\x00\x00\x00\x00", KindMP3}, {"\xff\xfb\x90\x64\x00\x00\x00\x00", KindMP3}} {
		f := &sparse{size: hugeBox, pieces: map[int64][]byte{0: []byte(c.magic)}}
		if k := Sniff([]byte(c.magic)); k != c.kind {
			t.Errorf("Sniff(%q) = %q, want %q", c.magic, k, c.kind)
		}
		if _, err := Duration(f, f.size); !errors.Is(err, ErrNotMP4) {
			t.Errorf("%s: Duration: %v, want ErrNotMP4", c.kind, err)
		}
		if f.read > 64 {
			t.Errorf("%s: read %d bytes, want at most 64", c.kind, f.read)
		}
	}
}

// TestOpenSkipsFree: opening an upload that starts with a 300 MiB free
// box (a sparse file) reads the movie box and headers, never the free box
// into memory.
func TestOpenSkipsFree(t *testing.T) {
	moov := movie(t, time.Minute)
	p := filepath.Join(t.TempDir(), "free.mp4")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(header("free", hugeBox))
	f.WriteAt(moov, hugeBox)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var before, after runtimeMem
	before.read()
	_, err = Open(p)
	after.read()
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "no video track") {
		t.Fatalf("Open: %v, want ErrInvalid: no video track", err)
	}
	if d := after.alloc - before.alloc; d > 8<<20 {
		t.Errorf("allocated %d bytes to open it, want under 8 MiB", d)
	}
}

// TestBoxesRejects: sizes smaller than the header, or past the end.
func TestBoxesRejects(t *testing.T) {
	for _, b := range [][]byte{header("free", 4), header("free", 100), append(header("free", 1), 0, 0, 0, 0, 0, 0, 0, 3)} {
		if _, err := Boxes(bytes.NewReader(b), 0, int64(len(b))); !errors.Is(err, ErrBoxes) {
			t.Errorf("Boxes(%q): %v, want ErrBoxes", b, err)
		}
	}
}

// FuzzDuration probes arbitrary bytes: errors are fine; panics, and
// reads of more than the headers, are not.
func FuzzDuration(f *testing.F) {
	f.Add(append(append(header("ftyp", 16), "isom\x00\x00\x00\x00"...), movie(f, time.Second)...))
	f.Add([]byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81"))
	f.Add(append(header("moov", 1), 0, 0, 0, 0, 0, 0, 0, 32))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := &sparse{size: int64(len(b)), pieces: map[int64][]byte{0: b}}
		Duration(r, r.size) //nolint:errcheck // errors are fine
		if r.read > 16*(2*MaxBoxes+2)+32 {
			t.Fatalf("read %d bytes of %d", r.read, len(b))
		}
	})
}

// runtimeMem is a snapshot of the bytes allocated so far.
type runtimeMem struct{ alloc uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.alloc = s.TotalAlloc
}
