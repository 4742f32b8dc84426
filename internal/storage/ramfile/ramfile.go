// Package ramfile keeps the RAM tier's larger objects in memory files
// (memfd_create(2)), so that a hit can go to the client's socket with
// sendfile(2), the kernel referring to the file's pages instead of
// copying the bytes into the socket (decision 0036): on an edge's 100 KiB
// RAM hit the copy was a quarter of the node's CPU.
//
// Each object is a memory file of its own, written once, sealed against
// any change (F_SEAL_WRITE, F_SEAL_SHRINK, F_SEAL_GROW) and mapped read
// only, so its bytes can be read as a slice by whatever does not send
// them from the file (the flash writer, a range request, a copy). Two
// things keep a client from ever receiving other bytes than the object's:
//
//   - The kernel: pages a send has handed to the socket are referenced by
//     it until the client has them, whatever becomes of the file; a
//     sealed file's pages are never rewritten.
//   - The Go collector: the file is closed and unmapped only once its
//     File is unreachable (runtime.AddCleanup). Whoever holds the mapped
//     bytes holds the File (tier.Entry.Hold, the engine's held Result
//     until Release), so the mapping never goes while its bytes are read.
//
// Files wait for a collection after their last use: an Arena bounds the
// bytes of files not yet closed (Limit) and refuses an object past it
// (the caller keeps that one in Go's heap, copied as before), asking the
// collector to run.
package ramfile

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// An Arena makes the memory files of a RAM tier's objects and bounds
// their bytes and their number.
type Arena struct {
	live     int64 // bytes the objects in use hold at most: past them, files wait for a collection
	limit    int64 // bytes of files not yet closed, at most
	maxFiles int64 // files open at most (descriptors)
	min      int   // the smallest object put in a file

	bytes    atomic.Int64  // bytes of files open (page-rounded)
	files    atomic.Int64  // files open
	made     atomic.Uint64 // files made
	refused  atomic.Uint64 // objects refused: over the limit
	failed   atomic.Uint64 // objects refused: the system refused a file
	closed   atomic.Uint64 // files closed after their last use
	gcs      atomic.Uint64 // collections asked for
	gcNext   atomic.Int64  // when the next may be asked (UnixNano)
	gcActive atomic.Bool
}

// MinObject is the default smallest object kept in a file: below it a
// copy costs less than a file (a descriptor, a mapping, a page's
// rounding) and the syscalls of a send from it.
const MinObject = 32 << 10

// Options size an Arena.
type Options struct {
	// Live is the most bytes the objects in use hold at once (RAM and
	// the ring): bytes of files beyond it are files waiting for a
	// collection, which the arena then asks for.
	Live int64
	// Limit bounds the bytes of the files not yet closed; past it an
	// object is refused (its caller keeps it in Go's heap). 0: Live and
	// Slack(Live).
	Limit int64
	// MaxFiles bounds the files open, each a descriptor. 0: half the
	// process's descriptor limit (RLIMIT_NOFILE), so that connections
	// and dials always have the rest.
	MaxFiles int64
	// MinObject is the smallest object put in a file. 0: MinObject.
	MinObject int
}

// Slack is how far an arena's files may go by default past the live
// bytes of the objects in use: their rounding up to whole pages (a
// thirty-second of live: the 2 KiB an object wastes on average is 2% of
// a 100 KiB segment; objects that waste more meet the limit sooner and
// stay in Go's heap) and 8 MiB of files waiting for a collection. Files
// are memory outside Go's heap, so a memory budget counts this too
// (app.MemoryParts.RAMFiles): without it, objects evicted while
// in-flight answers still held them took a node to its cgroup's limit.
func Slack(live int64) int64 { return live/32 + 8<<20 }

// New returns an arena sized by o. It fails where the system has no
// memory files.
func New(o Options) (*Arena, error) {
	if o.Live <= 0 {
		return nil, fmt.Errorf("ramfile: live bytes %d", o.Live)
	}
	if o.Limit <= 0 {
		o.Limit = o.Live + Slack(o.Live)
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
	a := &Arena{live: min(o.Live, o.Limit), limit: o.Limit, maxFiles: o.MaxFiles, min: o.MinObject}
	f, ok := a.Put(make([]byte, a.min)) // the system's support, checked once
	if !ok {
		return nil, errors.New("ramfile: memory files unavailable here (memfd_create, sealing or mmap refused)")
	}
	f.Close()
	return a, nil
}

// A File is one object's memory file, mapped read only. Its bytes never
// change; the file is closed once the File is unreachable (or Close).
type File struct {
	res  *resource    // its descriptor and mapping, released by the cleanup
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
	fd     int
	mapped []byte
	size   int64
	done   atomic.Bool
}

func (r *resource) release() {
	if !r.done.CompareAndSwap(false, true) {
		return
	}
	unix.Munmap(r.mapped) //nolint:errcheck // nothing to do about it
	unix.Close(r.fd)      //nolint:errcheck
	r.a.bytes.Add(-r.size)
	r.a.files.Add(-1)
	r.a.closed.Add(1)
}

// Put copies data into a new memory file and returns it, or false when
// the object is smaller than the arena's minimum, the arena's files are
// at its limit (a collection is then asked for, at most every 100 ms) or
// the system refuses a file: the caller keeps the bytes in Go's heap.
func (a *Arena) Put(data []byte) (*File, bool) {
	n := len(data)
	if n < a.min {
		return nil, false
	}
	size := int64(n+pageSize-1) / pageSize * pageSize
	bytes, files := a.bytes.Add(size), a.files.Add(1)
	if bytes > a.limit || files > a.maxFiles {
		a.bytes.Add(-size)
		a.files.Add(-1)
		a.refused.Add(1)
		a.collect()
		return nil, false
	}
	f, err := a.make(data, size)
	if err != nil {
		a.bytes.Add(-size)
		a.files.Add(-1)
		a.failed.Add(1)
		return nil, false
	}
	a.made.Add(1)
	// Past what the objects in use can hold, some files wait for a
	// collection: the collector is asked to close them before Put has
	// to refuse one.
	if a.bytes.Load() > a.live {
		a.collect()
	}
	return f, true
}

const pageSize = 4096

// make writes data into a sealed memory file of size bytes (data's length
// rounded up to pages) and maps it.
func (a *Arena) make(data []byte, size int64) (*File, error) {
	fd, err := unix.MemfdCreate("strata-ram", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*File, error) {
		unix.Close(fd) //nolint:errcheck
		return nil, err
	}
	if err := unix.Ftruncate(fd, int64(len(data))); err != nil {
		return fail(err)
	}
	for off := 0; off < len(data); {
		k, err := unix.Pwrite(fd, data[off:], int64(off))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return fail(err)
		case k <= 0:
			return fail(errors.New("ramfile: short write"))
		}
		off += k
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL); err != nil {
		return fail(err)
	}
	mapped, err := unix.Mmap(fd, 0, len(data), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fail(err)
	}
	res := &resource{a: a, fd: fd, mapped: mapped, size: size}
	f := &File{res: res}
	runtime.AddCleanup(f, (*resource).release, res)
	return f, nil
}

// collect asks the collector to run, in the background, unless one it
// asked for runs or ran within the last 100 ms: the files of objects no
// longer used are closed once it has.
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

// Bytes returns the file's bytes, mapped read only: valid while f is
// reachable (hold f, or what holds it, for as long as they are read).
func (f *File) Bytes() []byte { return f.res.mapped }

// Len is the object's length.
func (f *File) Len() int64 { return int64(len(f.res.mapped)) }

// Close closes the file at once, before the collector would. Nothing of
// it may be used after, by anyone: for a File that was never shared.
func (f *File) Close() { f.res.release() }

// Stats are an arena's counters.
type Stats struct {
	// LimitBytes bounds Bytes, the bytes of the files open (rounded up
	// to pages), held by RAM's objects or waiting for the collector
	// after their last use (past LiveBytes, what the objects in use
	// hold at most, the arena asks for a collection); Files is how
	// many, within MaxFiles.
	LimitBytes int64 `json:"limit_bytes"`
	LiveBytes  int64 `json:"live_bytes"`
	Bytes      int64 `json:"bytes"`
	Files      int64 `json:"files"`
	MaxFiles   int64 `json:"max_files"`
	// Made counts the files made, Closed those closed after their last
	// use; Refused the objects kept in Go's heap because the files were
	// at a limit, Failed those the system refused a file.
	Made    uint64 `json:"made"`
	Closed  uint64 `json:"closed"`
	Refused uint64 `json:"refused"`
	Failed  uint64 `json:"failed"`
	// Collections counts the collections the arena asked for.
	Collections uint64 `json:"collections"`
	// MinObject is the smallest object put in a file.
	MinObject int `json:"min_object_bytes"`
}

// Stats returns the arena's counters.
func (a *Arena) Stats() Stats {
	return Stats{
		LimitBytes: a.limit, LiveBytes: a.live, Bytes: a.bytes.Load(), Files: a.files.Load(), MaxFiles: a.maxFiles,
		Made: a.made.Load(), Closed: a.closed.Load(), Refused: a.refused.Load(), Failed: a.failed.Load(),
		Collections: a.gcs.Load(), MinObject: a.min,
	}
}

// A Body is a range of a File to send (front.FileBody): the Front sends
// it with sendfile(2) from the file, a buffered one (Buffered), whose
// pages the socket refers to without a copy.
type Body struct {
	f      *File
	off, n int64
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

// Parts is 1: the body is one range of the file.
func (b *Body) Parts() int { return 1 }

// Part returns the body's range of the file.
func (b *Body) Part(int) (off, n int64, mem []byte, err error) { return b.off, b.n, nil, nil }

// WithFD runs fn with the file's descriptor, the file held open meanwhile.
func (b *Body) WithFD(fn func(fd int) error) error {
	err := fn(b.f.res.fd)
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

// FD is the file's descriptor, open while b is referenced.
func (b *Body) FD() int { return b.f.res.fd }
