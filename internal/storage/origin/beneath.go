package origin

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrClosed reports the use of a closed Dir.
var ErrClosed = errors.New("origin: closed")

// ErrEscapesRoot reports a path that would leave a Dir's root, through a
// symbolic link pointing outside it (or an absolute one). Such a read is
// refused. It wraps ErrNotFound, so clients see a plain 404.
var ErrEscapesRoot = fmt.Errorf("%w: path escapes the root", ErrNotFound)

// beneath opens paths relative to a root directory without ever resolving
// them outside it. It uses openat2 with RESOLVE_BENEATH (Linux 5.6+): one
// system call per open, and the kernel refuses ".." and symlinks that leave
// the root, absolute symlinks included. Where openat2 is missing or
// filtered (old kernels, some seccomp profiles) it falls back to os.Root,
// which walks the path one component at a time with O_NOFOLLOW and checks
// every symlink itself. Both are free of the check-then-open race that an
// Lstat check before open would have. Symlinks that stay beneath the root
// are followed.
type beneath struct {
	path string
	root *os.Root // fallback when openat2 is unavailable, else nil

	// mu protects fd: lookups hold the read lock, so that Close (the
	// write lock) cannot release a descriptor number that a lookup would
	// then resolve paths against after another file reused it.
	mu sync.RWMutex
	fd int // O_PATH descriptor of the root, for *at calls; -1 once closed

	// openat2 is unix.Openat2; tests replace it to simulate old kernels
	// and file systems that refuse O_DIRECT.
	openat2 func(dirfd int, path string, how *unix.OpenHow) (int, error)
}

// maxRetries bounds the retries of an interrupted or raced openat2.
const maxRetries = 16

// openat2Func is the openat2 system call, as beneath uses it.
type openat2Func = func(dirfd int, path string, how *unix.OpenHow) (int, error)

// newBeneath opens the directory at path and chooses how to resolve paths
// under it, probing openat2 once.
func newBeneath(path string, openat2 openat2Func, log *slog.Logger) (*beneath, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("origin: open root %s: %w", path, err)
	}
	b := &beneath{path: path, fd: fd, openat2: openat2}
	if err := b.probe(log); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	return b, nil
}

// probe switches to os.Root when openat2 is not available.
func (b *beneath) probe(log *slog.Logger) error {
	fd, err := b.openat2(b.fd, ".", b.how(unix.O_PATH|unix.O_DIRECTORY))
	if err == nil {
		return unix.Close(fd)
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM) {
		return fmt.Errorf("origin: openat2 %s: %w", b.path, err)
	}
	log.Warn("origin: openat2 unavailable, resolving paths with os.Root", "root", b.path, "err", err)
	root, err := os.OpenRoot(b.path)
	if err != nil {
		return fmt.Errorf("origin: open root %s: %w", b.path, err)
	}
	b.root = root
	return nil
}

func (b *beneath) how(flags int) *unix.OpenHow {
	return &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
}

// open opens path (relative to the root) with flags and returns a raw
// descriptor the caller closes. An errno comes back in an *os.PathError;
// an escape wraps ErrEscapesRoot.
func (b *beneath) open(path string, flags int) (int, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	switch {
	case b.fd < 0:
		return -1, ErrClosed
	case b.root != nil:
		return b.openRoot(path, flags)
	}
	for attempt := 0; ; attempt++ {
		fd, err := b.openat2(b.fd, path, b.how(flags))
		switch {
		case err == nil:
			return fd, nil
		case (err == unix.EINTR || err == unix.EAGAIN) && attempt < maxRetries:
			continue // EAGAIN: a concurrent rename raced the lookup
		case errors.Is(err, unix.EXDEV):
			return -1, b.escapes(path, err)
		}
		return -1, &os.PathError{Op: "openat2", Path: path, Err: err}
	}
}

// openRoot is open through os.Root. os.Root reports an escape with an
// unexported error, so every error that is not an errno counts as one.
func (b *beneath) openRoot(path string, flags int) (int, error) {
	f, err := b.root.OpenFile(path, flags, 0)
	if err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			return -1, b.escapes(path, err)
		}
		return -1, &os.PathError{Op: "openat", Path: path, Err: errno}
	}
	defer f.Close()
	return dupFile(f)
}

// dupFile returns a duplicate of f's descriptor, owned by the caller.
func dupFile(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("origin: %s: %w", f.Name(), err)
	}
	nfd, derr := -1, error(nil)
	err = rc.Control(func(fd uintptr) {
		nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	})
	if err = errors.Join(err, derr); err != nil {
		return -1, fmt.Errorf("origin: dup %s: %w", f.Name(), err)
	}
	return nfd, nil
}

func (b *beneath) escapes(path string, err error) error {
	return fmt.Errorf("%w: %s under %s (%v)", ErrEscapesRoot, path, b.path, err)
}

// stat returns the stamp of path, following symlinks, and false if it does
// not exist. It is the cheap change check of the catalog: one fstatat and
// no descriptor. It reads only metadata, so it need not stay beneath the
// root; whatever it finds is read through open.
func (b *beneath) stat(path string) (stamp, bool, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.fd < 0 {
		return stamp{}, false, ErrClosed
	}
	var st unix.Stat_t
	err := unix.Fstatat(b.fd, path, &st, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return stamp{}, false, nil
	}
	if err != nil {
		return stamp{}, false, fmt.Errorf("origin: stat %s: %w", path, err)
	}
	return stampOf(&st), true, nil
}

// close releases the root's descriptors. Closing twice returns ErrClosed.
func (b *beneath) close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fd < 0 {
		return ErrClosed
	}
	err := unix.Close(b.fd)
	b.fd = -1
	if b.root != nil {
		err = errors.Join(err, b.root.Close())
	}
	if err != nil {
		return fmt.Errorf("origin: close root %s: %w", b.path, err)
	}
	return nil
}

// A stamp identifies one version of a file or directory: a directory's
// mtime and ctime change when an entry is added, removed or renamed in it,
// and a file replaced by rename gets a new inode.
type stamp struct {
	ino          uint64
	size         int64
	mtime, ctime int64 // ns since the epoch
}

func stampOf(st *unix.Stat_t) stamp {
	return stamp{ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}
