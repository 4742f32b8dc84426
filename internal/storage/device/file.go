package device

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fileAlign is the I/O granularity of a regular file: the page size, and a
// multiple of every logical block size an SSD or HDD reports (512 or 4096),
// so O_DIRECT accepts it whatever device sits under the file system. The
// file system's st_blksize is its preferred I/O size, not a requirement, so
// it is not used; statx's STATX_DIOALIGN, when the kernel reports it, can only
// raise the alignment (see alignFromStatx).
const fileAlign = 4096

// maxAlign bounds an alignment taken from the kernel; larger values are
// ignored as implausible.
const maxAlign = 1 << 20

// maxFileSize bounds FileOptions.Size, so rounding it up cannot overflow.
const maxFileSize = 1 << 62

// FileOptions configures OpenFile.
type FileOptions struct {
	// Size is the device size in bytes, rounded up to the alignment. For a
	// regular file that is new or shorter, the file is extended to Size
	// with ftruncate, so the new space is sparse; a longer file is never
	// shrunk, and bytes past Size are left alone. For a block device Size
	// must not exceed the device and limits the usable part. 0 means the
	// existing size of the file or device.
	Size int64
	// NoDirect opens the file without O_DIRECT, so I/O goes through the
	// page cache. Without it, O_DIRECT is used where the file system allows.
	NoDirect bool
	// PageCache also opens a second, read-only descriptor of the file
	// without O_DIRECT, whose reads go through the kernel's page cache
	// (WithPageCacheFD): flash hits spliced from cached pages. Writes
	// stay on the first descriptor; an O_DIRECT write invalidates the
	// cached pages of its range (see docs/decisions/0034).
	PageCache bool
	// PageCacheReads opens that descriptor for small reads only (a
	// record's header and the unaligned ends of a hit, which the page
	// cache then keeps for the next hit): PageCache reports false, so
	// hits are still spliced from the O_DIRECT descriptor, and
	// WithPageCacheFD works. Implied by PageCache.
	PageCacheReads bool
	// Perm is the permission of a newly created file; 0 means 0o600.
	Perm os.FileMode
	// ReadOnly opens an existing file or device for reading only, as
	// strata fsck does; writes then fail, and Size must be 0.
	ReadOnly bool
	// Logger receives warnings, such as the fallback to buffered I/O; nil
	// means slog.Default().
	Logger *slog.Logger
}

// EnsureDefaults fills in zero fields with their defaults.
func (o *FileOptions) EnsureDefaults() {
	if o.Perm == 0 {
		o.Perm = 0o600
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// A File is a Device backed by a regular file or a raw block device, read
// and written with pread and pwrite, with O_DIRECT when the file system
// allows it. A file system that accepts O_DIRECT at open but refuses it at
// I/O time (some FUSE file systems) shows up as EINVAL errors from ReadAt and
// WriteAt; open such a file with NoDirect. It is safe for concurrent use.
type File struct {
	path   string
	size   int64
	align  int
	direct bool
	block  bool
	log    *slog.Logger

	mu struct {
		// RWMutex protects fd: I/O holds the read lock, so Close (the
		// write lock) cannot release a descriptor number that an
		// in-flight pread would then use on another file.
		sync.RWMutex
		fd int // -1 once closed
		pc int // the page cache's descriptor (FileOptions.PageCache); -1: none
		// pcSends: pc was opened for sends too (FileOptions.PageCache),
		// not for small reads alone (PageCacheReads).
		pcSends bool
	}
	hint struct {
		sync.Mutex // protects report
		report     string
	}
}

var _ Device = (*File)(nil)

// OpenFile opens, creating it if needed, the regular file or block device
// at path as a Device. See FileOptions for how its size is chosen.
func OpenFile(path string, opts FileOptions) (*File, error) {
	opts.EnsureDefaults()
	if opts.Size < 0 || opts.Size > maxFileSize || opts.ReadOnly && opts.Size != 0 {
		return nil, fmt.Errorf("%w: %s: size %d", ErrInvalid, path, opts.Size)
	}
	fd, direct, err := openFD(path, opts)
	if err != nil {
		return nil, err
	}
	f := &File{path: path, direct: direct, log: opts.Logger}
	f.mu.fd, f.mu.pc = fd, -1
	f.hint.report = "no lifetime hint requested"
	if err := f.setup(fd, opts.Size); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	if opts.PageCache || opts.PageCacheReads {
		pc, err := openRetry(path, unix.O_RDONLY|unix.O_CLOEXEC, opts.Perm)
		if err != nil {
			_ = unix.Close(fd)
			return nil, fmt.Errorf("device: open %s for page cache reads: %w", path, err)
		}
		// Reads of exactly the ranges asked for: no readahead into
		// neighbouring records, which may be RAM's or about to be
		// rewritten.
		_ = unix.Fadvise(pc, 0, 0, unix.FADV_RANDOM)
		f.mu.pc, f.mu.pcSends = pc, opts.PageCache
	}
	return f, nil
}

// openFD opens path read-write, with O_DIRECT unless opts.NoDirect or the
// file system refuses it with EINVAL (tmpfs before Linux 6.6, some FUSE
// file systems), in which case it warns and opens buffered.
func openFD(path string, opts FileOptions) (fd int, direct bool, err error) {
	flags := unix.O_RDWR | unix.O_CREAT | unix.O_CLOEXEC
	if opts.ReadOnly {
		flags = unix.O_RDONLY | unix.O_CLOEXEC
	}
	if !opts.NoDirect {
		fd, err = openRetry(path, flags|unix.O_DIRECT, opts.Perm)
		if err == nil {
			return fd, true, nil
		}
		if !errors.Is(err, unix.EINVAL) {
			return -1, false, fmt.Errorf("device: open %s: %w", path, err)
		}
		opts.Logger.Warn("device: O_DIRECT refused, falling back to buffered I/O",
			"path", path, "err", err)
	}
	fd, err = openRetry(path, flags, opts.Perm)
	if err != nil {
		return -1, false, fmt.Errorf("device: open %s: %w", path, err)
	}
	return fd, false, nil
}

// sysOpen is open(2); tests replace it to simulate a file system that
// refuses O_DIRECT.
var sysOpen = unix.Open

func openRetry(path string, flags int, perm os.FileMode) (int, error) {
	for {
		fd, err := sysOpen(path, flags, uint32(perm.Perm()))
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// setup learns the kind, size and alignment of the open file.
func (f *File) setup(fd int, size int64) error {
	var stx unix.Statx_t
	mask := unix.STATX_TYPE | unix.STATX_SIZE | unix.STATX_DIOALIGN
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, mask, &stx); err != nil {
		return fmt.Errorf("device: statx %s: %w", f.path, err)
	}
	switch stx.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return f.setupRegular(fd, &stx, size)
	case unix.S_IFBLK:
		f.block = true
		return f.setupBlock(fd, &stx, size)
	}
	return fmt.Errorf("%w: %s is neither a regular file nor a block device", ErrInvalid, f.path)
}

func (f *File) setupRegular(fd int, stx *unix.Statx_t, size int64) error {
	f.align = alignFromStatx(fileAlign, stx)
	if size == 0 {
		f.size = AlignDown(int64(stx.Size), f.align)
		return nil
	}
	f.size = AlignUp(size, f.align)
	if f.size <= int64(stx.Size) {
		return nil
	}
	if err := unix.Ftruncate(fd, f.size); err != nil {
		return fmt.Errorf("device: extend %s to %d bytes: %w", f.path, f.size, err)
	}
	return nil
}

func (f *File) setupBlock(fd int, stx *unix.Statx_t, size int64) error {
	total, lbs, err := blockGeometry(fd)
	if err != nil {
		return fmt.Errorf("device: %s: %w", f.path, err)
	}
	f.align = alignFromStatx(int(lbs), stx)
	f.size = AlignDown(total, f.align)
	if size == 0 {
		return nil
	}
	if AlignUp(size, f.align) > f.size {
		return fmt.Errorf("%w: %s: size %d exceeds the device's %d bytes", ErrInvalid, f.path, size, f.size)
	}
	f.size = AlignUp(size, f.align)
	return nil
}

// blockGeometry returns a block device's size (BLKGETSIZE64) and logical
// block size (BLKSSZGET).
func blockGeometry(fd int) (size int64, logical uint32, err error) {
	var n uint64
	if err := ioctlPtr(fd, unix.BLKGETSIZE64, unsafe.Pointer(&n)); err != nil {
		return 0, 0, fmt.Errorf("BLKGETSIZE64: %w", err)
	}
	logical, err = unix.IoctlGetUint32(fd, unix.BLKSSZGET)
	if err != nil {
		return 0, 0, fmt.Errorf("BLKSSZGET: %w", err)
	}
	if !isPow2(int64(logical)) || logical > maxAlign {
		return 0, 0, fmt.Errorf("%w: logical block size %d", ErrInvalid, logical)
	}
	return int64(n), logical, nil
}

// alignFromStatx raises align to the O_DIRECT offset and memory alignments
// statx reports (STATX_DIOALIGN, Linux 6.1+), when they are larger.
func alignFromStatx(align int, stx *unix.Statx_t) int {
	if stx.Mask&unix.STATX_DIOALIGN == 0 {
		return align
	}
	for _, a := range []uint32{stx.Dio_offset_align, stx.Dio_mem_align} {
		if int(a) > align && isPow2(int64(a)) && a <= maxAlign {
			align = int(a)
		}
	}
	return align
}

func isPow2(n int64) bool { return n > 0 && n&(n-1) == 0 }

// Path returns the path the device was opened with.
func (f *File) Path() string { return f.path }

// Direct reports whether I/O bypasses the page cache (O_DIRECT).
func (f *File) Direct() bool { return f.direct }

// IsBlockDevice reports whether the path is a raw block device.
func (f *File) IsBlockDevice() bool { return f.block }

// Size returns the usable size in bytes.
func (f *File) Size() int64 { return f.size }

// Alignment returns the I/O granularity in bytes: 4096 (or more, if the
// kernel's O_DIRECT limits ask for more) for a regular file, the logical
// block size for a block device.
func (f *File) Alignment() int { return f.align }

// ReadAt reads len(p) bytes at off. With O_DIRECT, p must start at a
// multiple of Alignment (see AlignedBuffer).
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	return f.transfer(p, off, unix.Pread, "read")
}

// WriteAt writes len(p) bytes at off. With O_DIRECT, p must start at a
// multiple of Alignment (see AlignedBuffer).
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	return f.transfer(p, off, unix.Pwrite, "write")
}

type ioFunc func(fd int, p []byte, off int64) (int, error)

func (f *File) transfer(p []byte, off int64, op ioFunc, name string) (int, error) {
	if err := f.checkIO(p, off); err != nil {
		return 0, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.mu.fd < 0 {
		return 0, ErrClosed
	}
	n, err := transferAll(f.mu.fd, p, off, op)
	if err != nil {
		return n, fmt.Errorf("device: %s %s at %d (%d of %d bytes done): %w", name, f.path, off, n, len(p), err)
	}
	return n, nil
}

func (f *File) checkIO(p []byte, off int64) error {
	if err := CheckAligned(off, int64(len(p)), f.align, f.size); err != nil {
		return err
	}
	if f.direct && !IsAlignedBuffer(p, f.align) {
		return fmt.Errorf("%w: buffer address not a multiple of %d (use AlignedBuffer)", ErrUnaligned, f.align)
	}
	return nil
}

// transferAll repeats op until all of p is done, retrying EINTR and
// continuing after short transfers. A zero-byte transfer (end of file) is
// io.ErrUnexpectedEOF.
func transferAll(fd int, p []byte, off int64, op ioFunc) (int, error) {
	done := 0
	for done < len(p) {
		n, err := op(fd, p[done:], off+int64(done))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return done, err
		case n == 0:
			return done, io.ErrUnexpectedEOF
		}
		done += n
	}
	return done, nil
}

// Sync makes completed writes durable with fdatasync.
func (f *File) Sync() error {
	return f.withFD("fdatasync", func(fd int) error {
		return retryEINTR(func() error { return unix.Fdatasync(fd) })
	})
}

// Trim releases [off, off+n): on a regular file it punches a hole
// (fallocate PUNCH_HOLE|KEEP_SIZE, so the range reads zeros and the size is
// unchanged); on a block device it issues BLKDISCARD, after which the range
// reads unspecified bytes. When the file system or device cannot do it, Trim
// changes nothing and returns an error wrapping ErrTrimUnsupported.
func (f *File) Trim(off, n int64) error {
	if err := CheckAligned(off, n, f.align, f.size); err != nil || n == 0 {
		return err
	}
	err := f.withFD("trim", func(fd int) error {
		if f.block {
			return blkDiscard(fd, off, n)
		}
		mode := unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_KEEP_SIZE
		return retryEINTR(func() error { return unix.Fallocate(fd, uint32(mode), off, n) })
	})
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.ENOTTY) {
		return fmt.Errorf("%w: %w", ErrTrimUnsupported, err)
	}
	return err
}

func blkDiscard(fd int, off, n int64) error {
	r := [2]uint64{uint64(off), uint64(n)}
	return ioctlPtr(fd, unix.BLKDISCARD, unsafe.Pointer(&r))
}

// withFD runs fn with the open descriptor, wrapping its error with what and
// the path.
func (f *File) withFD(what string, fn func(fd int) error) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.mu.fd < 0 {
		return ErrClosed
	}
	if err := fn(f.mu.fd); err != nil {
		return fmt.Errorf("device: %s %s: %w", what, f.path, err)
	}
	return nil
}

func retryEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}

func ioctlPtr(fd int, req uint, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

// Close releases the file descriptor, after in-flight I/O has finished. It
// does not sync. Closing twice returns ErrClosed.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.fd < 0 {
		return ErrClosed
	}
	fd := f.mu.fd
	f.mu.fd = -1
	if f.mu.pc >= 0 {
		_ = unix.Close(f.mu.pc)
		f.mu.pc = -1
	}
	if err := unix.Close(fd); err != nil {
		return fmt.Errorf("device: close %s: %w", f.path, err)
	}
	return nil
}

// SetLifetime sets the write lifetime hint with fcntl(F_SET_RW_HINT) and
// reads it back with F_GET_RW_HINT. On Linux the hint belongs to the inode,
// not to the open file: it applies to every descriptor of the file (other
// processes included) and lasts until changed or until the inode leaves the
// cache. It therefore tags the writes that follow only when one writer sets
// it before its writes, as Strata's single SSD feed does. The kernel storing
// the hint does not mean the device uses it: that depends on the block
// driver (NVMe streams before Linux 5.18, data placement in later kernels).
// An error wraps ErrHintUnsupported; the device keeps working without the
// hint. HintReport describes the outcome.
func (f *File) SetLifetime(l Lifetime) error {
	var raw error
	err := f.withFD("set lifetime hint", func(fd int) error {
		raw = setHint(fd, l)
		return raw
	})
	f.hint.Lock()
	defer f.hint.Unlock()
	if !errors.Is(err, ErrClosed) {
		f.hint.report = hintReport(l, raw)
	}
	if err != nil && !errors.Is(err, ErrClosed) {
		return fmt.Errorf("%w: %w", ErrHintUnsupported, err)
	}
	return err
}

// HintReport describes the outcome of the last SetLifetime, for example
// "F_SET_RW_HINT accepted (long)" or "F_SET_RW_HINT refused (long): EINVAL
// (invalid argument)", so a server can log what the kernel accepted.
func (f *File) HintReport() string {
	f.hint.Lock()
	defer f.hint.Unlock()
	return f.hint.report
}

// setHint passes l to F_SET_RW_HINT and checks it with F_GET_RW_HINT.
func setHint(fd int, l Lifetime) error {
	if l > LifetimeExtreme {
		return fmt.Errorf("%w: lifetime class %d", ErrInvalid, uint64(l))
	}
	h := uint64(l)
	if err := fcntlPtr(fd, unix.F_SET_RW_HINT, unsafe.Pointer(&h)); err != nil {
		return err
	}
	h = ^uint64(0)
	if err := fcntlPtr(fd, unix.F_GET_RW_HINT, unsafe.Pointer(&h)); err != nil {
		return fmt.Errorf("F_GET_RW_HINT: %w", err)
	}
	if Lifetime(h) != l {
		return fmt.Errorf("F_GET_RW_HINT reads %s after setting %s", Lifetime(h), l)
	}
	return nil
}

func fcntlPtr(fd, cmd int, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_FCNTL, uintptr(fd), uintptr(cmd), uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

func hintReport(l Lifetime, err error) string {
	if err == nil {
		return fmt.Sprintf("F_SET_RW_HINT accepted (%s), read back with F_GET_RW_HINT", l)
	}
	if errno, ok := err.(unix.Errno); ok {
		return fmt.Sprintf("F_SET_RW_HINT refused (%s): %s (%v)", l, unix.ErrnoName(errno), errno)
	}
	return fmt.Sprintf("F_SET_RW_HINT refused (%s): %v", l, err)
}

// WithFD runs fn with the file's descriptor (a sendfile(2) from it), which
// Close does not release while fn runs.
func (f *File) WithFD(fn func(fd int) error) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.mu.fd < 0 {
		return ErrClosed
	}
	return fn(f.mu.fd)
}

// ErrNoPageCache is WithPageCacheFD's error for a file opened without
// FileOptions.PageCache or PageCacheReads.
var ErrNoPageCache = errors.New("device: no page cache descriptor (FileOptions.PageCache)")

// PageCache reports whether the file has a page cache descriptor for
// sends (FileOptions.PageCache).
func (f *File) PageCache() bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.mu.pc >= 0 && f.mu.pcSends
}

// PageCacheReads reports whether the file has a page cache descriptor,
// for small reads at least (FileOptions.PageCacheReads or PageCache).
func (f *File) PageCacheReads() bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.mu.pc >= 0
}

// WithPageCacheFD runs fn with the file's read-only descriptor opened
// without O_DIRECT (FileOptions.PageCache): reads and splices from it go
// through the page cache, at any offset and length. Close does not
// release it while fn runs.
func (f *File) WithPageCacheFD(fn func(fd int) error) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.mu.fd < 0 {
		return ErrClosed
	}
	if f.mu.pc < 0 {
		return ErrNoPageCache
	}
	return fn(f.mu.pc)
}
