package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/storage/device"
)

// TestReadSegmentIntoDirtyBuffer reads segments of one and several chunks
// (blocks of 64 KiB, segments up to 187 KB) into a reused buffer full of
// another read's bytes and garbage: every read returns exactly the
// segment's bytes, aliasing the buffer.
func TestReadSegmentIntoDirtyBuffer(t *testing.T) {
	mem := device.NewMem(64*testBlock, 4096)
	f, c, _, err := Open(mem, testOpts(), Options{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	want := make(map[string][]byte)
	for i := range 40 {
		key := fmt.Sprintf("v/ccc/700k/%d.m4s", i)
		data := make([]byte, 1_000+i*4_700)
		for j := range data {
			data[j] = byte(i*7 + j*13)
		}
		want[key] = data
		c.Insert(key, int64(len(data)), data, 0, 0)
		c.Monitor(0)
		drain(t, f, c, false)
	}
	drain(t, f, c, true)
	buf := device.AlignedBuffer(1<<20, 4096)
	multi, read := 0, 0
	for key, data := range want {
		seg, ok := c.FlashSegment(key)
		if !ok {
			continue
		}
		for i := range buf {
			buf[i] = 0xa5
		}
		if len(seg.Chunks) > 1 {
			multi++
		}
		read++
		got, err := f.ReadSegmentInto(seg, buf[:f.SpanSize(seg)])
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s (%d chunks): %v, equal %v", key, len(seg.Chunks), err, bytes.Equal(got, data))
		}
		clear(buf)
		if len(got) > 0 && !bytes.Equal(got, make([]byte, len(got))) {
			t.Fatalf("%s: the bytes returned are not the buffer's", key)
		}
		if _, err := f.ReadSegmentInto(seg, buf[:f.SpanSize(seg)-1]); err == nil {
			t.Fatalf("%s: a buffer short of SpanSize was accepted", key)
		}
	}
	if multi == 0 || read < 10 {
		t.Fatalf("%d segments read from flash, %d of several chunks: the test tests nothing", read, multi)
	}
}

// TestHitsBoundByBytes: the bytes held never pass the limit; a hit that
// finds them held waits in line, gets them when a holder releases, and
// gets ErrBusy past the queue deadline (ctx's error if ctx ends first).
func TestHitsBoundByBytes(t *testing.T) {
	h := NewHits(1<<20, 50*time.Millisecond, 4096)
	a, err := h.Acquire(context.Background(), 600<<10)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Bytes()) < 600<<10 || len(a.Bytes())%4096 != 0 {
		t.Fatalf("buffer of %d bytes for 600 KiB", len(a.Bytes()))
	}
	if _, err := h.Acquire(context.Background(), 600<<10); !errors.Is(err, ErrBusy) {
		t.Fatalf("second 600 KiB in a 1 MiB bound: %v, want ErrBusy", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Acquire(ctx, 600<<10); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	if s := h.Stats(); s.HeldBytes < 600<<10 || s.Busy != 1 || s.Waits != 2 || s.Hits != 1 {
		t.Fatalf("stats %+v", s)
	}
	a.Release()
	a.Release() // twice: nothing

	// A hit that waits gets the bytes when a holder releases them: a
	// queue deadline no test machine reaches, and the release only once
	// the hit is in line (no sleep: the order is observed).
	h = NewHits(1<<20, time.Minute, 4096)
	if a, err = h.Acquire(context.Background(), 600<<10); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		b, err := h.Acquire(context.Background(), 600<<10)
		if err == nil {
			if s := h.Stats(); s.HeldBytes > s.LimitBytes {
				err = fmt.Errorf("held %d of %d", s.HeldBytes, s.LimitBytes)
			}
			b.Release() // before the send: the stats below are read once it is received
		}
		got <- err
	}()
	for h.Stats().Waiting == 0 {
		runtime.Gosched()
	}
	a.Release()
	if err := <-got; err != nil {
		t.Fatalf("waiting hit: %v", err)
	}
	s := h.Stats()
	if s.HeldBytes != 0 || s.PeakBytes > s.LimitBytes || s.Busy != 0 || s.Waits != 1 || s.Hits != 2 {
		t.Fatalf("stats %+v", s)
	}
	// Larger than the bound: it takes all of it.
	big, err := h.Acquire(context.Background(), 3<<20)
	if err != nil || len(big.Bytes()) < 3<<20 || h.Stats().HeldBytes != 1<<20 {
		t.Fatalf("3 MiB hit in a 1 MiB bound: %v, %+v", err, h.Stats())
	}
	big.Release()
}

// TestHitsReuseBuffers: a released buffer of a class is handed out again
// for the next hit of that class, not allocated anew.
func TestHitsReuseBuffers(t *testing.T) {
	h := NewHits(64<<20, time.Second, 4096)
	for i := range 100 {
		b, err := h.Acquire(context.Background(), 900_000+i)
		if err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	// sync.Pool drops a buffer at a collection, rarely, and under the
	// race detector a quarter of them on purpose; unpooled, every one of
	// the 100 hits would allocate.
	if s := h.Stats(); s.NewBuffers > 50 {
		t.Fatalf("%d buffers allocated for 100 sequential hits", s.NewBuffers)
	}
}

// TestHitsClasses: a class holds what was asked, is a multiple of the
// alignment, wastes at most an eighth above 16 units, and two sizes
// share an index only if they share a class size.
func TestHitsClasses(t *testing.T) {
	h := NewHits(1<<30, time.Second, 4096)
	sizeOf := map[int]int{}
	for n := 1; n < 64<<20; n = n*9/8 + 1 {
		size, idx := h.class(n)
		if size < n || size%4096 != 0 || n > 16*4096 && size-n > n/8+4096 {
			t.Fatalf("class of %d: %d", n, size)
		}
		if idx < 0 || idx >= classes {
			t.Fatalf("class of %d: index %d", n, idx)
		}
		if s, ok := sizeOf[idx]; ok && s != size {
			t.Fatalf("index %d holds %d and %d", idx, s, size)
		}
		sizeOf[idx] = size
	}
}
