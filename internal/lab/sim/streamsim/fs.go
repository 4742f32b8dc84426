package streamsim

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"time"
)

// errFull reports a file system with no free space left.
var errFull = errors.New("streamsim: file system full")

// An extent is a run of bytes on the drive.
type extent struct{ off, n int64 }

// fsOptions size the file system model. Sizes are bytes; the defaults are
// ext4's for a 256 GB volume, times the run's scale, and data granules are
// whole flash pages so that no two files share a page (a drive without a
// write buffer would program a shared page twice).
type fsOptions struct {
	// Granule is the allocation unit. Default 64 KiB.
	Granule int64
	// Window is what a growing file reserves at once (ext4 mballoc
	// normalizes large requests to 8 MiB preallocations). Default 8 MiB.
	Window int64
	// Group is a block group, whose bitmap block an allocation dirties.
	// Default 128 MiB (32768 blocks of 4 KiB).
	Group int64
	// MetaBlock is a metadata block. Default 4 KiB.
	MetaBlock int64
	// Journal is the size of the jbd2 journal. Default 128 MiB.
	Journal int64
	// Commit is jbd2's commit interval. Default 5 s.
	Commit time.Duration
}

func (o *fsOptions) ensureDefaults(scale float64, page int64) {
	sz := func(v *int64, def int64, floor int64) {
		if *v == 0 {
			*v = max(int64(float64(def)*scale)/floor*floor, floor)
		}
	}
	sz(&o.Granule, 64<<10, page)
	sz(&o.Window, 8<<20, o.Granule)
	sz(&o.Group, 128<<20, o.Granule)
	sz(&o.MetaBlock, 4<<10, 512)
	sz(&o.Journal, 128<<20, o.MetaBlock)
	if o.Commit == 0 {
		o.Commit = 5 * time.Second
	}
}

// fileSystem is an ext4-like allocator over the drive: metadata and the
// journal at the start, then data granules handed out to files in
// preallocated windows, next to the file's last extent when that is free
// (ext4's goal block), else from a next-fit cursor. Concurrent writers
// each fill their own window, so their files interleave on the drive in
// windows, and free space fragments as files are deleted, as ext4's does.
// It tracks the metadata blocks each change dirties, for the journal.
type fileSystem struct {
	o        fsOptions
	metaOff  int64 // metadata region
	jOff     int64 // journal region
	dataOff  int64
	granules int64
	used     []uint64 // bitmap of granules
	nfree    int64
	cursor   int64
	nextID   int
	dirty    map[int64]bool // metadata blocks dirtied since the last commit
	groups   int64          // block groups: one bitmap block each
	inodes   int64          // inode table blocks
}

// A file is a file on the model file system.
type file struct {
	id      int
	extents []extent
	size    int64
	pre     extent // reserved, not yet written
}

// newFileSystem lays a file system over [0, size).
func newFileSystem(size int64, o fsOptions) (*fileSystem, error) {
	fs := &fileSystem{o: o, dirty: make(map[int64]bool), inodes: 4096}
	fs.groups = size/o.Group + 1
	metaBytes := (fs.groups + fs.inodes + 16) * o.MetaBlock
	fs.jOff = roundUp(metaBytes, o.Granule)
	fs.dataOff = fs.jOff + roundUp(o.Journal, o.Granule)
	fs.granules = (size - fs.dataOff) / o.Granule
	if fs.granules < 16 {
		return nil, fmt.Errorf("streamsim: %d bytes hold no file system", size)
	}
	fs.used = make([]uint64, (fs.granules+63)/64)
	fs.nfree = fs.granules
	return fs, nil
}

func roundUp(v, unit int64) int64 { return (v + unit - 1) / unit * unit }

// DataBytes is the space files may use.
func (fs *fileSystem) DataBytes() int64 { return fs.granules * fs.o.Granule }

// FreeBytes is the space not allocated (reservations count as allocated).
func (fs *fileSystem) FreeBytes() int64 { return fs.nfree * fs.o.Granule }

// create makes an empty file.
func (fs *fileSystem) create() *file {
	fs.nextID++
	f := &file{id: fs.nextID}
	fs.touchInode(f)
	fs.dirty[fs.dirBlock()] = true
	return f
}

// appendTo grows f by n bytes and returns where they go on the drive.
func (fs *fileSystem) appendTo(f *file, n int64) ([]extent, error) {
	var out []extent
	for n > 0 {
		if f.pre.n == 0 {
			if err := fs.reserve(f, roundUp(n, fs.o.Granule)); err != nil {
				return out, err
			}
		}
		k := min(n, f.pre.n)
		e := extent{f.pre.off, k}
		f.pre.off, f.pre.n = f.pre.off+k, f.pre.n-k
		f.addExtent(e)
		out = append(out, e)
		n -= k
		f.size += k
	}
	fs.touchInode(f)
	return out, nil
}

func (f *file) addExtent(e extent) {
	if k := len(f.extents); k > 0 && f.extents[k-1].off+f.extents[k-1].n == e.off {
		f.extents[k-1].n += e.n
		return
	}
	f.extents = append(f.extents, e)
}

// reserve gives f a new window of at least need bytes where possible.
func (fs *fileSystem) reserve(f *file, need int64) error {
	want := max(fs.o.Window, need) / fs.o.Granule
	if g, ok := fs.goal(f); ok {
		if n := fs.freeRun(g, want); n > 0 {
			return fs.take(f, g, n)
		}
	}
	g, n, ok := fs.search(want, need/fs.o.Granule)
	if !ok {
		return errFull
	}
	return fs.take(f, g, n)
}

// goal is the granule after f's last extent (ext4's goal block).
func (fs *fileSystem) goal(f *file) (int64, bool) {
	if len(f.extents) == 0 {
		return 0, false
	}
	last := f.extents[len(f.extents)-1]
	g := (last.off + last.n - fs.dataOff + fs.o.Granule - 1) / fs.o.Granule
	return g, g < fs.granules
}

// freeRun is the number of free granules from g, up to want.
func (fs *fileSystem) freeRun(g, want int64) int64 {
	n := int64(0)
	for n < want && g+n < fs.granules && !fs.isUsed(g+n) {
		n++
	}
	return n
}

// searchTries bounds the free runs search looks at once it has found one
// of the size the request needs (mballoc, too, settles for a good enough
// extent after scanning a few groups).
const searchTries = 64

// search finds, from the cursor on, the first run of want free granules;
// failing that, the longest of the first searchTries runs, once one of at
// least need granules is among them, else the longest in a whole pass.
func (fs *fileSystem) search(want, need int64) (int64, int64, bool) {
	if fs.nfree == 0 {
		return 0, 0, false
	}
	bestG, bestN := int64(-1), int64(0)
	g := fs.cursor
	for scanned, tries := int64(0), 0; scanned < fs.granules; tries++ {
		if tries >= searchTries && bestN >= need {
			break
		}
		g0, skipped := fs.nextFree(g)
		scanned += skipped
		if g0 < 0 || scanned >= fs.granules {
			break
		}
		n := fs.freeRun(g0, want)
		if n == want {
			return g0, n, true
		}
		if n > bestN {
			bestG, bestN = g0, n
		}
		scanned += n
		g = (g0 + n) % fs.granules
	}
	return bestG, bestN, bestN > 0
}

// nextFree returns the first free granule at or after g (wrapping) and how
// many granules it passed over, or -1.
func (fs *fileSystem) nextFree(g int64) (int64, int64) {
	for passed := int64(0); passed < fs.granules; {
		w := g / 64
		bitsFree := ^fs.used[w] >> (g % 64)
		if bitsFree != 0 {
			z := int64(bits.TrailingZeros64(bitsFree))
			if g+z < fs.granules {
				return g + z, passed + z
			}
		}
		step := 64 - g%64
		passed += step
		g += step
		if g >= fs.granules {
			g = 0
		}
	}
	return -1, fs.granules
}

func (fs *fileSystem) isUsed(g int64) bool { return fs.used[g/64]&(1<<(g%64)) != 0 }

func (fs *fileSystem) setUsed(g int64, used bool) {
	if used {
		fs.used[g/64] |= 1 << (g % 64)
	} else {
		fs.used[g/64] &^= 1 << (g % 64)
	}
	fs.dirty[fs.metaOff+(g*fs.o.Granule/fs.o.Group)*fs.o.MetaBlock] = true
}

// take reserves granules [g, g+n) for f.
func (fs *fileSystem) take(f *file, g, n int64) error {
	for i := g; i < g+n; i++ {
		fs.setUsed(i, true)
	}
	fs.nfree -= n
	fs.cursor = (g + n) % fs.granules
	f.pre = extent{fs.dataOff + g*fs.o.Granule, n * fs.o.Granule}
	return nil
}

// closeFile returns the whole granules of f's unwritten reservation (a
// granule f wrote part of stays f's); when the reservation ended at the
// cursor, the next allocation starts where f's data ends, as the next
// file's goal would, so small files pack densely.
func (fs *fileSystem) closeFile(f *file) {
	if f.pre.n > 0 {
		start := fs.dataOff + roundUp(f.pre.off-fs.dataOff, fs.o.Granule)
		if end := f.pre.off + f.pre.n; end > start {
			fs.release(extent{start, end - start})
			if (end-fs.dataOff)/fs.o.Granule%fs.granules == fs.cursor {
				fs.cursor = (start - fs.dataOff) / fs.o.Granule
			}
		}
		f.pre = extent{}
	}
}

// remove deletes f and returns its extents, for TRIM.
func (fs *fileSystem) remove(f *file) []extent {
	fs.closeFile(f)
	for _, e := range f.extents {
		fs.release(e)
	}
	fs.touchInode(f)
	fs.dirty[fs.dirBlock()] = true
	ext := f.extents
	f.extents = nil
	return ext
}

// release frees the granules of e (whole granules; a file's last granule
// is partly written but wholly its own).
func (fs *fileSystem) release(e extent) {
	first := (e.off - fs.dataOff) / fs.o.Granule
	last := (e.off + e.n - fs.dataOff + fs.o.Granule - 1) / fs.o.Granule
	for g := first; g < last; g++ {
		if fs.isUsed(g) {
			fs.setUsed(g, false)
			fs.nfree++
		}
	}
}

func (fs *fileSystem) touchInode(f *file) {
	blk := fs.groups + int64(f.id/16)%fs.inodes
	fs.dirty[fs.metaOff+blk*fs.o.MetaBlock] = true
}

func (fs *fileSystem) dirBlock() int64 { return (fs.groups + fs.inodes) * fs.o.MetaBlock }

// takeDirty returns the dirty metadata blocks in address order and
// forgets them.
func (fs *fileSystem) takeDirty() []int64 {
	out := make([]int64, 0, len(fs.dirty))
	for b := range fs.dirty {
		out = append(out, b)
	}
	clear(fs.dirty)
	slices.Sort(out)
	return out
}
