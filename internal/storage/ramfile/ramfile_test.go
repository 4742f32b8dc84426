package ramfile

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func object(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// newArena is New(o), the test failed if it fails.
func newArena(t testing.TB, o Options) *Arena {
	t.Helper()
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// collapsed waits until the collapser has dealt with n regions.
func collapsed(t testing.TB, a *Arena, n uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for s := a.Stats(); s.HugeRegions+s.FlatRegions < n; s = a.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("the collapser did not finish: %+v", s)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPutKeepsTheBytes(t *testing.T) {
	a := newArena(t, Options{Pack: true, Live: 16 << 20})
	data := object(100<<10+7, 1)
	f, ok := a.Put(data)
	if !ok {
		t.Fatalf("Put refused %d bytes: %+v", len(data), a.Stats())
	}
	if !bytes.Equal(f.Bytes(), data) || f.Len() != int64(len(data)) {
		t.Fatal("the file's bytes are not the object's")
	}
	// The segment's size never changes: a send's offset stays in it.
	if err := unix.Ftruncate(f.res.seg.fd, 1); err == nil {
		t.Fatal("a sealed segment was shrunk")
	}
	if _, ok := a.Put(make([]byte, MinObject-1)); ok {
		t.Fatal("an object below the minimum went into a file")
	}
	g, ok := a.Put(object(64<<10, 2))
	if !ok {
		t.Fatal("a second object refused")
	}
	b := g.Range(100, 1000)
	rest, err := b.Rest(10)
	if err != nil || !bytes.Equal(rest, object(64<<10, 2)[110:1100]) {
		t.Fatalf("Rest(10) of the range at 100: %v", err)
	}
	// The second object follows the first in the segment's file.
	if off, n, mem, err := b.Part(0); off != int64(len(data))+100 || n != 1000 || mem != nil || err != nil || b.Parts() != 1 {
		t.Fatalf("Part(0) = %d, %d, %v, %v", off, n, mem != nil, err)
	}
	got := make([]byte, 1000)
	if _, err := unix.Pread(b.FD(), got, int64(len(data))+100); err != nil || !bytes.Equal(got, object(64<<10, 2)[100:1100]) {
		t.Fatalf("the segment's file at the part's offset is not the range: %v", err)
	}
	s := a.Stats()
	if s.Files != 2 || s.FileBytes != int64(len(data))+64<<10 || s.Regions != 1 || s.Bytes != RegionSize || s.Segments != 1 || s.Made != 2 {
		t.Fatalf("stats %+v: want 2 objects in 1 region of 1 segment", s)
	}
	runtime.KeepAlive(f)
	runtime.KeepAlive(g)
	if _, err := New(Options{Pack: true, Live: 1 << 20, Limit: 1 << 20}); err == nil {
		t.Fatal("an arena whose limit is below one region")
	}
}

// TestObjectsAcrossRegions: objects are packed one after another,
// across regions; each reads back as written, from the mapping and from
// the file.
func TestObjectsAcrossRegions(t *testing.T) {
	a := newArena(t, Options{Pack: true, Live: 64 << 20})
	var fs []*File
	for i := range 40 { // 40 * 100 KiB: three regions, two objects across a boundary
		f, ok := a.Put(object(100<<10+i, uint64(i)))
		if !ok {
			t.Fatalf("object %d refused: %+v", i, a.Stats())
		}
		fs = append(fs, f)
	}
	across := 0
	for i, f := range fs {
		want := object(100<<10+i, uint64(i))
		got := make([]byte, len(want))
		off, _, _, _ := f.Range(0, f.Len()).Part(0)
		if off/RegionSize != (off+f.Len()-1)/RegionSize {
			across++
		}
		if _, err := unix.Pread(f.res.seg.fd, got, off); err != nil || !bytes.Equal(got, want) || !bytes.Equal(f.Bytes(), want) {
			t.Fatalf("object %d at %d: %v", i, off, err)
		}
	}
	if s := a.Stats(); across != 1 || s.Regions != 2 || s.Segments != 1 {
		t.Fatalf("%d objects across a boundary, stats %+v", across, s)
	}
}

// TestRegionsFreedWhenUnused: a region nothing uses (its objects
// unreachable, the cursor past it) is freed once the collector has run,
// and its bytes return to the limit, which refuses objects while it is
// reached; bytes still held do not change.
func TestRegionsFreedWhenUnused(t *testing.T) {
	a := newArena(t, Options{Pack: true, Live: 4 << 20, Limit: 3 * RegionSize})
	var fs []*File
	for i := range 12 { // 12 * 512 KiB: three regions
		f, ok := a.Put(object(512<<10, uint64(i)))
		if !ok {
			t.Fatalf("object %d within the limit refused: %+v", i, a.Stats())
		}
		fs = append(fs, f)
	}
	if _, ok := a.Put(object(64<<10, 99)); ok {
		t.Fatal("an object past the limit went into a file")
	}
	if s := a.Stats(); s.Refused != 1 || s.Collections == 0 || s.Regions != 3 {
		t.Fatalf("stats %+v: want 1 refused, a collection asked for, 3 regions", s)
	}
	keep := fs[4].Bytes()
	for i := range 4 { // the first region's objects
		fs[i] = nil
	}
	freed := func() bool {
		for range 50 {
			runtime.GC()
			// A release frees the region before it counts the object
			// closed: both, or a stats read between them sees 3 closed.
			if s := a.Stats(); s.Freed >= 1 && s.Closed >= 4 {
				return true
			}
			time.Sleep(10 * time.Millisecond)
		}
		return false
	}
	if !freed() {
		t.Fatalf("the unused region was not freed: %+v", a.Stats())
	}
	if s := a.Stats(); s.Regions != 2 || s.Bytes != 2*RegionSize || s.Files != 8 || s.Closed != 4 {
		t.Fatalf("stats %+v: want the two regions still used", s)
	}
	if _, ok := a.Put(object(64<<10, 100)); !ok {
		t.Fatal("room freed by the region was refused")
	}
	if !bytes.Equal(keep, object(512<<10, 4)) {
		t.Fatal("a held object's bytes changed")
	}
	runtime.KeepAlive(fs)
}

// TestSentBytesOutliveTheFile: bytes a send handed to a socket are the
// object's whatever becomes of its region after (freed, its memory given
// to other objects) until the client reads them: the promise that a
// client never receives another object's bytes.
func TestSentBytesOutliveTheFile(t *testing.T) {
	a := newArena(t, Options{Pack: true, Live: 64 << 20})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := <-accepted
	defer server.Close()
	const n = 1 << 20
	want := object(n, 7)
	f, ok := a.Put(want)
	if !ok {
		t.Fatal("Put refused")
	}
	collapsed(t, a, 1) // the collapser done with its region
	rc, err := server.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	// Send what the socket takes now (the client reads nothing yet).
	var sent int64
	if err := f.Range(0, n).WithFD(func(fd int) error {
		return rc.Write(func(out uintptr) bool {
			off, _, _, _ := f.Range(0, n).Part(0)
			k, e := unix.Sendfile(int(out), fd, &off, n)
			if e != nil && e != unix.EAGAIN {
				t.Errorf("sendfile: %v", e)
			}
			sent = int64(max(k, 0))
			return true
		})
	}); err != nil {
		t.Fatal(err)
	}
	if sent == 0 {
		t.Fatal("nothing sent")
	}
	f.Close()
	for i := range 64 { // the cursor leaves the region, which is freed; fresh regions, likely on its pages
		if _, ok := a.Put(bytes.Repeat([]byte{byte(i)}, n)); !ok {
			t.Fatal("Put refused")
		}
	}
	if s := a.Stats(); s.Freed == 0 {
		t.Fatalf("the sent object's region was not freed: %+v", s)
	}
	got := make([]byte, sent)
	if _, err := io.ReadFull(client, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want[:sent]) {
		t.Fatalf("the %d bytes sent before the region was freed are not the object's", sent)
	}
}

// TestRegionsAreHugePages: where the kernel makes huge pages of memory
// files on request (Linux 6.1 and later, shmem THP not "deny"), each
// region opened is one.
func TestRegionsAreHugePages(t *testing.T) {
	setting, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/shmem_enabled")
	if err != nil || strings.Contains(string(setting), "[deny]") || strings.Contains(string(setting), "[force]") {
		t.Skipf("no huge pages for memory files on request here (%q, %v)", setting, err)
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		var maj, min int
		if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &maj, &min); err == nil && (maj < 6 || maj == 6 && min < 1) {
			t.Skipf("kernel %d.%d has no MADV_COLLAPSE", maj, min)
		}
	}
	a := newArena(t, Options{Pack: true, Live: 64 << 20})
	var fs []*File
	for i := range 4 {
		f, ok := a.Put(object(1<<20, uint64(i)))
		if !ok {
			t.Fatal("Put refused")
		}
		fs = append(fs, f)
	}
	collapsed(t, a, 2)
	if s := a.Stats(); s.HugeRegions != 2 {
		// The kernel may have no huge page to give right now (memory
		// too fragmented to assemble 2 MiB, or reclaim not done in
		// time): the arena then leaves the region flat, as it should.
		if e := unix.Errno(a.flatErr.Load()); s.HugeRegions+s.FlatRegions == 2 && (e == unix.ENOMEM || e == unix.EAGAIN) {
			t.Skipf("the kernel made %d of 2 regions huge pages, refusing the other with %v (no free huge page now)", s.HugeRegions, e)
		}
		t.Fatalf("stats %+v: want both regions in huge pages", s)
	}
	for i, f := range fs {
		if !bytes.Equal(f.Bytes(), object(1<<20, uint64(i))) {
			t.Fatalf("object %d changed by its region's huge page", i)
		}
	}
}

// TestMaxFiles: the segments open are bounded by number too (each is a
// descriptor): past it an object stays in the heap; a segment whose
// objects are all released (the cursor gone to another) is closed.
func TestMaxFiles(t *testing.T) {
	a := newArena(t, Options{Pack: true, Live: 64 << 20, MaxFiles: 2, SegmentSize: RegionSize})
	var fs []*File
	for i := range 4 { // two to a segment
		f, ok := a.Put(object(1<<20, uint64(i)))
		if !ok {
			t.Fatalf("object %d within the bound refused", i)
		}
		fs = append(fs, f)
	}
	if _, ok := a.Put(object(40<<10, 9)); ok {
		t.Fatal("a third segment past MaxFiles 2")
	}
	if s := a.Stats(); s.Segments != 2 || s.Refused != 1 || s.MaxFiles != 2 {
		t.Fatalf("stats %+v", s)
	}
	fs[0].Close()
	fs[1].Close()
	if s := a.Stats(); s.Segments != 1 {
		t.Fatalf("stats %+v: the first segment is not closed", s)
	}
	if _, ok := a.Put(object(40<<10, 10)); !ok {
		t.Fatal("refused after a segment closed")
	}
	runtime.KeepAlive(fs)
}

// The default bound is half the process's descriptors.
func TestMaxFilesDefault(t *testing.T) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		t.Skip(err)
	}
	a := newArena(t, Options{Pack: true, Live: 4 << 20})
	if got := a.Stats().MaxFiles; got != int64(rl.Cur)/2 {
		t.Fatalf("max files %d, want half of %d", got, rl.Cur)
	}
}

// BenchmarkSendfile: sendfile(2) of an object to a loopback socket whose
// peer drains it, from an arena's region (a huge page where the kernel
// makes one) and from a memory file of 4 KiB pages (the one file per
// object before decision 0041), side by side. The peer's copy bounds the
// rate (ns/op); the sender's system time (sys-ns/op, its thread's) is the
// server's cost:
//
//	go test -run - -bench Sendfile -count 5 ./internal/storage/ramfile
func BenchmarkSendfile(b *testing.B) {
	for _, size := range []int{100 << 10, 1 << 20} {
		data := object(size, 1)
		b.Run(fmt.Sprintf("%dKiB/region", size>>10), func(b *testing.B) {
			a := newArena(b, Options{Pack: true, Live: 64 << 20})
			f, ok := a.Put(data)
			if !ok {
				b.Fatal("Put refused")
			}
			collapsed(b, a, 1)
			off, _, _, _ := f.Range(0, f.Len()).Part(0)
			benchSendfile(b, f.res.seg.fd, off, size)
			b.ReportMetric(float64(a.Stats().HugeRegions), "huge-regions")
			runtime.KeepAlive(f)
		})
		for _, backing := range []string{TmpfsAuto, TmpfsOff} {
			b.Run(fmt.Sprintf("%dKiB/own-%s", size>>10, backing), func(b *testing.B) {
				a := newArena(b, Options{Live: 64 << 20, Tmpfs: backing})
				defer a.Close()
				f, ok := a.Put(data)
				if !ok {
					b.Fatal("Put refused")
				}
				b.Logf("%s", a.Stats().Backing)
				benchSendfile(b, f.res.seg.fd, 0, size)
				runtime.KeepAlive(f)
			})
		}
		b.Run(fmt.Sprintf("%dKiB/pages", size>>10), func(b *testing.B) {
			fd, err := unix.MemfdCreate("bench", unix.MFD_CLOEXEC)
			if err != nil {
				b.Fatal(err)
			}
			defer unix.Close(fd)
			if _, err := unix.Pwrite(fd, data, 0); err != nil {
				b.Fatal(err)
			}
			benchSendfile(b, fd, 0, size)
		})
	}
}

func benchSendfile(b *testing.B, fd int, at int64, size int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		io.Copy(io.Discard, c) //nolint:errcheck
		c.Close()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(size))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var r0, r1 unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &r0) //nolint:errcheck
	b.ResetTimer()
	for range b.N {
		off, left := at, size
		for left > 0 {
			var k int
			var e error
			if err := rc.Write(func(out uintptr) bool {
				k, e = unix.Sendfile(int(out), fd, &off, left)
				return e != unix.EAGAIN
			}); err != nil || e != nil {
				b.Fatal(err, e)
			}
			left -= k
		}
	}
	b.StopTimer()
	unix.Getrusage(unix.RUSAGE_THREAD, &r1) //nolint:errcheck
	b.ReportMetric(float64(r1.Stime.Nano()-r0.Stime.Nano())/float64(b.N), "sys-ns/op")
}

// TestWasteWithinSlack: objects that leave in another order than they
// came (a third of them kept, spread over every region) keep regions
// mostly empty; the bytes regions hold beyond their objects stay within
// the slack: past it objects get files of their own (4 KiB pages, nothing
// beside them), so the memory files hold RAM's objects and at most the
// slack, the memory budget's share.
func TestWasteWithinSlack(t *testing.T) {
	const live = 64 << 20
	a := newArena(t, Options{Pack: true, Live: live})
	var kept []*File
	for i := range 300 {
		f, ok := a.Put(object(1<<20, uint64(i)))
		if !ok {
			t.Fatalf("object %d refused: %+v", i, a.Stats())
		}
		if i%3 == 0 && len(kept) < 40 { // RAM keeps 40 MiB of its 64
			kept = append(kept, f)
		} else {
			f.Close()
		}
		if s := a.Stats(); s.Bytes-s.FileBytes > Slack(live) {
			t.Fatalf("after object %d: regions hold %d bytes beyond their objects, past the slack %d", i, s.Bytes-s.FileBytes, Slack(live))
		}
	}
	s := a.Stats()
	if s.OwnFiles == 0 || s.Bytes > live+Slack(live) {
		t.Fatalf("stats %+v: want objects in files of their own, within RAM and the slack", s)
	}
	for i, f := range kept {
		if !bytes.Equal(f.Bytes(), object(1<<20, uint64(3*i))) {
			t.Fatalf("kept object %d changed", 3*i)
		}
	}
	// Own files close with their objects.
	kept = nil
	for stop := time.Now().Add(10 * time.Second); a.Stats().OwnFiles > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(stop) {
			t.Fatalf("own files open after their objects: %+v", a.Stats())
		}
		runtime.GC()
	}
}

// TestFreedRegionInaccessible: a freed region's mapping faults if read
// (a holder bug reads no zeros and puts no pages back in the file), and
// its pages are out of the file.
func TestFreedRegionInaccessible(t *testing.T) {
	a := newArena(t, Options{Pack: true, Live: 64 << 20})
	keep, _ := a.Put(object(MinObject, 9))
	f, ok := a.Put(object(3*RegionSize, 1)) // regions 0 to 3: 1 and 2 its own
	if !ok {
		t.Fatal("Put refused")
	}
	s := f.res.seg
	mid := uintptr(unsafe.Pointer(&s.mapped[RegionSize]))
	f.Close()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, line := range strings.Split(string(maps), "\n") {
		var lo, hi uintptr
		var perms string
		if _, err := fmt.Sscanf(line, "%x-%x %s", &lo, &hi, &perms); err != nil || mid < lo || mid >= hi {
			continue
		}
		found = true
		if perms[0] != '-' {
			t.Fatalf("the freed region is mapped %q: %s", perms, line)
		}
	}
	if !found {
		t.Fatal("the freed region's address is not in /proc/self/maps")
	}
	var st unix.Stat_t
	if err := unix.Fstat(s.fd, &st); err != nil {
		t.Fatal(err)
	}
	if held := st.Blocks * 512; held > 2*RegionSize {
		t.Fatalf("the segment's file holds %d bytes after its middle regions were freed", held)
	}
	runtime.KeepAlive(keep)
}

// TestClose: a closed arena refuses objects; those it holds stay whole.
func TestClose(t *testing.T) {
	a := newArena(t, Options{Pack: true, Live: 16 << 20})
	f, _ := a.Put(object(100<<10, 1))
	a.Close()
	a.Close()
	if _, ok := a.Put(object(100<<10, 2)); ok {
		t.Fatal("a closed arena took an object")
	}
	if !bytes.Equal(f.Bytes(), object(100<<10, 1)) {
		t.Fatal("an object held changed when the arena closed")
	}
	f.Close()
	if s := a.Stats(); s.Segments != 0 || s.Regions != 0 {
		t.Fatalf("stats %+v: the segment stays after its last object", s)
	}
}

// TestSparseObjectsMove: objects kept while the others of their regions
// leave are said Sparse (once) when regions hold more than half the
// slack beside their objects; Move packs their bytes at the cursor, and
// once the old Files are gone their regions are freed.
func TestSparseObjectsMove(t *testing.T) {
	a := newArena(t, Options{Pack: true, Live: 16 << 20, Limit: 26 << 20}) // slack 10 MiB: pressed past 5
	var kept []*File
	var seeds []uint64
	for i := range 60 { // 60 * 100 KiB: regions 0 and 1 closed, 2 the cursor's; kept: 0, 10, 20 (across 0 and 1), 30, 40 (across 1 and 2), 50
		f, ok := a.Put(object(100<<10, uint64(i)))
		if !ok {
			t.Fatalf("object %d refused", i)
		}
		if i%10 == 0 {
			kept, seeds = append(kept, f), append(seeds, uint64(i))
		} else {
			f.Close()
		}
	}
	if s := a.Stats(); s.OwnFiles != 0 || s.Regions != 3 {
		t.Fatalf("stats %+v: want 3 regions", s)
	}
	moved := 0
	for j, f := range kept {
		off, _, _, _ := f.Range(0, f.Len()).Part(0)
		sparse := f.Sparse()
		if region := off / RegionSize; region < 2 && !sparse || region >= 2 && sparse {
			t.Fatalf("object %d in region %d: sparse %v (%+v)", seeds[j], region, sparse, a.Stats())
		}
		if !sparse {
			continue
		}
		if f.Sparse() {
			t.Fatal("sparse twice before a move")
		}
		nf, ok := a.Move(f)
		if !ok {
			t.Fatalf("object %d not moved: %+v", seeds[j], a.Stats())
		}
		if noff, _, _, _ := nf.Range(0, nf.Len()).Part(0); noff/RegionSize < 2 || !bytes.Equal(nf.Bytes(), object(100<<10, seeds[j])) {
			t.Fatalf("object %d moved to %d, equal %v", seeds[j], noff, bytes.Equal(nf.Bytes(), f.Bytes()))
		}
		f.Close()
		kept[j] = nf
		moved++
	}
	if s := a.Stats(); moved != 5 || s.Moved != 5 || s.Regions != 2 || s.Freed != 2 {
		t.Fatalf("%d moved, stats %+v: want 5 moved, regions 0 and 1 freed", moved, s)
	}
	runtime.KeepAlive(kept)
}

// TestMoveBeyondTheWasteBound: past the waste bound, a new object gets a
// file of its own, but a move still opens regions (within the limit):
// moves are what bring the waste down.
func TestMoveBeyondTheWasteBound(t *testing.T) {
	a := newArena(t, Options{Pack: true, Live: 16 << 20, Limit: 20 << 20}) // slack 4 MiB
	var kept []*File
	for i := range 80 {
		f, ok := a.Put(object(100<<10, uint64(i)))
		if !ok {
			t.Fatalf("object %d refused", i)
		}
		if i%10 == 0 {
			kept = append(kept, f)
		} else {
			f.Close()
		}
	}
	if s := a.Stats(); s.OwnFiles == 0 {
		t.Fatalf("stats %+v: no object past the waste bound in a file of its own", s)
	}
	moved := 0
	for _, f := range kept {
		if f.res.seg.own == 0 && f.Sparse() {
			if _, ok := a.Move(f); !ok {
				t.Fatalf("a sparse object not moved past the waste bound: %+v", a.Stats())
			}
			moved++
		}
	}
	if moved == 0 {
		t.Fatalf("nothing sparse: %+v", a.Stats())
	}
}

// TestCollapseRate: regions opened faster than CollapseRate past a
// segment's worth stay in 4 KiB pages (churn), and read back as written.
func TestCollapseRate(t *testing.T) {
	a := newArena(t, Options{Pack: true, Live: 512 << 20})
	const n = 80 // regions, one object each: far more than the burst
	data := object(RegionSize, 1)
	start := time.Now()
	for i := range n {
		f, ok := a.Put(data)
		if !ok {
			t.Fatalf("object %d refused", i)
		}
		if !bytes.Equal(f.Bytes(), data) {
			t.Fatalf("object %d changed", i)
		}
		f.Close()
	}
	took := time.Since(start)
	collapsed(t, a, n)
	// The bound shows only if the regions came faster than it lets
	// through past the burst (a slow machine, the race detector).
	if burst := SegmentSize / RegionSize; took > time.Duration(float64(n-burst-8)/CollapseRate*float64(time.Second)) {
		t.Skipf("%d regions opened in %v: not faster than %d a second past %d", n, took, CollapseRate, burst)
	}
	if s := a.Stats(); s.FlatRegions == 0 {
		t.Fatalf("stats %+v: every region of a burst of %d collapsed", s, n)
	}
}

// TestUnpacked: without Pack, every object is a sealed file of its own,
// closed with its object; nothing is said sparse or moved.
func TestUnpacked(t *testing.T) {
	for _, backing := range []string{TmpfsAuto, TmpfsOff} {
		t.Run(backing, func(t *testing.T) {
			a := newArena(t, Options{Live: 16 << 20, Tmpfs: backing})
			defer a.Close()
			tmpfs := strings.HasPrefix(a.Stats().Backing, "tmpfs")
			switch {
			case backing == TmpfsOff && tmpfs:
				t.Fatalf("backing %q with tmpfs off", a.Stats().Backing)
			case backing == TmpfsAuto && !tmpfs && os.Geteuid() == 0:
				t.Logf("no tmpfs of its own as root: %s", a.Stats().Backing)
			}
			f, ok := a.Put(object(100<<10, 1))
			if !ok || !bytes.Equal(f.Bytes(), object(100<<10, 1)) {
				t.Fatal("an object not kept whole")
			}
			if _, err := unix.Pwrite(f.res.seg.fd, []byte("x"), 0); err == nil {
				t.Fatal("a write to an object's own file succeeded")
			}
			if err := unix.Ftruncate(f.res.seg.fd, 1); err == nil {
				t.Fatal("an object's own file was shrunk")
			}
			// A memory file is sealed against writes; a tmpfs file cannot be,
			// and is left no writable descriptor.
			seals, err := unix.FcntlInt(uintptr(f.res.seg.fd), unix.F_GET_SEALS, 0)
			if memfd := err == nil && seals&unix.F_SEAL_WRITE != 0; memfd == tmpfs {
				t.Fatalf("seals %x (%v) for backing %q", seals, err, a.Stats().Backing)
			}
			if fl, err := unix.FcntlInt(uintptr(f.res.seg.fd), unix.F_GETFL, 0); err != nil || tmpfs && fl&unix.O_ACCMODE != unix.O_RDONLY {
				t.Fatalf("descriptor flags %x (%v)", fl, err)
			}
			if off, _, _, _ := f.Range(10, 10).Part(0); off != 10 || f.Sparse() {
				t.Fatalf("part at %d, sparse %v", off, f.Sparse())
			}
			if s := a.Stats(); s.OwnFiles != 1 || s.Regions != 0 || s.Segments != 1 || s.Bytes != 100<<10 {
				t.Fatalf("stats %+v: want one file of its own", s)
			}
			f.Close()
			if s := a.Stats(); s.OwnFiles != 0 || s.Segments != 0 || s.Bytes != 0 {
				t.Fatalf("stats %+v after the close", s)
			}
		})
	}
}

// An operator's directory must be on a tmpfs: elsewhere RAM's objects
// would be written to disk.
func TestTmpfsDirectory(t *testing.T) {
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	onTmpfs := st.Type == tmpfsMagic
	if !onTmpfs {
		if _, err := New(Options{Live: 16 << 20, Tmpfs: dir}); err == nil || !strings.Contains(err.Error(), "not on a tmpfs") {
			t.Fatalf("a directory on %x taken: %v", st.Type, err)
		}
	}
	if _, err := New(Options{Live: 16 << 20, Tmpfs: filepath.Join(dir, "missing")}); err == nil {
		t.Fatal("a missing directory taken")
	}
	// The description says whether the mount gives large folios.
	for _, huge := range []string{"within_size", "never"} {
		mnt := filepath.Join(t.TempDir(), huge)
		if err := os.Mkdir(mnt, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "huge="+huge+",size=64m"); err != nil {
			t.Logf("no tmpfs mounted here (%v): the huge= option unchecked", err)
			break
		}
		a := newArena(t, Options{Live: 16 << 20, Tmpfs: mnt})
		b := a.Stats().Backing
		a.Close()
		unix.Unmount(mnt, unix.MNT_DETACH) //nolint:errcheck
		if without := strings.Contains(b, "without huge=within_size"); without != (huge == "never") {
			t.Fatalf("huge=%s described as %q", huge, b)
		}
	}
	shm := "/dev/shm"
	if err := unix.Statfs(shm, &st); err != nil || st.Type != tmpfsMagic || unix.Access(shm, unix.W_OK) != nil {
		t.Skip("no writable tmpfs at /dev/shm")
	}
	a := newArena(t, Options{Live: 16 << 20, Tmpfs: shm})
	defer a.Close()
	if b := a.Stats().Backing; !strings.HasPrefix(b, "tmpfs "+shm) {
		t.Fatalf("backing %q", b)
	}
	if err := CheckTmpfs(shm); err != nil {
		t.Fatal(err)
	}
	if err := CheckTmpfs(dir); !onTmpfs && err == nil {
		t.Fatal("CheckTmpfs took a directory that is not on a tmpfs")
	}
	data := object(200<<10+3, 5)
	f, ok := a.Put(data)
	if !ok || !bytes.Equal(f.Bytes(), data) {
		t.Fatal("an object not kept whole")
	}
	got := make([]byte, len(data))
	if n, err := unix.Pread(f.Range(0, f.Len()).FD(), got, 0); err != nil || n != len(data) || !bytes.Equal(got, data) {
		t.Fatalf("the file read back %d bytes: %v", n, err)
	}
	// Named nowhere: nothing is left in the directory.
	if names, _ := os.ReadDir(shm); len(names) > 0 {
		for _, n := range names {
			if strings.Contains(n.Name(), "strata") {
				t.Fatalf("a name left in %s: %s", shm, n.Name())
			}
		}
	}
	runtime.KeepAlive(f)
}
