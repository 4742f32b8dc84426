package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/device"
)

func fileDevice(t *testing.T, size int64) *device.File {
	t.Helper()
	d, err := device.OpenFile(filepath.Join(t.TempDir(), "flash"), device.FileOptions{Size: size})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// A hit is pinned only if its records are verified and the device has a
// file descriptor.
func TestPinHitOnlyVerified(t *testing.T) {
	mem := device.NewMem(16*testBlock, 4096)
	f, c, _, _ := Open(mem, testOpts(), Options{Logger: discardLogger()})
	fill(t, f, c, 3)
	seg, _ := c.FlashSegment("v/bbb/700k/1.m4s")
	if h := f.PinHit(context.Background(), seg, NewHits(1<<20, time.Second, 4096)); h != nil {
		t.Fatal("a hit pinned on a device without a file descriptor")
	}

	d := fileDevice(t, 16*testBlock)
	f, c, _, _ = Open(d, testOpts(), Options{Logger: discardLogger()})
	want := fill(t, f, c, 3)
	seg, _ = c.FlashSegment("v/bbb/700k/1.m4s")
	hits := NewHits(1<<20, time.Second, d.Alignment())
	h := f.PinHit(context.Background(), seg, hits)
	if h == nil {
		t.Fatal("a verified hit on a file was not pinned")
	}
	got := hitBytes(t, d, h)
	if !bytes.Equal(got, want[seg.Key]) {
		t.Fatalf("the parts of a hit hold %d bytes, not its %d", len(got), len(want[seg.Key]))
	}
	if st := f.PinStats(); st.Pinned != 1 {
		t.Fatalf("pins %+v", st)
	}
	h.Release()
	h.Release()
	if st := f.PinStats(); st.Pinned != 0 {
		t.Fatalf("pins after release %+v", st)
	}
	f.ForgetVerified()
	if h := f.PinHit(context.Background(), seg, hits); h != nil {
		t.Fatal("an unverified hit was pinned")
	}
}

// A block write waits while a hit pins its block, and the hit sees it
// (Yield); the hit's rest, read while still pinned, is the bytes it was
// pinned for, and the write goes on once the hit unpins. A byte of the
// rewritten block is never the hit's.
func TestRewriteWaitsForPinnedHit(t *testing.T) {
	// Two data blocks.
	t.Run("direct", func(t *testing.T) { testRewriteWaitsForPinnedHit(t, fileDevice(t, 4*testBlock)) })
	t.Run("pagecache", func(t *testing.T) { testRewriteWaitsForPinnedHit(t, pageCacheFile(t, 4*testBlock)) })
}

func testRewriteWaitsForPinnedHit(t *testing.T, d *device.File) {
	f, c, _, _ := Open(d, testOpts(), Options{Logger: discardLogger()})
	want := fill(t, f, c, 3)
	seg, ok := c.FlashSegment("v/bbb/700k/0.m4s")
	if !ok {
		t.Fatal("segment not on flash")
	}
	hits := NewHits(1<<20, time.Second, d.Alignment())
	h := f.PinHit(context.Background(), seg, hits)
	if h == nil {
		t.Fatal("not pinned")
	}
	defer h.Release()
	if h.Yield() {
		t.Fatal("yield asked with no writer waiting")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Many times the two blocks, as fill: one of the writes is to
		// the pinned block, and waits.
		for i := range 30 {
			key := fmt.Sprintf("v/bbb/700k/%d.m4s", i)
			data := bytes.Repeat([]byte{byte(i)}, 10_000+i*3_000)
			c.Insert(key, int64(len(data)), data, 0, 0)
			c.Monitor(0)
			drainNoFatal(f, c, false)
		}
		drainNoFatal(f, c, true)
	}()
	stop := time.Now().Add(10 * time.Second)
	for !h.Yield() {
		select {
		case <-done:
			t.Fatal("the pinned block was rewritten without waiting for its hit")
		default:
		}
		if time.Now().After(stop) {
			t.Fatal("no writer ever waited for the pinned block")
		}
		time.Sleep(time.Millisecond)
	}
	if f.Verified(seg.Chunks[0]) {
		t.Fatal("a block being rewritten is still marked verified")
	}
	select {
	case <-done:
		t.Fatal("the write did not wait for the pin")
	case <-time.After(20 * time.Millisecond):
	}
	rest, err := h.Rest(100)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rest, want[seg.Key][100:]) {
		t.Fatal("the rest of a pinned hit is not its bytes")
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the write still waits after the hit unpinned")
	}
	if err := h.WithFD(func(int) error { return nil }); !errors.Is(err, ErrNotPinned) {
		t.Fatalf("the file of an unpinned hit: %v", err)
	}
	if again, _ := h.Rest(0); !bytes.Equal(again, want[seg.Key]) {
		t.Fatal("Rest from 0 after the unpin is not the hit's bytes")
	}
	if st := f.PinStats(); st.WriterWaits == 0 {
		t.Fatalf("pin stats %+v", st)
	}
	if _, err := f.ReadSegment(seg); err == nil {
		t.Fatal("the old segment still reads from its rewritten block")
	}
}

func drainNoFatal(f *Flash, c *tier.Cache, flush bool) {
	for {
		w := c.Feed(0, tier.Signals{})
		if w == nil && flush {
			w = c.Flush(0)
		}
		if w == nil {
			return
		}
		c.WriteDone(w, f.WriteBlock(w), 0)
	}
}

// hitBytes gathers a pinned hit's bytes as a sender would: its file parts
// read from the descriptor it sends them from (WithFD: O_DIRECT, or the
// page cache's), its memory parts as they are.
func hitBytes(t *testing.T, d *device.File, h *FileHit) []byte {
	t.Helper()
	var got []byte
	for i := range h.Parts() {
		off, n, mem, err := h.Part(i)
		if err != nil {
			t.Fatal(err)
		}
		if mem == nil {
			if !h.pc && (off%int64(d.Alignment()) != 0 || n%int64(d.Alignment()) != 0) {
				t.Fatalf("file part %d at %d, %d bytes: not aligned", i, off, n)
			}
			mem = device.AlignedBuffer(int(n), d.Alignment())
			if err := h.WithFD(func(fd int) error { return preadFull(fd, mem, off) }); err != nil {
				t.Fatal(err)
			}
		}
		got = append(got, mem...)
	}
	return got
}

// A hit narrowed to a window of its segment (a record's body after its
// header) sends exactly the window's bytes, from a segment of one chunk
// or of several; Head reads the segment's first bytes, and Rest the
// window's.
func TestFileHitWindowAndHead(t *testing.T) {
	t.Run("direct", func(t *testing.T) { testFileHitWindowAndHead(t, fileDevice(t, 16*testBlock)) })
	t.Run("pagecache", func(t *testing.T) { testFileHitWindowAndHead(t, pageCacheFile(t, 16*testBlock)) })
	t.Run("pagecache-ends", func(t *testing.T) { testFileHitWindowAndHead(t, pageCacheEndsFile(t, 16*testBlock)) })
}

func testFileHitWindowAndHead(t *testing.T, d *device.File) {
	f, c, _, _ := Open(d, testOpts(), Options{Logger: discardLogger()})
	want := fillSized(t, f, c, 150_000, 200_000, 9_000)
	hits := NewHits(4<<20, time.Second, d.Alignment())
	multi := false
	for key, data := range want {
		seg, ok := c.FlashSegment(key)
		if !ok {
			t.Fatalf("%s not on flash", key)
		}
		multi = multi || len(seg.Chunks) > 1
		if _, err := f.ReadSegment(seg); err != nil { // verified once
			t.Fatal(err)
		}
		n := int64(len(data))
		for _, w := range [][2]int64{{0, n}, {300, n - 304}, {5, 70_000}, {n - 80_000, 79_000}, {n / 2, 0}} {
			if w[0] < 0 || w[0]+w[1] > n {
				continue
			}
			h := f.PinHit(context.Background(), seg, hits)
			if h == nil {
				t.Fatalf("%s: not pinned", key)
			}
			head, err := h.Head(1000)
			if err != nil || !bytes.Equal(head, data[:1000]) {
				t.Fatalf("%s: head %v, equal %v", key, err, bytes.Equal(head, data[:1000]))
			}
			if !h.Window(w[0], w[1]) || h.Len() != w[1] {
				t.Fatalf("%s: window %v refused (len %d)", key, w, h.Len())
			}
			if got := hitBytes(t, d, h); !bytes.Equal(got, data[w[0]:w[0]+w[1]]) {
				t.Fatalf("%s: window %v of %d chunks sent %d bytes, not the window's", key, w, len(seg.Chunks), len(got))
			}
			rest, err := h.Rest(10)
			if err != nil || !bytes.Equal(rest, data[min(w[0]+10, w[0]+w[1]):w[0]+w[1]]) {
				t.Fatalf("%s: rest of window %v: %v, %d bytes", key, w, err, len(rest))
			}
			if h.Window(0, n) {
				t.Fatal("a window changed after the rest was read")
			}
			h.Release()
		}
		h := f.PinHit(context.Background(), seg, hits)
		if h.Window(1, n) || h.Window(-1, 2) {
			t.Fatal("a window past the segment taken")
		}
		h.Release()
	}
	if !multi {
		t.Fatal("no segment of several chunks: the test does not test them")
	}
	if st := f.PinStats(); st.Pinned != 0 {
		t.Fatalf("pins left: %+v", st)
	}
	if st := hits.Stats(); st.HeldBytes != 0 {
		t.Fatalf("hit memory held: %+v", st)
	}
}

// A hit sent from the device counts as one hit of the hit memory however
// many buffers it takes (its header read, its chunks' unaligned ends, its
// rest), and each of those as an acquisition; a hit read into memory
// (Acquire) is one of each.
func TestFileHitCountsOneHit(t *testing.T) {
	d := fileDevice(t, 16*testBlock)
	f, c, _, _ := Open(d, testOpts(), Options{Logger: discardLogger()})
	const key = "v/bbb/700k/1.m4s"
	data := make([]byte, 150_000)
	for j := range data {
		data[j] = byte(j*7 + j/251)
	}
	c.Insert(key, int64(len(data)), data, 0, 0)
	c.Monitor(0)
	drain(t, f, c, true)
	seg, ok := c.FlashSegment(key)
	if !ok {
		t.Fatal("not on flash")
	}
	if _, err := f.ReadSegment(seg); err != nil { // verified once
		t.Fatal(err)
	}
	hits := NewHits(4<<20, time.Second, d.Alignment())
	h := f.PinHit(context.Background(), seg, hits)
	if h == nil {
		t.Fatal("not pinned")
	}
	// A window past the head's aligned span: its unaligned ends are read
	// into a buffer of their own.
	if _, err := h.Head(100); err != nil || !h.Window(5000, 140_001) {
		t.Fatalf("head: %v", err)
	}
	if got := hitBytes(t, d, h); !bytes.Equal(got, data[5000:145_001]) {
		t.Fatal("the window's bytes differ")
	}
	if _, err := h.Rest(0); err != nil {
		t.Fatal(err)
	}
	h.Release()
	if st := hits.Stats(); st.Hits != 1 || st.Acquired != 3 {
		t.Fatalf("one hit with a head, unaligned ends and a rest: %d hits, %d acquisitions", st.Hits, st.Acquired)
	}
	b, err := hits.Acquire(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
	if st := hits.Stats(); st.Hits != 2 || st.Acquired != 4 || st.HeldBytes != 0 {
		t.Fatalf("then a buffered hit: %+v", st)
	}
}

// fileReadLog records what a FileHit tells its FileReads.
type fileReadLog struct{ events []string }

func (l *fileReadLog) FileReadBegan() { l.events = append(l.events, "began") }
func (l *fileReadLog) FileReadEnded(err error) {
	l.events = append(l.events, fmt.Sprintf("ended %v", err))
}
func (l *fileReadLog) FileHitReleased() { l.events = append(l.events, "released") }

// The sender's reads from the file are told to the hit's FileReads, the
// BeforeFileRead hook's error is the read's, and Release is told once.
func TestFileReadsTold(t *testing.T) {
	d := fileDevice(t, 16*testBlock)
	fail := errors.New("the device failed")
	var hookErr error
	f, c, _, _ := Open(d, testOpts(), Options{Logger: discardLogger(), BeforeFileRead: func() error { return hookErr }})
	fill(t, f, c, 3)
	seg, _ := c.FlashSegment("v/bbb/700k/1.m4s")
	h := f.PinHit(context.Background(), seg, NewHits(1<<20, time.Second, d.Alignment()))
	if h == nil {
		t.Fatal("a verified hit on a file was not pinned")
	}
	log := &fileReadLog{}
	h.SetReads(log)
	if err := h.BeginFileRead(); err != nil {
		t.Fatal(err)
	}
	h.EndFileRead(nil)
	hookErr = fail
	if err := h.BeginFileRead(); err != fail {
		t.Fatalf("BeginFileRead: %v, want the hook's error", err)
	}
	h.EndFileRead(fail)
	h.Release()
	h.Release()
	want := []string{"began", "ended <nil>", "began", "ended the device failed", "released"}
	if fmt.Sprint(log.events) != fmt.Sprint(want) {
		t.Fatalf("told %q, want %q", log.events, want)
	}
}
