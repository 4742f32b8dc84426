package app

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// ErrLocked reports a data directory another node holds.
var ErrLocked = errors.New("app: data directory in use")

// LockName is the lock file of a data directory.
const LockName = "LOCK"

// lockData takes the data directory's lock, an exclusive flock on
// <data>/LOCK holding the owner's pid, so that two nodes never write the
// same flash cache file. It fails at once, naming the holder's pid, when
// another process (or another Open in this one) holds it. The kernel
// drops the lock when its holder dies; unlock releases it.
func lockData(data string) (unlock func() error, err error) {
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	p := filepath.Join(data, LockName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("app: lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is locked by %s (another strata serve on this data directory?)",
				ErrLocked, data, holder(f))
		}
		return nil, fmt.Errorf("app: locking %s: %w", p, err)
	}
	pid := strconv.Itoa(os.Getpid()) + "\n"
	if err := errors.Join(f.Truncate(0), writeAt(f, pid)); err != nil {
		f.Close()
		return nil, fmt.Errorf("app: lock file: %w", err)
	}
	return f.Close, nil // closing the descriptor releases the flock
}

func writeAt(f *os.File, s string) error {
	_, err := f.WriteAt([]byte(s), 0)
	return err
}

// holder names the lock's holder from the pid it wrote.
func holder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:n])))
	if err != nil {
		return "a process whose pid is not recorded"
	}
	return "process " + strconv.Itoa(pid)
}
