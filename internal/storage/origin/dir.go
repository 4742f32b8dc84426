package origin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/device"
)

// ErrTooLarge reports a file larger than DirOptions.MaxObjectSize.
var ErrTooLarge = errors.New("origin: object too large")

// directAlign is the buffer and length alignment of O_DIRECT reads: the
// page size, a multiple of every logical block size (as device.File uses).
const directAlign = 4096

// DirOptions configure NewDir.
type DirOptions struct {
	// DefaultSegmentDuration is the play-out time of one media segment of
	// a title whose strata.json does not give segment_duration_s.
	// Default 10 s (FlashStream Table 4).
	DefaultSegmentDuration time.Duration
	// CatalogTTL is how long Catalog and Title trust what they last found
	// before checking the directories' modification stamps again. Default
	// 1 s; negative checks on every call.
	CatalogTTL time.Duration
	// MaxObjectSize bounds the size in bytes of a file that Get reads
	// whole into memory. Default 1 GiB.
	MaxObjectSize int64
	// NoDirect reads through the page cache instead of with O_DIRECT.
	NoDirect bool
	// Logger receives warnings (O_DIRECT or openat2 unavailable, unreadable
	// titles); nil means slog.Default().
	Logger *slog.Logger

	// openat2 replaces unix.Openat2 in tests.
	openat2 openat2Func
	// racyWindow replaces defaultRacyWindow in tests; negative trusts
	// every stamp.
	racyWindow time.Duration
}

// EnsureDefaults fills in zero fields with their defaults.
func (o *DirOptions) EnsureDefaults() {
	if o.DefaultSegmentDuration <= 0 {
		o.DefaultSegmentDuration = 10 * time.Second
	}
	if o.CatalogTTL == 0 {
		o.CatalogTTL = time.Second
	}
	if o.MaxObjectSize <= 0 {
		o.MaxObjectSize = 1 << 30
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.openat2 == nil {
		o.openat2 = unix.Openat2
	}
	if o.racyWindow == 0 {
		o.racyWindow = defaultRacyWindow
	}
}

// Dir is an Origin over a directory tree: a title-level file is
// <root>/<video>/<name>, a rendition's file <root>/<video>/<rendition>/<name>.
// Get reads whole files with O_DIRECT where the file system allows, so that
// RAM caching is Strata's (FlashStream §4: the server bypasses the page
// cache and manages RAM itself). Paths never resolve outside the root.
//
// Files are expected to be immutable once they appear: writers create them
// under another name and rename them into place. A Dir is safe for
// concurrent use.
type Dir struct {
	opts   DirOptions
	log    *slog.Logger
	fs     *beneath
	direct atomic.Bool // false once the file system refused O_DIRECT
	stats  counters
	cat    dirCatalog
}

var _ Origin = (*Dir)(nil)

// NewDir opens the directory root as an Origin. The catalog is scanned on
// first use.
func NewDir(root string, opts DirOptions) (*Dir, error) {
	opts.EnsureDefaults()
	fs, err := newBeneath(root, opts.openat2, opts.Logger)
	if err != nil {
		return nil, err
	}
	d := &Dir{opts: opts, log: opts.Logger, fs: fs}
	d.direct.Store(!opts.NoDirect)
	d.cat.init(opts.CatalogTTL)
	return d, nil
}

// Root returns the directory the Dir serves.
func (d *Dir) Root() string { return d.fs.path }

// Direct reports whether reads bypass the page cache (O_DIRECT).
func (d *Dir) Direct() bool { return d.direct.Load() }

// Close releases the root directory's descriptors; later calls fail with
// ErrClosed.
func (d *Dir) Close() error { return d.fs.close() }

// Stats returns the read counters.
func (d *Dir) Stats() Stats { return d.stats.load() }

// Get reads the whole file of o. A missing file, a directory, or a path
// that escapes the root through a symlink is ErrNotFound.
func (d *Dir) Get(ctx context.Context, o ident.Object) (Object, error) {
	obj, err := d.get(ctx, o)
	d.stats.record(len(obj.Data), err)
	return obj, err
}

func (d *Dir) get(ctx context.Context, o ident.Object) (Object, error) {
	if err := validObject(o); err != nil {
		return Object{}, err
	}
	if err := ctx.Err(); err != nil {
		return Object{}, fmt.Errorf("origin: get %s: %w", o, err)
	}
	return d.readFile(o.Path())
}

// readFile reads path with O_DIRECT unless it has been refused. On EINVAL
// it reads again through the page cache; if that works, the file system
// refused O_DIRECT (rather than, say, path being a directory, which
// O_DIRECT also refuses), so it warns and switches the whole Dir to
// buffered reads.
func (d *Dir) readFile(path string) (Object, error) {
	direct := d.direct.Load()
	obj, err := d.readOnce(path, direct)
	if direct && errors.Is(err, unix.EINVAL) {
		cause := err
		if obj, err = d.readOnce(path, false); err == nil {
			d.disableDirect(path, cause)
		}
	}
	return obj, err
}

// disableDirect switches to buffered reads, warning once.
func (d *Dir) disableDirect(path string, err error) {
	if d.direct.CompareAndSwap(true, false) {
		d.log.Warn("origin: O_DIRECT refused, reading through the page cache",
			"root", d.fs.path, "path", path, "err", err)
	}
}

// readFlags are the open flags of a read. O_NONBLOCK keeps the open of a
// FIFO from blocking; it has no effect on regular files.
func readFlags(direct bool) int {
	flags := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY
	if direct {
		flags |= unix.O_DIRECT
	}
	return flags
}

func (d *Dir) readOnce(path string, direct bool) (Object, error) {
	fd, err := d.fs.open(path, readFlags(direct))
	if err != nil {
		return Object{}, openError(err)
	}
	defer unix.Close(fd)
	st, err := statRegular(fd, path, d.opts.MaxObjectSize)
	if err != nil {
		return Object{}, err
	}
	data, err := readFD(fd, st.Size, direct)
	if err != nil {
		return Object{}, fmt.Errorf("origin: read %s: %w", path, err)
	}
	return Object{Data: data, Modified: time.Unix(0, st.Mtim.Nano()).UTC()}, nil
}

// openError classifies an error of beneath.open: missing paths and
// symlink loops are ErrNotFound (as escapes already are).
func openError(err error) error {
	var pe *os.PathError
	switch {
	case !errors.As(err, &pe):
		return err // ErrClosed, ErrEscapesRoot: already classified
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return fmt.Errorf("origin: %w", err)
}

// statRegular returns the file's attributes if it is a regular file of at
// most limit bytes.
func statRegular(fd int, path string, limit int64) (*unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("origin: fstat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, notFound(path + " (not a regular file)")
	}
	if st.Size > limit {
		return nil, fmt.Errorf("%w: %s is %d bytes, limit %d", ErrTooLarge, path, st.Size, limit)
	}
	return &st, nil
}

// readFD reads a whole file of size bytes. With O_DIRECT the buffer is
// aligned and rounded up to directAlign, and the last read comes back short
// at the end of the file. A buffered read drops the file's pages from the
// page cache afterwards, so that only Strata's own tiers cache it.
func readFD(fd int, size int64, direct bool) ([]byte, error) {
	if size == 0 {
		return []byte{}, nil
	}
	var buf []byte
	if direct {
		buf = device.AlignedBuffer(int(device.AlignUp(size, directAlign)), directAlign)
	} else {
		buf = make([]byte, size)
	}
	n, err := preadFull(fd, buf, direct)
	if err != nil {
		return nil, err
	}
	if !direct {
		_ = unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
	}
	if int64(n) != size {
		return nil, fmt.Errorf("file changed while being read: %d bytes, then %d", size, n)
	}
	if direct {
		return compact(buf, n), nil
	}
	return buf, nil
}

// preadFull reads into buf from offset 0 until it is full or the file
// ends, retrying EINTR. An O_DIRECT read shorter than a whole number of
// blocks can only be the end of the file (and the next offset would be
// unaligned), so it ends the loop.
func preadFull(fd int, buf []byte, direct bool) (int, error) {
	done := 0
	for done < len(buf) {
		n, err := unix.Pread(fd, buf[done:], int64(done))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return done, err
		}
		done += n
		if n == 0 || direct && n%directAlign != 0 {
			break
		}
	}
	return done, nil
}

// compact returns buf[:n], copied to a slice of its own when the aligned
// buffer would waste more than 1/32 of the object's size: the RAM tier
// keeps what Get returns, and counts it by length.
func compact(buf []byte, n int) []byte {
	if waste := cap(buf) + directAlign - n; waste > n/32 {
		return bytes.Clone(buf[:n])
	}
	return buf[:n:n]
}

// dirCatalog is the Dir's cached catalog (dircatalog.go): the titles,
// and the stamp of the root at its last listing, which only checks use
// (under the scan lock).
type dirCatalog struct {
	titleCache[*dirTitle]
	root     stamp // guarded by scan
	rootRacy bool  // guarded by scan: the root changed too recently to trust its stamp
}

// osFile wraps a descriptor from beneath.open as an *os.File, which then
// owns it.
func osFile(fd int, name string) *os.File { return os.NewFile(uintptr(fd), name) }
