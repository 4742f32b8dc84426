package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/device"
)

// pageCacheFile is fileDevice with a page cache descriptor
// (device.FileOptions.PageCache), on a file system that takes O_DIRECT:
// the rewrite test needs the cache's writes direct.
func pageCacheFile(t *testing.T, size int64) *device.File {
	t.Helper()
	d, err := device.OpenFile(filepath.Join(t.TempDir(), "flash"), device.FileOptions{Size: size, PageCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if !d.Direct() || !d.PageCache() {
		t.Skipf("the temporary directory's file system refuses O_DIRECT (direct %v, page cache %v)", d.Direct(), d.PageCache())
	}
	return d
}

// pageCacheEndsFile is fileDevice with a page cache descriptor for small
// reads only (device.FileOptions.PageCacheReads): hits spliced from the
// O_DIRECT descriptor, their headers and ends read through the page
// cache (decision 0038).
func pageCacheEndsFile(t *testing.T, size int64) *device.File {
	t.Helper()
	d, err := device.OpenFile(filepath.Join(t.TempDir(), "flash"), device.FileOptions{Size: size, PageCacheReads: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if !d.Direct() || d.PageCache() || !d.PageCacheReads() {
		t.Skipf("the temporary directory's file system refuses O_DIRECT (direct %v, page cache sends %v, reads %v)", d.Direct(), d.PageCache(), d.PageCacheReads())
	}
	return d
}

// A hit on a device whose page cache descriptor is for small reads only
// is split as on an O_DIRECT device (aligned middles sent from the
// O_DIRECT descriptor, the unaligned ends in memory), but its header and
// ends are read through the page cache, which then holds them for the
// next hit; its middles are not cached. Its bytes are the records'.
func TestPageCacheEndsHit(t *testing.T) {
	// Blocks of 256 KiB, records of 150-260 KB: middles of 64 KiB and
	// more (MinFilePart), within a chunk and across chunks.
	o := testOpts()
	o.BlockSize = 256 << 10
	d := pageCacheEndsFile(t, 16*o.BlockSize)
	f, c, _, err := Open(d, o, Options{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	want := fillSized(t, f, c, 150_000, 200_000, 260_000, 9_000)
	hits := NewHits(4<<20, time.Second, d.Alignment())
	a := int64(d.Alignment())
	ends, middles := 0, 0
	for key, data := range want {
		seg, ok := c.FlashSegment(key)
		if !ok {
			continue
		}
		h := mustPin(t, f, seg, hits, key)
		if _, err := h.Head(64); err != nil {
			t.Fatal(err)
		}
		ch := seg.Chunks[0]
		off, _, lead := f.chunkSpan(seg, ch)
		if !cached(t, d, device.AlignDown(off+lead, int(a)), a) {
			t.Fatalf("%s: its header was not read through the page cache", key)
		}
		var flags int
		if err := h.WithFD(func(fd int) (err error) { flags, err = unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); return err }); err != nil {
			t.Fatal(err)
		}
		if flags&unix.O_DIRECT == 0 {
			t.Fatalf("%s: sent from the page cache descriptor", key)
		}
		if got := hitBytes(t, d, h); !bytes.Equal(got, data) {
			t.Fatalf("%s: the hit's %d bytes are not its %d", key, len(got), len(data))
		}
		for i := range h.Parts() {
			off, n, mem, _ := h.Part(i)
			if mem != nil {
				ends++
				if !cached(t, d, off, n) {
					t.Fatalf("%s: end part %d (%d bytes at %d) not in the page cache", key, i, n, off)
				}
				continue
			}
			if off%a != 0 || n%a != 0 {
				t.Fatalf("%s: file part %d at %d, %d bytes: not aligned", key, i, off, n)
			}
			// Neither end of the middle is cached: the send read it
			// O_DIRECT (its first and last pages may hold an end's
			// bytes, so only pages strictly inside are looked at).
			if n > 2*a && cached(t, d, off+a, n-2*a) {
				t.Fatalf("%s: the middle of file part %d went through the page cache", key, i)
			}
			middles++
		}
		h.Release()
	}
	if ends == 0 || middles == 0 {
		t.Fatalf("%d end parts, %d middles: the test tests nothing", ends, middles)
	}
	if st := f.PinStats(); st.Pinned != 0 {
		t.Fatalf("pins left: %+v", st)
	}
}

// A hit on a device with a page cache descriptor is sent from that
// descriptor, not the O_DIRECT one: one file part per chunk, its range
// whole at the record's own (unaligned) offset, none in memory; its bytes
// are the records'.
func TestPageCacheHit(t *testing.T) {
	d := pageCacheFile(t, 16*testBlock)
	f, c, _, err := Open(d, testOpts(), Options{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	want := fill(t, f, c, 12)
	hits := NewHits(1<<20, time.Second, d.Alignment())
	a := int64(d.Alignment())
	sent, unaligned := 0, false
	for key, data := range want {
		seg, ok := c.FlashSegment(key)
		if !ok {
			continue
		}
		h := mustPin(t, f, seg, hits, key)
		if h.Parts() != len(seg.Chunks) {
			t.Fatalf("%s: %d parts for %d chunks", key, h.Parts(), len(seg.Chunks))
		}
		for i := range h.Parts() {
			off, n, mem, err := h.Part(i)
			if err != nil || mem != nil {
				t.Fatalf("%s: part %d in memory (%d bytes), err %v", key, i, len(mem), err)
			}
			unaligned = unaligned || off%a != 0 || n%a != 0
		}
		var flags int
		if err := h.WithFD(func(fd int) (err error) { flags, err = unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); return err }); err != nil {
			t.Fatal(err)
		}
		if flags&unix.O_DIRECT != 0 {
			t.Fatalf("%s: sent from the O_DIRECT descriptor", key)
		}
		if got := hitBytes(t, d, h); !bytes.Equal(got, data) {
			t.Fatalf("%s: the hit's %d bytes are not its %d", key, len(got), len(data))
		}
		h.Release()
		sent++
	}
	if sent == 0 || !unaligned {
		t.Fatalf("%d hits, an unaligned part among them %v: the test tests nothing", sent, unaligned)
	}
	if st := f.PinStats(); st.Pinned != 0 {
		t.Fatalf("pins left: %+v", st)
	}
}

// cached reports whether all of device bytes [off, off+n) are in the page
// cache: a read that must not wait for the device (RWF_NOWAIT) gets them.
func cached(t *testing.T, d *device.File, off, n int64) bool {
	t.Helper()
	b := make([]byte, n)
	var k int
	err := d.WithPageCacheFD(func(fd int) (err error) {
		k, err = unix.Preadv2(fd, [][]byte{b}, off, unix.RWF_NOWAIT)
		return err
	})
	if err != nil && !errors.Is(err, unix.EAGAIN) {
		t.Fatal(err)
	}
	return err == nil && int64(k) == n
}

// A block rewritten with an O_DIRECT write after its records were sent
// through the page cache (their pages cached) serves its new records
// through the page cache descriptor, never the old ones: the kernel drops
// a direct write's range from the page cache, so the descriptor reads
// what the device holds.
func TestPageCacheRewriteServesNewRecords(t *testing.T) {
	t.Run("sends", func(t *testing.T) { testPageCacheRewrite(t, pageCacheFile(t, 4*testBlock)) }) // two data blocks
	t.Run("ends", func(t *testing.T) { testPageCacheRewrite(t, pageCacheEndsFile(t, 4*testBlock)) })
}

func testPageCacheRewrite(t *testing.T, d *device.File) {
	f, c, _, err := Open(d, testOpts(), Options{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	old := fill(t, f, c, 3)
	hits := NewHits(1<<20, time.Second, d.Alignment())
	var oldSegs []tier.Segment
	blocks := make(map[uint32]bool)
	for key, data := range old {
		seg, ok := c.FlashSegment(key)
		if !ok {
			continue
		}
		h := pinnedHit(t, f, d, seg, hits, key, data)
		for i := range h.Parts() {
			off, n, mem, _ := h.Part(i)
			if (h.pc || mem != nil) && !cached(t, d, off, n) {
				t.Fatalf("%s: part %d not in the page cache after it was sent", key, i)
			}
		}
		h.Release()
		oldSegs = append(oldSegs, seg)
		for _, ch := range seg.Chunks {
			blocks[ch.Block] = true
		}
	}
	if len(oldSegs) == 0 {
		t.Fatal("nothing on flash")
	}

	// New records until the old ones' blocks are rewritten.
	fresh := make(map[string][]byte)
	for i := range 30 {
		key := fmt.Sprintf("v/new/700k/%d.m4s", i)
		data := bytes.Repeat([]byte{byte(100 + i)}, 10_000+i*3_000)
		fresh[key] = data
		c.Insert(key, int64(len(data)), data, 0, 0)
		c.Monitor(0)
		drain(t, f, c, false)
	}
	drain(t, f, c, true)
	for _, seg := range oldSegs {
		if _, err := f.ReadSegment(seg); err == nil {
			t.Fatalf("%s still reads: its block was not rewritten, the test tests nothing", seg.Key)
		}
	}
	// Through the page cache descriptor, each rewritten block is what
	// the device holds (an O_DIRECT read): a block of the new
	// generation whose records all verify, none of them the old ones.
	for b := range blocks {
		off := int64(b) * f.BlockSize()
		t.Logf("block %d after its rewrite: in the page cache %v", b, cached(t, d, off, f.BlockSize()))
		buffered := make([]byte, f.BlockSize())
		if err := d.WithPageCacheFD(func(fd int) error { return preadFull(fd, buffered, off) }); err != nil {
			t.Fatal(err)
		}
		direct := device.AlignedBuffer(int(f.BlockSize()), d.Alignment())
		if _, err := d.ReadAt(direct, off); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(direct, buffered) {
			t.Fatalf("block %d: the page cache holds bytes the device no longer does", b)
		}
		bc := tier.DecodeBlock(buffered, b, f.FormatID())
		if bc.Header == nil || bc.Corrupt != 0 || len(bc.Records) == 0 {
			t.Fatalf("block %d through the page cache: header %+v, %d records, %d corrupt (%v)", b, bc.Header, len(bc.Records), bc.Corrupt, bc.Err)
		}
		for _, seg := range oldSegs {
			for _, ch := range seg.Chunks {
				if ch.Block == b && bc.Header.Gen == ch.Gen {
					t.Fatalf("block %d through the page cache: the old generation %d", b, ch.Gen)
				}
			}
		}
		for _, r := range bc.Records {
			if _, ok := old[r.Key]; ok {
				t.Fatalf("block %d through the page cache: an old record of %s", b, r.Key)
			}
		}
	}
	// A hit of a new segment is its new bytes, from the page cache.
	for key, data := range fresh {
		seg, ok := c.FlashSegment(key)
		if !ok {
			continue
		}
		pinnedHit(t, f, d, seg, hits, key, data).Release()
	}
}

// mustPin pins seg's hit, of records this process wrote (verified).
func mustPin(t *testing.T, f *Flash, seg tier.Segment, hits *Hits, key string) *FileHit {
	t.Helper()
	h := f.PinHit(context.Background(), seg, hits)
	if h == nil {
		t.Fatalf("%s: a hit of records this process wrote was not pinned", key)
	}
	return h
}

// pinnedHit pins seg's hit (records this process wrote: verified) and
// checks that it sends data, through d's page cache descriptor.
func pinnedHit(t *testing.T, f *Flash, d *device.File, seg tier.Segment, hits *Hits, key string, data []byte) *FileHit {
	t.Helper()
	h := mustPin(t, f, seg, hits, key)
	if got := hitBytes(t, d, h); !bytes.Equal(got, data) {
		t.Fatalf("%s: the hit sent %d bytes that are not its record's", key, len(got))
	}
	return h
}
