package store

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/device"
)

const testBlock = 64 << 10

func testOpts() tier.Options {
	return tier.Options{RAMBytes: 256 << 10, BlockSize: testBlock, MonitorRoom: 1, RingBytes: 1 << 20}
}

// fill caches n segments of varied sizes (10 KB, then 3 KB more each) and
// drives them to flash.
func fill(t testing.TB, f *Flash, c *tier.Cache, n int) map[string][]byte {
	t.Helper()
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = 10_000 + i*3_000
	}
	return fillSized(t, f, c, sizes...)
}

// fillSized caches segments of the sizes given, each of bytes that
// differ from position to position (so that a misplaced byte shows), and
// drives them to flash.
func fillSized(t testing.TB, f *Flash, c *tier.Cache, sizes ...int) map[string][]byte {
	t.Helper()
	want := make(map[string][]byte)
	for i, size := range sizes {
		key := fmt.Sprintf("v/bbb/700k/%d.m4s", i)
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(j*7 + j/251 + i)
		}
		want[key] = data
		c.Insert(key, int64(len(data)), data, 0, 0)
		c.Monitor(0)
		drain(t, f, c, false)
	}
	drain(t, f, c, true)
	return want
}

// drain writes every block the core plans; with flush, the partial one too.
func drain(t testing.TB, f *Flash, c *tier.Cache, flush bool) {
	t.Helper()
	for {
		w := c.Feed(0, tier.Signals{})
		if w == nil && flush {
			w = c.Flush(0)
		}
		if w == nil {
			return
		}
		err := f.WriteBlock(w)
		c.WriteDone(w, err, 0)
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenFormatsThenRecovers(t *testing.T) {
	mem := device.NewMem(16*testBlock, 4096)
	f, c, rep, err := Open(mem, testOpts(), Options{Logger: discardLogger()})
	if err != nil || rep.Segments != 0 {
		t.Fatalf("open: %v %+v", err, rep)
	}
	want := fill(t, f, c, 20)
	onFlash := c.Occupancy().SSDSegments
	if onFlash == 0 {
		t.Fatal("nothing reached flash")
	}
	f2, c2, rep, err := Open(mem, testOpts(), Options{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Segments != onFlash || rep.CorruptRecords != 0 {
		t.Fatalf("recovered %+v, want %d segments", rep, onFlash)
	}
	for key, data := range want {
		seg, ok := c2.FlashSegment(key)
		if !ok {
			continue
		}
		got, err := f2.ReadSegment(seg)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: %v", key, err)
		}
	}
}

func TestGeometryChangeReformats(t *testing.T) {
	mem := device.NewMem(16*testBlock, 4096)
	f, c, _, _ := Open(mem, testOpts(), Options{Logger: discardLogger()})
	fill(t, f, c, 10)
	o := testOpts()
	o.BlockSize = 2 * testBlock
	_, c2, rep, err := Open(mem, o, Options{Logger: discardLogger()})
	if err != nil || rep.Segments != 0 || c2.Occupancy().SSDSegments != 0 {
		t.Fatalf("reopen with another block size: %v %+v", err, rep)
	}
	if c2.FormatID() == c.FormatID() {
		t.Fatal("format id reused")
	}
}

func TestReadSegmentDetectsCorruption(t *testing.T) {
	mem := device.NewMem(16*testBlock, 4096)
	fault := device.NewFault(mem)
	f, c, _, _ := Open(fault, testOpts(), Options{Logger: discardLogger()})
	fill(t, f, c, 5)
	f.ForgetVerified() // as after a restart: nothing verified yet
	seg, ok := c.FlashSegment("v/bbb/700k/1.m4s")
	if !ok {
		t.Fatal("segment not on flash")
	}
	ch := seg.Chunks[0]
	fault.CorruptReads(ch.RecordOff(testBlock)+300, 1)
	if _, err := f.ReadSegment(seg); !errors.Is(err, tier.ErrCorrupt) {
		t.Fatalf("corrupt read: err %v", err)
	}
	fault.Reset()
	fault.FailNext(device.OpRead, 1)
	if _, err := f.ReadSegment(seg); !errors.Is(err, device.ErrInjected) {
		t.Fatalf("failed read: err %v", err)
	}
}

// Decision 0030: a record's data is verified once per process. What this
// process wrote is not checked again on read; what a restart finds on
// flash is checked on its first read, and not after.
func TestVerifyOnce(t *testing.T) {
	mem := device.NewMem(16*testBlock, 4096)
	fault := device.NewFault(mem)
	f, c, _, _ := Open(fault, testOpts(), Options{Logger: discardLogger()})
	want := fill(t, f, c, 5)
	seg, ok := c.FlashSegment("v/bbb/700k/1.m4s")
	if !ok {
		t.Fatal("segment not on flash")
	}
	for range 3 {
		if _, err := f.ReadSegment(seg); err != nil {
			t.Fatal(err)
		}
	}
	if st := f.VerifyStats(); st.Checked != 0 || st.Skipped != 3 {
		t.Fatalf("reads of records written by this process: %+v, want 0 checked, 3 skipped", st)
	}

	// A restart: the same bytes, nothing marked. A record that does not
	// read back as written is caught on its first read.
	f2, c2, _, err := Open(fault, testOpts(), Options{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if recs, blocks := f2.marks.count(); recs != 0 || blocks != 0 {
		t.Fatalf("recovery starts with %d records and %d blocks marked", recs, blocks)
	}
	seg2, ok := c2.FlashSegment(seg.Key)
	if !ok {
		t.Fatal("segment not recovered")
	}
	fault.CorruptReads(seg2.Chunks[0].RecordOff(testBlock)+300, 1)
	if _, err := f2.ReadSegment(seg2); !errors.Is(err, tier.ErrCorrupt) {
		t.Fatalf("first read after a restart of a changed record: err %v", err)
	}
	fault.Reset()
	for i := range 2 {
		data, err := f2.ReadSegment(seg2)
		if err != nil || !bytes.Equal(data, want[seg.Key]) {
			t.Fatalf("read %d after restart: err %v", i, err)
		}
	}
	if st := f2.VerifyStats(); st.Checked != 1 || st.Skipped != 1 {
		t.Fatalf("after a restart: %+v, want the first good read checked and the second not", st)
	}
	if !f2.Verified(seg2.Chunks[0]) {
		t.Fatal("a record verified by a read is not marked")
	}

}

// A chunk overwritten after the lookup is detected, never returned.
func TestReadSegmentDetectsOverwrite(t *testing.T) {
	mem := device.NewMem(4*testBlock, 4096) // two data blocks
	f, c, _, _ := Open(mem, testOpts(), Options{Logger: discardLogger()})
	fill(t, f, c, 3)
	seg, ok := c.FlashSegment("v/bbb/700k/0.m4s")
	if !ok {
		t.Fatal("segment not on flash")
	}
	if !f.Verified(seg.Chunks[0]) {
		t.Fatal("a record this process wrote is not marked verified")
	}
	fill(t, f, c, 30) // many times the two blocks
	if cur, ok := c.FlashSegment(seg.Key); ok && cur.Gen == seg.Gen {
		t.Fatal("the segment's block was never replaced")
	}
	if f.Verified(seg.Chunks[0]) {
		t.Fatal("a rewritten block's old generation is still marked verified")
	}
	_, err := f.ReadSegment(seg)
	if !errors.Is(err, ErrMismatch) && !errors.Is(err, tier.ErrCorrupt) {
		t.Fatalf("read of an overwritten chunk: err %v", err)
	}
}

func TestFsckFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flash.cache")
	dev, err := device.OpenFile(path, device.FileOptions{Size: 16 * testBlock, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	f, c, _, err := Open(dev, testOpts(), Options{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, f, c, 20)
	segs := c.Occupancy().SSDSegments
	rep, err := Fsck(dev, nil)
	if err != nil || !rep.Clean() || rep.Segments != segs || rep.BlockSize != testBlock || rep.Blocks != 16 {
		t.Fatalf("fsck: %v %+v, want %d segments", err, rep, segs)
	}
	// Corrupt one record's data: one record corrupt, its segment gone.
	seg, _ := c.FlashSegment("v/bbb/700k/3.m4s")
	buf := device.AlignedBuffer(4096, 4096)
	off := device.AlignDown(seg.Chunks[0].RecordOff(testBlock)+2000, 4096)
	dev.ReadAt(buf, off)
	buf[100] ^= 0xff
	dev.WriteAt(buf, off)
	rep, err = Fsck(dev, nil)
	if err != nil || rep.Clean() || rep.CorruptRecords == 0 || rep.Segments >= segs || len(rep.Problems) == 0 {
		t.Fatalf("fsck after corruption: %v %+v", err, rep)
	}
	dev.Close()
	// Not a cache at all.
	other, _ := device.OpenFile(filepath.Join(t.TempDir(), "zeros"), device.FileOptions{Size: 1 << 20, Logger: discardLogger()})
	if _, err := Fsck(other, nil); !errors.Is(err, ErrNotACache) {
		t.Fatalf("fsck of zeros: %v", err)
	}
}

func TestReadRange(t *testing.T) {
	mem := device.NewMem(16*testBlock, 4096)
	f, c, _, _ := Open(mem, testOpts(), Options{Logger: discardLogger()})
	data := make([]byte, 3*testBlock+777) // spans four blocks
	for i := range data {
		data[i] = byte(i * 7)
	}
	if !c.Stage("f/big", int64(len(data)), data, 1) {
		t.Fatal("not staged")
	}
	drain(t, f, c, true)
	seg, ok := c.FlashSegment("f/big")
	if !ok || len(seg.Chunks) < 4 {
		t.Fatalf("on flash: %v, %d chunks", ok, len(seg.Chunks))
	}
	for _, r := range [][2]int64{{0, 10}, {testBlock - 5, 20}, {100, int64(len(data)) - 100}, {int64(len(data)) - 1, 1}, {5, 0}} {
		got, err := f.ReadRange(seg, r[0], r[1])
		if err != nil || !bytes.Equal(got, data[r[0]:r[0]+r[1]]) {
			t.Fatalf("range %v: %v", r, err)
		}
	}
	if _, err := f.ReadRange(seg, int64(len(data)), 1); err == nil {
		t.Fatal("range past the end accepted")
	}
}
