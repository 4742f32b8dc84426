// Package device is block-granular storage for Strata's flash tier: a regular
// file or raw block device opened with O_DIRECT, an in-memory device, the
// fault-injecting and crash-clonable wrappers the tests drive, and the
// utilization monitor (busy time from /proc/diskstats or a device model)
// that admission control reads.
//
// Every Device accepts only aligned I/O: offsets, lengths and (for the file
// backend) buffer addresses are multiples of Alignment. Callers obtain buffers
// with AlignedBuffer.
package device

import (
	"errors"
	"fmt"
	"unsafe"
)

// Errors returned by devices. They are wrapped with %w, so errors.Is works.
var (
	// ErrUnaligned reports an offset, length or buffer that is not a
	// multiple of the device's alignment.
	ErrUnaligned = errors.New("device: unaligned I/O")
	// ErrOutOfRange reports I/O beyond the end of the device.
	ErrOutOfRange = errors.New("device: I/O beyond end of device")
	// ErrClosed reports use of a closed device.
	ErrClosed = errors.New("device: closed")
	// ErrInjected is the error a Fault device returns for an injected failure.
	ErrInjected = errors.New("device: injected I/O error")
	// ErrHintUnsupported reports that the kernel or file system did not
	// accept a write lifetime hint.
	ErrHintUnsupported = errors.New("device: write lifetime hint not supported")
	// ErrTrimUnsupported reports that the file system or block device cannot
	// punch holes or discard. Nothing was changed; a caller that needs the
	// range to read as zeros must write zeros itself.
	ErrTrimUnsupported = errors.New("device: trim not supported")
	// ErrNoBlockDevice reports a path with no block device under it (tmpfs,
	// overlayfs, btrfs subvolumes: st_dev major 0), or a block device the
	// kernel publishes no statistics for.
	ErrNoBlockDevice = errors.New("device: no backing block device")
	// ErrInvalid reports an invalid argument or option, such as a negative
	// size or an unknown lifetime class.
	ErrInvalid = errors.New("device: invalid argument")
)

// Lifetime is the expected lifetime class of data written to a device, the
// values of Linux's enum rw_hint (RWH_WRITE_LIFE_*), so it can be passed to
// fcntl(F_SET_RW_HINT) unchanged. Multi-streamed SSD §3: data of one lifetime
// written together lets the SSD erase whole blocks without copying.
type Lifetime uint64

// Lifetime classes, in the kernel's numbering.
const (
	LifetimeNotSet  Lifetime = 0 // RWH_WRITE_LIFE_NOT_SET
	LifetimeNone    Lifetime = 1 // RWH_WRITE_LIFE_NONE
	LifetimeShort   Lifetime = 2 // RWH_WRITE_LIFE_SHORT
	LifetimeMedium  Lifetime = 3 // RWH_WRITE_LIFE_MEDIUM
	LifetimeLong    Lifetime = 4 // RWH_WRITE_LIFE_LONG
	LifetimeExtreme Lifetime = 5 // RWH_WRITE_LIFE_EXTREME
)

var lifetimeNames = [...]string{"not-set", "none", "short", "medium", "long", "extreme"}

// String returns the class name, e.g. "long".
func (l Lifetime) String() string {
	if int(l) < len(lifetimeNames) {
		return lifetimeNames[l]
	}
	return fmt.Sprintf("lifetime(%d)", uint64(l))
}

// ParseLifetime parses a class name as printed by String.
func ParseLifetime(s string) (Lifetime, error) {
	for i, n := range lifetimeNames {
		if n == s {
			return Lifetime(i), nil
		}
	}
	return 0, fmt.Errorf("device: unknown lifetime class %q", s)
}

// A Device is block-granular storage. Offsets, lengths and buffers passed to
// ReadAt, WriteAt and Trim must be multiples of Alignment. Implementations
// are safe for concurrent use.
type Device interface {
	// Size is the usable size in bytes, a multiple of Alignment.
	Size() int64
	// Alignment is the I/O granularity in bytes (a power of two), such as
	// the logical block size of the underlying block device.
	Alignment() int
	// ReadAt reads len(p) bytes at off. A short read is an error.
	ReadAt(p []byte, off int64) (int, error)
	// WriteAt writes len(p) bytes at off. A short write is an error.
	WriteAt(p []byte, off int64) (int, error)
	// Sync makes every completed write durable.
	Sync() error
	// Trim tells the device that [off, off+n) no longer holds data (hole
	// punching on files, BLKDISCARD on block devices). Later reads of the
	// range return zeros on files and in memory, and unspecified bytes on
	// block devices. A backend that cannot trim changes nothing and
	// returns an error wrapping ErrTrimUnsupported.
	Trim(off, n int64) error
	// SetLifetime sets the lifetime class of subsequent writes. It returns
	// an error wrapping ErrHintUnsupported when the class cannot be passed
	// down; the device still works, without the hint.
	SetLifetime(l Lifetime) error
	// Close releases the device.
	Close() error
}

// CheckAligned returns an error wrapping ErrUnaligned unless off and n are
// multiples of align (align < 1 is treated as 1), and ErrOutOfRange unless
// [off, off+n) lies in [0, size).
func CheckAligned(off, n int64, align int, size int64) error {
	a := max(int64(align), 1)
	if off%a != 0 || n%a != 0 {
		return fmt.Errorf("%w: offset %d length %d alignment %d", ErrUnaligned, off, n, align)
	}
	// n > size-off rather than off+n > size: the sum can overflow.
	if off < 0 || n < 0 || off > size || n > size-off {
		return fmt.Errorf("%w: offset %d length %d size %d", ErrOutOfRange, off, n, size)
	}
	return nil
}

// AlignedBuffer returns a zeroed buffer of n bytes whose address is a
// multiple of align, as O_DIRECT requires. A negative n yields an empty
// buffer.
func AlignedBuffer(n, align int) []byte {
	n = max(n, 0)
	if align <= 1 {
		return make([]byte, n)
	}
	raw := make([]byte, n+align)
	shift := 0
	if rem := int(uintptr(unsafe.Pointer(unsafe.SliceData(raw))) % uintptr(align)); rem != 0 {
		shift = align - rem
	}
	return raw[shift : shift+n : shift+n]
}

// IsAlignedBuffer reports whether p starts at a multiple of align.
func IsAlignedBuffer(p []byte, align int) bool {
	if len(p) == 0 || align <= 1 {
		return true
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(p)))%uintptr(align) == 0
}

// AlignUp rounds n up to a multiple of align (a power of two).
func AlignUp(n int64, align int) int64 {
	a := int64(align)
	return (n + a - 1) &^ (a - 1)
}

// AlignDown rounds n down to a multiple of align (a power of two).
func AlignDown(n int64, align int) int64 {
	return n &^ (int64(align) - 1)
}
