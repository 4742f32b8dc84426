// Package space tells whether a file system has room for a write before
// the write starts, so that an upload too large for the disk is refused
// up front instead of failing half-way.
package space

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNoSpace reports a file system without room for a write: too little
// free space before it, or ENOSPC during it.
var ErrNoSpace = errors.New("space: not enough free space")

// A FreeFunc returns the bytes an unprivileged process may still write
// on the file system holding dir: Free, or a stand-in in tests.
type FreeFunc func(dir string) (int64, error)

// Free returns the bytes available to an unprivileged process on the
// file system holding dir (statfs f_bavail x f_bsize).
func Free(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("space: %w", err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil //nolint:unconvert // the field types differ by platform
}

// Check returns an error wrapping ErrNoSpace when the file system of dir
// has less than need bytes free, as free says (nil: Free). A failure to
// ask is not a refusal: the write will tell.
func Check(free FreeFunc, dir string, need int64) error {
	if free == nil {
		free = Free
	}
	have, err := free(dir)
	if err != nil || have >= need {
		return nil
	}
	return fmt.Errorf("%w: %d bytes needed, %d free", ErrNoSpace, need, have)
}

// IsNoSpace reports whether err is a lack of space: ErrNoSpace, or
// ENOSPC or EDQUOT from a write.
func IsNoSpace(err error) bool {
	return errors.Is(err, ErrNoSpace) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
