// Package ramfile keeps the RAM tier's larger objects in files in memory,
// so that a hit can go to the client's socket with sendfile(2), the
// kernel referring to the file's pages instead of copying the bytes into
// the socket (decision 0036): on an edge's 100 KiB RAM hit the copy was a
// quarter of the node's CPU. By default each object is a file of its own
// in a tmpfs of the process's own whose files the kernel backs with
// large folios, or a memory file (memfd_create(2)) of 4 KiB pages where
// the process may not mount one (tmpfs.go, decision 0042).
//
// With Options.Pack (off by default):
// Objects are packed one after another into segments: memory files of up
// to 64 MiB, mapped read only, made of 2 MiB regions that the kernel is
// asked to back with one huge page each (MADV_COLLAPSE, decision 0041):
// a sendfile(2) of a 1 MiB object from a huge page costs the kernel about
// 30% less than from 4 KiB pages (one folio to look up and reference
// instead of 256), and a 100 KiB object's about 15%. A segment is written
// only at its end (a cursor that only moves forward), so a byte of it is
// written once; a region is freed once no object in it is used and the
// cursor has left it, by punching it out of the file whole (the kernel
// drops its pages from the file; a page a send still refers to stays the
// socket's until the client has it); a segment whose regions are all
// freed is closed. Two things keep a client from ever receiving other
// bytes than the object's:
//
//   - The kernel: pages a send has handed to the socket are referenced by
//     it until the client has them, whatever becomes of the file; no
//     offset of a segment is written twice, and a freed region's pages
//     leave the file rather than being reused in it.
//   - The Go collector: an object's range is released only once its File
//     is unreachable (runtime.AddCleanup). Whoever holds the mapped bytes
//     holds the File (tier.Entry.Hold, the engine's held Result until
//     Release), so no region goes while its bytes are read.
//
// Ranges wait for a collection after their last use: an Arena bounds the
// bytes of regions not yet freed (Limit) and refuses an object past it
// (the caller keeps that one in Go's heap, copied as before), asking the
// collector to run. A region is kept by its last object in use, so what
// regions hold beside their objects is bounded too (the slack): past it
// an object gets a file of its own (as without Pack), closed when the
// object is released, until regions are freed. Where the kernel will not
// make huge pages (before Linux 6.1, shmem THP set to "deny", memory too
// fragmented) regions stay in 4 KiB pages: slower sends, the same bytes.
package ramfile

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// RegionSize is the unit a segment's memory is asked for, backed and
// freed in: one huge page (the PMD size of x86-64 and arm64 with 4 KiB
// pages).
const RegionSize = 2 << 20

const pageSize = 4096

// CollapseRate is how many regions a second the arena asks the kernel to
// make huge pages, past a burst of a segment's worth (collapser).
const CollapseRate = 4

// SegmentSize is the size of a segment, a memory file holding many
// objects (an object larger than it gets a segment of its own size).
const SegmentSize = 32 * RegionSize

// An Arena packs the objects of a RAM tier into memory files and bounds
// their bytes and their number.
type Arena struct {
	live     int64  // bytes the objects in use hold at most: past them, regions wait for a collection
	limit    int64  // bytes of regions not yet freed, at most
	maxFiles int64  // segments open at most (descriptors)
	min      int    // the smallest object put in a file
	pack     bool   // Options.Pack
	segSize  int64  // the size of a segment
	dir      int    // the directory files of an object's own are made in (Options.Tmpfs); -1: memory files
	backing  string // what dir is, for Stats

	mu      sync.Mutex
	cur     *segment // the segment objects are appended to; nil before the first
	segs    int64    // segments open
	stopped bool     // Close: Put refuses

	collapse chan collapseReq // regions for the collapser to make huge

	bytes    atomic.Int64  // bytes of regions not yet freed
	regions  atomic.Int64  // regions not yet freed
	owns     atomic.Int64  // files of one object's own
	moved    atomic.Uint64 // objects moved (Move)
	dup      atomic.Int64  // bytes of objects moved whose old copy is not yet released
	objBytes atomic.Int64  // bytes of the objects whose range is not released (made less closed)
	made     atomic.Uint64 // objects put
	refused  atomic.Uint64 // objects refused: over a limit
	failed   atomic.Uint64 // objects refused: the system refused a file or a write
	closed   atomic.Uint64 // objects released after their last use
	freed    atomic.Uint64 // regions freed
	huge     atomic.Uint64 // regions the kernel made one huge page
	flat     atomic.Uint64 // regions it did not (left in 4 KiB pages)
	flatErr  atomic.Uint64 // the errno of the last collapse the kernel refused
	gcs      atomic.Uint64 // collections asked for
	gcNext   atomic.Int64  // when the next may be asked (UnixNano)
	gcActive atomic.Bool
}

// MinObject is the default smallest object kept in a file: below it a
// copy costs less than the syscalls of a send from a file.
const MinObject = 32 << 10

// Options size an Arena.
type Options struct {
	// Live is the most bytes the objects in use hold at once (RAM and
	// the ring): regions beyond them hold objects waiting for a
	// collection (or the few objects still used in a region otherwise
	// unused), which the arena then asks for.
	Live int64
	// Limit bounds the bytes of the regions not yet freed; past it an
	// object is refused (its caller keeps it in Go's heap). 0: Live and
	// Slack(Live).
	Limit int64
	// MaxFiles bounds the segments open, each a descriptor. 0: half the
	// process's descriptor limit (RLIMIT_NOFILE), so that connections
	// and dials always have the rest.
	MaxFiles int64
	// MinObject is the smallest object put in a file. 0: MinObject.
	MinObject int
	// Pack packs objects into segments of huge-page regions; without it
	// every object gets a file of its own (of 4 KiB pages, sealed).
	Pack bool
	// SegmentSize is the size of a segment, rounded up to whole regions.
	// 0: SegmentSize, or the limit if less.
	SegmentSize int64
	// Tmpfs is where files of an object's own are made (tmpfs.go):
	// TmpfsAuto ("" too) a tmpfs of the process's own with large folios
	// where it may mount one, else memory files; TmpfsOff memory files;
	// otherwise a directory on a tmpfs (best mounted with
	// huge=within_size), New failing if it is not one.
	Tmpfs string
}

// Slack is how far an arena's regions may go by default past the live
// bytes of the objects in use: a thirty-second of live for regions that
// a few objects still used keep from being freed (a region is freed
// whole) and 8 MiB for the region being filled and objects waiting for a
// collection; past it objects stay in Go's heap until regions are freed.
// Memory files are memory outside Go's heap, so a memory budget counts
// this too (app.MemoryParts.RAMFiles): without it, objects evicted while
// in-flight answers still held them took a node to its cgroup's limit.
func Slack(live int64) int64 { return live/32 + 8<<20 }

// New returns an arena sized by o. It fails where the system has no
// memory files, or where the limit is below one region.
func New(o Options) (*Arena, error) {
	if o.Live <= 0 {
		return nil, fmt.Errorf("ramfile: live bytes %d", o.Live)
	}
	if o.Limit <= 0 {
		o.Limit = o.Live + Slack(o.Live)
	}
	if o.Pack {
		if err := packable(o.Limit); err != nil {
			return nil, err
		}
	}
	if o.MaxFiles <= 0 {
		var rl unix.Rlimit
		o.MaxFiles = 1 << 20
		if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err == nil && rl.Cur < 1<<40 {
			o.MaxFiles = max(int64(rl.Cur)/2, 1)
		}
	}
	if o.MinObject <= 0 {
		o.MinObject = MinObject
	}
	a := &Arena{
		live: min(o.Live, o.Limit), limit: o.Limit, maxFiles: o.MaxFiles, min: o.MinObject, pack: o.Pack,
		segSize: min(SegmentSize, (o.Limit+RegionSize-1)/RegionSize*RegionSize),
	}
	if o.SegmentSize > 0 {
		a.segSize = (o.SegmentSize + RegionSize - 1) / RegionSize * RegionSize
	}
	// The system's support, checked once.
	s, err := newSegment(RegionSize)
	if err != nil {
		return nil, fmt.Errorf("ramfile: memory files unavailable here (memfd_create, sealing or mmap refused): %w", err)
	}
	s.unmap()
	// A tmpfs of its own is bounded too, by the kernel: its limit and room
	// for files released but not yet closed.
	if a.dir, a.backing, err = openTmpfs(o.Tmpfs, o.Limit+o.Limit/4+8<<20); err != nil {
		return nil, err
	}
	if o.Pack {
		a.collapse = make(chan collapseReq, 64)
		go a.collapser()
	}
	return a, nil
}

// packable reports why an arena of limit bytes cannot pack objects into
// regions, if it cannot. A region must be whole huge pages and whole
// pages: punching it out then never splits a page the kernel would zero
// in place (a page a send may still refer to). With pages of another size
// than 4 KiB, or huge pages of another size than 2 MiB (arm64 with 16 or
// 64 KiB pages), the arena is not used: objects stay in Go's heap.
func packable(limit int64) error {
	if limit < RegionSize {
		return fmt.Errorf("ramfile: a limit of %d bytes is below one region (%d)", limit, RegionSize)
	}
	if ps := os.Getpagesize(); ps != pageSize {
		return fmt.Errorf("ramfile: pages of %d bytes, not %d", ps, pageSize)
	}
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err != nil || n != RegionSize {
			return fmt.Errorf("ramfile: huge pages of %q bytes, not %d", strings.TrimSpace(string(b)), RegionSize)
		}
	}
	return nil
}

// A segment is one memory file holding objects one after another, mapped
// read only at an address aligned to RegionSize (so that the kernel can
// map a region's huge page whole).
type segment struct {
	fd     int
	mapped []byte
	size   int64

	// Under the arena's mutex:
	cursor int64   // where the next object goes: below it, every byte is written
	opened int     // regions [0, opened) were opened (counted in bytes); those not freed are in use
	refs   []int32 // per region: objects overlapping it, and 1 for the cursor's region while it is there
	freed  []bool  // per region: punched out
	used   []int64 // per region: bytes of the objects in use that lie in it
	// sparse, per region: the cursor has left it and its objects in use
	// hold less than three quarters of it (File.Sparse). Read without a.mu.
	sparse []atomic.Bool
	live   int  // regions opened and not freed
	closed bool // the cursor left the segment

	own int64 // a file of one object's own (putOwn): its size in whole pages; 0 for a segment of regions

	mapMu    sync.RWMutex // held by the collapser while it works on the mapping
	unmapped bool         // under mapMu
}

func newSegment(size int64) (*segment, error) {
	fd, err := unix.MemfdCreate("strata-ram", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*segment, error) {
		unix.Close(fd) //nolint:errcheck
		return nil, err
	}
	if err := unix.Ftruncate(fd, size); err != nil {
		return fail(err)
	}
	// Its size never changes: a send's offset always lies in it. It
	// cannot be sealed against writes, which would forbid freeing a
	// region (fallocate(2) refuses to punch a write-sealed file): the
	// arena writes only at the cursor.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		return fail(err)
	}
	// An address aligned to a region: reserve a region more than the
	// segment, map the file over its aligned part, give back the rest.
	resv, err := unix.MmapPtr(-1, 0, nil, uintptr(size+RegionSize), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return fail(err)
	}
	lead := uintptr((RegionSize - uintptr(resv)%RegionSize) % RegionSize)
	aligned := unsafe.Add(resv, lead)
	p, err := unix.MmapPtr(fd, 0, aligned, uintptr(size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_FIXED)
	if err != nil {
		unix.MunmapPtr(resv, uintptr(size+RegionSize)) //nolint:errcheck
		return fail(err)
	}
	if lead > 0 {
		unix.MunmapPtr(resv, lead) //nolint:errcheck
	}
	if tail := RegionSize - lead; tail > 0 {
		unix.MunmapPtr(unsafe.Add(aligned, size), tail) //nolint:errcheck
	}
	nreg := int((size + RegionSize - 1) / RegionSize)
	return &segment{fd: fd, mapped: unsafe.Slice((*byte)(p), size), size: size, refs: make([]int32, nreg), freed: make([]bool, nreg),
		used: make([]int64, nreg), sparse: make([]atomic.Bool, nreg)}, nil
}

// unmap closes the segment: its mapping and its file (pages a send refers
// to stay the socket's).
func (s *segment) unmap() {
	s.mapMu.Lock()
	defer s.mapMu.Unlock()
	if s.unmapped {
		return
	}
	s.unmapped = true
	unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(s.mapped)), uintptr(len(s.mapped))) //nolint:errcheck
	unix.Close(s.fd)                                                                   //nolint:errcheck
}

// A File is one object's range of a segment, mapped read only. Its bytes
// never change; the range is released once the File is unreachable (or
// Close).
type File struct {
	res  *resource    // its range, released by the cleanup
	memo atomic.Value // Memo
}

// Memo returns the value kept with the file's bytes (SetMemo), nil if
// none.
func (f *File) Memo() any { return f.memo.Load() }

// SetMemo keeps v with the file's bytes, for as long as the file, unless
// a value is kept already: it returns the value kept. v is what its user
// derived from the bytes, which never change (the edge's decoded record
// of them); all values of one File must be of one type.
func (f *File) SetMemo(v any) any {
	if f.memo.CompareAndSwap(nil, v) {
		return v
	}
	return f.memo.Load()
}

// resource is what a File's cleanup releases: not the File itself.
type resource struct {
	a      *Arena
	seg    *segment
	off    int64 // in the segment
	mapped []byte
	done   atomic.Bool
	moving atomic.Bool // Sparse said so once: until Move
	moved  atomic.Bool // Move copied it: its bytes are counted in the arena's dup until released
}

func (r *resource) release() {
	if !r.done.CompareAndSwap(false, true) {
		return
	}
	a, n := r.a, int64(len(r.mapped))
	var done *segment
	a.mu.Lock()
	if r.seg.own > 0 {
		a.bytes.Add(-r.seg.own)
		a.owns.Add(-1)
		a.segs--
		done = r.seg
	}
	for i := r.off / RegionSize; r.seg.own == 0 && i <= (r.off+n-1)/RegionSize; i++ {
		r.seg.use(int(i), -overlap(r.off, n, i))
		if a.unref(r.seg, int(i)) {
			done = r.seg
		}
	}
	a.mu.Unlock()
	if done != nil {
		done.unmap()
	}
	a.objBytes.Add(-n)
	a.closed.Add(1)
	if r.moved.Load() {
		a.dup.Add(-n)
	}
}

// overlap is how many of the n bytes at off lie in region i.
func overlap(off, n, i int64) int64 {
	lo, hi := max(off, i*RegionSize), min(off+n, (i+1)*RegionSize)
	return max(hi-lo, 0)
}

// use adds d bytes of objects in use to region i, and marks it sparse or
// not: sparse once the cursor has left it and they are less than three
// quarters of it (moving them out frees at least a quarter). Under a.mu.
func (s *segment) use(i int, d int64) {
	s.used[i] += d
	left := s.closed || i < s.opened-1
	s.sparse[i].Store(left && s.used[i] > 0 && s.used[i] < RegionSize*3/4)
}

// unref drops a reference to region i of s, freeing it at the last: its
// pages leave the file whole (a region is whole huge pages, so none is
// split and no byte a send refers to is zeroed in place), and its
// mapping is made inaccessible, so that a read of a released object's
// bytes faults rather than reads zeros and puts pages back in the file.
// It reports whether s is done (every region freed, the cursor gone):
// the caller unmaps it once a.mu is released. Under a.mu.
func (a *Arena) unref(s *segment, i int) (done bool) {
	s.refs[i]--
	if s.refs[i] > 0 {
		return false
	}
	if s.refs[i] < 0 {
		panic(fmt.Sprintf("ramfile: region %d of a segment released twice", i))
	}
	a.punch(s, i)
	a.bytes.Add(-RegionSize)
	a.regions.Add(-1)
	a.freed.Add(1)
	s.live--
	if s.live == 0 && s.closed {
		a.segs--
		return true
	}
	return false
}

// punch frees region i of s: out of the file, its mapping inaccessible.
// A punch the kernel refuses leaves the region's pages in the file until
// it closes. Under a.mu.
func (a *Arena) punch(s *segment, i int) {
	s.freed[i] = true
	off := int64(i) * RegionSize
	n := min(RegionSize, s.size-off)
	unix.Mprotect(s.mapped[off:off+n], unix.PROT_NONE)                               //nolint:errcheck // a stray read then reads zeros: no worse than before
	unix.Fallocate(s.fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n) //nolint:errcheck // see above
}

// Put copies data into the arena's current segment and returns its
// File, or false when the object is smaller than the arena's minimum,
// the arena's regions or segments are at their limit (a collection is
// then asked for, at most every 100 ms) or the system refuses a file or
// a write: the caller keeps the bytes in Go's heap.
func (a *Arena) Put(data []byte) (*File, bool) {
	if len(data) < a.min {
		return nil, false
	}
	if !a.pack {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.stopped {
			return nil, false
		}
		return a.putOwn(data)
	}
	return a.put(data, true)
}

// Move returns a File of f's bytes packed at the arena's cursor, where
// f's lie in a region that holds little else, or in a file of their own
// (f.Sparse): the caller replaces f by it wherever it keeps f, so that
// f's region can be freed. False if they cannot be packed now (regions
// at the slack or the limit): f stays as it is.
func (a *Arena) Move(f *File) (*File, bool) {
	nf, ok := a.put(f.Bytes(), false)
	runtime.KeepAlive(f)
	if ok {
		a.moved.Add(1)
		f.res.moved.Store(true)
		a.dup.Add(f.Len())
	} else {
		f.res.moving.Store(false) // it may be asked again
	}
	return nf, ok
}

// put packs data at the cursor, or if regions hold too much beside
// their objects, puts it in a file of its own (own) or refuses it; a
// move (not own) is refused only past the limit.
func (a *Arena) put(data []byte, own bool) (*File, bool) {
	n := int64(len(data))
	var left *segment // a segment the cursor left done, unmapped once a.mu is released
	defer func() {
		if left != nil {
			left.unmap()
		}
	}()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return nil, false
	}
	s := a.cur
	fresh := s == nil || s.cursor+n > s.size
	opening := (n + RegionSize - 1) / RegionSize // in a new segment
	if !fresh {
		opening = (s.cursor+n-1)/RegionSize + 1 - int64(s.opened)
	}
	if opening > 0 && !a.room(opening, n, own) || fresh && a.segs >= a.maxFiles {
		// Regions would hold too much beside their objects (objects
		// left in another order than they came): this one gets a file
		// of its own, until regions are freed.
		if own {
			return a.putOwn(data)
		}
		return nil, false
	}
	if fresh {
		// A new segment: the regions left in this one are never opened
		// (never backed by memory).
		size := max(a.segSize, opening*RegionSize)
		ns, err := newSegment(size)
		if err != nil {
			a.failed.Add(1)
			return nil, false
		}
		a.segs++
		if s != nil && a.leave(s) {
			left = s
		}
		s, a.cur = ns, ns
	}
	start, end := s.cursor, s.cursor+n
	first, last := int(start/RegionSize), int((end-1)/RegionSize)
	for off := 0; off < len(data); {
		k, err := unix.Pwrite(s.fd, data[off:], start+int64(off))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil || k <= 0:
			// The bytes written are past the cursor, which stays: the
			// next object writes over them before anyone has them.
			// Regions not opened are emptied again (they are not
			// counted).
			for i := s.opened; i <= last; i++ {
				off := int64(i) * RegionSize
				unix.Fallocate(s.fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, min(RegionSize, s.size-off)) //nolint:errcheck
			}
			a.failed.Add(1)
			return nil, false
		}
		off += k
	}
	// The object's regions are referenced before the cursor's hold moves
	// on: a region the cursor leaves is freed only once no object in it
	// is used, this one included.
	prev := s.opened - 1
	if opening > 0 {
		for i := s.opened; i <= last; i++ {
			s.live++
			a.bytes.Add(RegionSize)
			a.regions.Add(1)
			select {
			case a.collapse <- collapseReq{s, i}:
			default:
				a.flat.Add(1)
			}
		}
		s.opened = last + 1
		s.refs[last]++ // the cursor's hold
	}
	for i := first; i <= last; i++ {
		s.refs[i]++
		s.use(i, overlap(start, n, int64(i)))
	}
	if opening > 0 && prev >= 0 {
		s.use(prev, 0)   // the cursor left it
		a.unref(s, prev) // not s's last region: s is not done
	}
	s.cursor = end
	return a.publish(s, start, n), true
}

// publish returns the File of the n bytes at start in s, counted. Under
// a.mu.
func (a *Arena) publish(s *segment, start, n int64) *File {
	res := &resource{a: a, seg: s, off: start, mapped: s.mapped[start : start+n : start+n]}
	f := &File{res: res}
	runtime.AddCleanup(f, (*resource).release, res)
	a.made.Add(1)
	a.objBytes.Add(n)
	// Past what the objects in use can hold, some regions wait for a
	// collection: the collector is asked to free them before Put has to
	// refuse an object.
	if a.bytes.Load() > a.live {
		a.collect()
	}
	return f
}

// putOwn puts data in a file of its own, in the arena's tmpfs (of large
// folios, reopened read only) or a memory file (of 4 KiB pages, sealed
// against any change), closed when its object is released (decision
// 0036's files, 0042's tmpfs): nothing beside it but its last page's
// rounding. Under a.mu.
func (a *Arena) putOwn(data []byte) (*File, bool) {
	n := int64(len(data))
	size := (n + pageSize - 1) / pageSize * pageSize
	if a.segs >= a.maxFiles || a.bytes.Load()+size > a.limit {
		return a.refuse()
	}
	fd, err := a.ownFile(data)
	if err != nil {
		a.failed.Add(1)
		return nil, false
	}
	mapped, err := unix.Mmap(fd, 0, len(data), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd) //nolint:errcheck
		a.failed.Add(1)
		return nil, false
	}
	s := &segment{fd: fd, mapped: mapped, size: n, own: size}
	a.segs++
	a.owns.Add(1)
	a.bytes.Add(size)
	return a.publish(s, 0, n), true
}

// ownFile returns a descriptor of a new file holding data that nothing
// can change.
func (a *Arena) ownFile(data []byte) (int, error) {
	if a.dir >= 0 {
		return tmpfsFile(a.dir, data)
	}
	fd, err := unix.MemfdCreate("strata-ram", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1, err
	}
	err = unix.Ftruncate(fd, int64(len(data)))
	if err == nil {
		err = pwriteAll(fd, data, 0)
	}
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL)
	}
	if err == nil {
		return fd, nil
	}
	unix.Close(fd) //nolint:errcheck
	return -1, err
}

// leave closes s for appending: the cursor's hold on its region goes. It
// reports whether s is done (to unmap once a.mu is released). Under a.mu.
func (a *Arena) leave(s *segment) (done bool) {
	s.closed = true
	if s.opened > 0 {
		s.use(s.opened-1, 0)
		return a.unref(s, s.opened-1)
	}
	a.segs--
	return true
}

// room reports whether opening regions for an object of n bytes stays
// within the limit, and within the slack for the bytes regions hold but
// no object does (the region being filled, regions a few objects keep):
// past the slack, objects go to Go's heap until regions are freed, so
// that the memory files never hold more than the objects they keep and
// the slack, whatever the order objects leave in.
// A move (not waste) is held to the limit only: it is what brings the
// waste down, once the regions it leaves are freed.
func (a *Arena) room(opening, n int64, waste bool) bool {
	bytes := a.bytes.Load() + opening*RegionSize
	return bytes <= a.limit && (!waste || bytes-(a.objBytes.Load()+n) <= a.limit-a.live)
}

// Close stops the arena: Put refuses from now on, the current segment's
// cursor goes (its regions are freed as their objects are) and the
// collapser stops.
func (a *Arena) Close() {
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		return
	}
	a.stopped = true
	s := a.cur
	a.cur = nil
	done := s != nil && a.leave(s)
	if a.collapse != nil {
		close(a.collapse)
	}
	if a.dir >= 0 {
		unix.Close(a.dir) //nolint:errcheck // the files open keep their tmpfs
		a.dir = -1
	}
	a.mu.Unlock()
	if done {
		s.unmap()
	}
}

func (a *Arena) refuse() (*File, bool) {
	a.refused.Add(1)
	a.collect()
	return nil, false
}

type collapseReq struct {
	s *segment
	i int
}

// collapser asks the kernel to back each region opened with one huge
// page (MADV_COLLAPSE: whatever the system's THP setting but "deny"), in
// the background so that a Put never waits for the allocation or the
// compaction it may take. The kernel copies what the region holds into
// the huge page and leaves pages a send refers to the socket (or gives up
// on the region, which then stays in 4 KiB pages): either way a byte read
// from the file is the byte written.
//
// At most CollapseRate regions a second, after a burst of a segment's
// worth: each collapse allocates a huge page (reclaim and compaction
// where memory is short, the mapping's lock held meanwhile), so under
// churn (regions opened and freed as fast as titles come and go) most
// regions stay in 4 KiB pages, as memory files of their own were, while
// the long-lived regions a steady load reads are huge.
func (a *Arena) collapser() {
	tokens, last := float64(SegmentSize/RegionSize), time.Now()
	for r := range a.collapse {
		now := time.Now()
		tokens = min(float64(SegmentSize/RegionSize), tokens+now.Sub(last).Seconds()*CollapseRate)
		last = now
		if tokens < 1 {
			a.flat.Add(1)
			continue
		}
		tokens--
		r.s.mapMu.RLock()
		err := error(unix.EINVAL)
		if !r.s.unmapped {
			off := int64(r.i) * RegionSize
			if off+RegionSize <= r.s.size {
				err = unix.Madvise(r.s.mapped[off:off+RegionSize], unix.MADV_COLLAPSE)
			}
		}
		r.s.mapMu.RUnlock()
		if err == nil {
			a.huge.Add(1)
		} else {
			a.flat.Add(1)
			if errno, ok := err.(unix.Errno); ok {
				a.flatErr.Store(uint64(errno))
			}
		}
		// A region freed while the kernel collapsed it may have been
		// filled again by the collapse: out again.
		a.mu.Lock()
		if r.s.freed[r.i] {
			r.s.mapMu.RLock()
			if !r.s.unmapped {
				a.punch(r.s, r.i)
			}
			r.s.mapMu.RUnlock()
		}
		a.mu.Unlock()
	}
}

// collect asks the collector to run, in the background, unless one it
// asked for runs or ran within the last 100 ms: the ranges of objects no
// longer used are released once it has.
func (a *Arena) collect() {
	now := time.Now().UnixNano()
	if now < a.gcNext.Load() || !a.gcActive.CompareAndSwap(false, true) {
		return
	}
	a.gcNext.Store(now + int64(100*time.Millisecond))
	a.gcs.Add(1)
	go func() {
		defer a.gcActive.Store(false)
		runtime.GC()
	}()
}

// Sparse reports, once until f is moved (Move), whether f's bytes should
// move: they lie in a region that holds little else (the cursor gone, its
// objects in use less than three quarters of it) while regions hold more than
// half the slack beside their objects, or in a file of their own while
// they hold less. It is cheap enough to ask on every hit.
func (f *File) Sparse() bool {
	r := f.res
	a, s := r.a, r.seg
	if !a.pack {
		return false
	}
	pressed := a.bytes.Load()-a.objBytes.Load() > (a.limit-a.live)/2
	move := false
	if s.own > 0 {
		move = !pressed
	} else if pressed {
		for i := r.off / RegionSize; i <= (r.off+int64(len(r.mapped))-1)/RegionSize; i++ {
			if s.sparse[i].Load() {
				move = true
				break
			}
		}
	}
	return move && r.moving.CompareAndSwap(false, true)
}

// Waste is the bytes the arena's regions and files hold beyond their
// objects (the region being filled, regions a few objects keep, pages'
// rounding) and the old copies of objects moved, not yet released.
func (a *Arena) Waste() int64 { return a.bytes.Load() - a.objBytes.Load() + a.dup.Load() }

// Slack is the bytes the arena may hold beyond the objects in use
// (Options: Limit less Live).
func (a *Arena) Slack() int64 { return a.limit - a.live }

// Unmoved undoes a Sparse that said true, for a caller that will not
// Move f after all: Sparse may say so again.
func (f *File) Unmoved() { f.res.moving.Store(false) }

// Bytes returns the file's bytes, mapped read only: valid while f is
// reachable (hold f, or what holds it, for as long as they are read).
func (f *File) Bytes() []byte { return f.res.mapped }

// Len is the object's length.
func (f *File) Len() int64 { return int64(len(f.res.mapped)) }

// Full reports whether an object of n bytes, one the arena would keep in
// a file (n at least its minimum), finds the files at their limit: the
// bytes not yet freed (objects RAM keeps, and those answers in flight
// still send after RAM let them go) leave no room for it. Put then
// refuses it for room, not for a failure of the system's.
func (a *Arena) Full(n int) bool {
	return n >= a.min && a.bytes.Load()+int64(n) > a.limit
}

// Close releases the object's range at once, before the collector would.
// Nothing of it may be used after, by anyone: for a File that was never
// shared.
func (f *File) Close() { f.res.release() }

// Stats are an arena's counters.
type Stats struct {
	// LimitBytes bounds Bytes, the bytes of the regions not yet freed
	// (Regions of RegionSize), held by RAM's objects or waiting for the
	// collector after their last use (past LiveBytes, what the objects
	// in use hold at most, the arena asks for a collection); Files is
	// how many objects they hold and FileBytes their bytes (Bytes less
	// FileBytes is what regions hold unused: the region being filled,
	// objects waiting, regions kept by a few objects). Segments is how
	// many memory files (descriptors), within MaxFiles, OwnFiles of
	// them an object's own (its bytes counted in Bytes, page-rounded):
	// those put while regions held too much beside their objects.
	LimitBytes int64 `json:"limit_bytes"`
	LiveBytes  int64 `json:"live_bytes"`
	Bytes      int64 `json:"bytes"`
	Regions    int64 `json:"regions"`
	Files      int64 `json:"files"`
	FileBytes  int64 `json:"file_bytes"`
	Segments   int64 `json:"segments"`
	OwnFiles   int64 `json:"own_files"`
	// Moved counts the objects moved out of a region that held little
	// else, or out of a file of their own, into the region being filled.
	Moved    uint64 `json:"moved"`
	MaxFiles int64  `json:"max_files"`
	// Made counts the objects put, Closed those released after their
	// last use, Freed the regions freed; Refused the objects kept in
	// Go's heap because the regions or segments were at a limit, Failed
	// those the system refused a file or a write.
	Made    uint64 `json:"made"`
	Closed  uint64 `json:"closed"`
	Freed   uint64 `json:"freed_regions"`
	Refused uint64 `json:"refused"`
	Failed  uint64 `json:"failed"`
	// HugeRegions counts the regions the kernel backed with one huge
	// page, FlatRegions those it did not (4 KiB pages).
	HugeRegions uint64 `json:"huge_regions"`
	FlatRegions uint64 `json:"flat_regions"`
	// Collections counts the collections the arena asked for.
	Collections uint64 `json:"collections"`
	// MinObject is the smallest object put in a file.
	MinObject int `json:"min_object_bytes"`
	// Backing says where files of an object's own are: a tmpfs (of the
	// process's own, or the operator's directory) or memory files, and
	// why not a tmpfs where it was asked for.
	Backing string `json:"backing"`
}

// Stats returns the arena's counters.
func (a *Arena) Stats() Stats {
	a.mu.Lock()
	segs := a.segs
	a.mu.Unlock()
	closed := a.closed.Load() // before made: made - closed is never negative
	made := a.made.Load()
	return Stats{
		LimitBytes: a.limit, LiveBytes: a.live, Bytes: a.bytes.Load(), Regions: a.regions.Load(),
		Files: int64(made - closed), FileBytes: a.objBytes.Load(), Segments: segs, OwnFiles: a.owns.Load(), Moved: a.moved.Load(), MaxFiles: a.maxFiles,
		Made: made, Closed: closed, Freed: a.freed.Load(), Refused: a.refused.Load(), Failed: a.failed.Load(),
		HugeRegions: a.huge.Load(), FlatRegions: a.flat.Load(), Collections: a.gcs.Load(), MinObject: a.min, Backing: a.backing,
	}
}

// A Body is a range of a File to send (front.FileBody): the Front sends
// it with sendfile(2) from the segment, a buffered file (Buffered), whose
// pages the socket refers to without a copy.
type Body struct {
	f      *File
	off, n int64 // in the object
}

// Range returns the body of n bytes at off in f. off and n must lie
// within f.
func (f *File) Range(off, n int64) *Body {
	if off < 0 || n < 0 || off+n > f.Len() {
		panic(fmt.Sprintf("ramfile: range %d+%d of a %d byte file", off, n, f.Len()))
	}
	return &Body{f: f, off: off, n: n}
}

// Len is the body's length.
func (b *Body) Len() int64 { return b.n }

// Parts is 1: the body is one range of the segment.
func (b *Body) Parts() int { return 1 }

// Part returns the body's range of the segment's file.
func (b *Body) Part(int) (off, n int64, mem []byte, err error) {
	return b.f.res.off + b.off, b.n, nil, nil
}

// WithFD runs fn with the segment's descriptor, the object held (so its
// segment open) meanwhile.
func (b *Body) WithFD(fn func(fd int) error) error {
	err := fn(b.f.res.seg.fd)
	runtime.KeepAlive(b.f)
	return err
}

// Yield is false: nothing ever waits for a memory file's bytes.
func (b *Body) Yield() bool { return false }

// Rest returns the body's bytes from off on, from the mapping: valid
// while the body is held.
func (b *Body) Rest(off int64) ([]byte, error) {
	if off < 0 || off > b.n {
		return nil, fmt.Errorf("ramfile: rest from %d of %d bytes", off, b.n)
	}
	return b.f.res.mapped[b.off+off : b.off+b.n], nil
}

// Buffered is true: the file is not opened with O_DIRECT; the Front may
// send any range of it with sendfile(2), aligned or not.
func (b *Body) Buffered() bool { return true }

// FD is the segment's descriptor, open while b is referenced.
func (b *Body) FD() int { return b.f.res.seg.fd }
