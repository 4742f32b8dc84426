package device

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A BusySource reports how long a device has spent doing I/O since some
// fixed origin: the kernel's io_ticks for a real disk (DiskStats), or the
// busy time an emulated device's model accumulates.
type BusySource interface {
	// Busy returns the cumulative time the device had I/O in flight.
	Busy() (time.Duration, error)
}

// Utilization returns the fraction of the wall-clock interval [t0, t1]
// that the device was busy, given its cumulative busy time at each end:
// (busy1 - busy0) / (t1 - t0), clamped to [0, 1]. This is iostat's %util
// (divided by 100). An empty or backward interval gives 0.
func Utilization(busy0, busy1 time.Duration, t0, t1 time.Time) float64 {
	wall := t1.Sub(t0)
	if wall <= 0 {
		return 0
	}
	return min(max(float64(busy1-busy0)/float64(wall), 0), 1)
}

// An Epoch turns cumulative busy time into the utilization of the last
// completed epoch, the figure FlashStream's admission control compares with
// its threshold (§3.3: the feed writes only while the SSD's utilization over
// the last epoch is below 60%). It starts no goroutine: the caller drives it
// with the current time, from the live server's clock or the simulator's.
// It is not safe for concurrent use.
type Epoch struct {
	src    BusySource
	length time.Duration

	started   bool
	start     time.Time
	startBusy time.Duration
	last      float64
	completed bool
}

// NewEpoch returns an Epoch of the given length (at least 1ns) over src.
// src may be nil if the caller only uses Observe.
func NewEpoch(src BusySource, length time.Duration) *Epoch {
	return &Epoch{src: src, length: max(length, 1)}
}

// Tick reads the source's busy time at now and returns Observe's result.
func (e *Epoch) Tick(now time.Time) (float64, error) {
	if e.src == nil {
		return e.last, fmt.Errorf("%w: epoch has no busy source", ErrInvalid)
	}
	busy, err := e.src.Busy()
	if err != nil {
		return e.last, err
	}
	return e.Observe(now, busy), nil
}

// Observe records a busy reading taken at now and returns the utilization
// of the last completed epoch, 0 until one has completed (see Completed).
// An epoch ends at the first reading at or after its start plus the length;
// its utilization covers exactly the span between the two readings, so a
// late caller gets a longer epoch rather than a wrong figure. A reading with
// less busy time than the epoch's start (the source restarted) or an
// earlier time starts a new epoch.
func (e *Epoch) Observe(now time.Time, busy time.Duration) float64 {
	switch {
	case !e.started || busy < e.startBusy || now.Before(e.start):
		e.restart(now, busy)
	case now.Sub(e.start) >= e.length:
		e.last = Utilization(e.startBusy, busy, e.start, now)
		e.completed = true
		e.restart(now, busy)
	}
	return e.last
}

// Completed reports whether an epoch has completed, so that the value
// Observe and Tick return is a measurement rather than the initial 0.
func (e *Epoch) Completed() bool { return e.completed }

func (e *Epoch) restart(now time.Time, busy time.Duration) {
	e.started, e.start, e.startBusy = true, now, busy
}

// DiskStatsOptions configures OpenDiskStats.
type DiskStatsOptions struct {
	// ProcRoot is where procfs is mounted; "" means "/proc".
	ProcRoot string
	// SysRoot is where sysfs is mounted; "" means "/sys".
	SysRoot string
}

// EnsureDefaults fills in zero fields with their defaults.
func (o *DiskStatsOptions) EnsureDefaults() {
	if o.ProcRoot == "" {
		o.ProcRoot = "/proc"
	}
	if o.SysRoot == "" {
		o.SysRoot = "/sys"
	}
}

// DiskStats is the BusySource of a real disk: the io_ticks the kernel
// counts in /proc/diskstats for the whole disk holding a path. It is safe
// for concurrent use.
type DiskStats struct {
	name  string
	stats string // path of the diskstats file

	mu struct {
		sync.Mutex // protects the file and the wraparound state below
		// f is the diskstats file, opened at the first Busy and read from
		// its start each time (a monitor reads it every epoch: one pread
		// or two, not an open, a stat and a close); buf holds its text.
		f      *os.File
		buf    []byte
		primed bool
		last   uint64 // last raw io_ticks, ms
		total  time.Duration
	}
}

var _ BusySource = (*DiskStats)(nil)

// NewDiskStats returns the DiskStats of the disk holding path, read from
// /proc and /sys. See OpenDiskStats.
func NewDiskStats(path string) (*DiskStats, error) {
	return OpenDiskStats(path, DiskStatsOptions{})
}

// OpenDiskStats returns the DiskStats of the disk holding path: the block
// device path is on (or path itself, if it is a block device), or the whole
// disk when that is a partition, since the kernel counts io_ticks per queue
// and a partition shares its disk's. A path with no block device under it
// returns an error wrapping ErrNoBlockDevice.
func OpenDiskStats(path string, opts DiskStatsOptions) (*DiskStats, error) {
	major, minor, err := deviceNumber(path)
	if err != nil {
		return nil, err
	}
	return openDiskStatsDev(major, minor, opts)
}

// deviceNumber returns the major and minor numbers of the block device
// holding path.
func deviceNumber(path string) (major, minor uint32, err error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, 0, fmt.Errorf("device: stat %s: %w", path, err)
	}
	dev := st.Dev
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		dev = st.Rdev
	}
	if unix.Major(dev) == 0 {
		return 0, 0, fmt.Errorf("%w: %s is on an unnamed device %d:%d (tmpfs, overlayfs, btrfs...)",
			ErrNoBlockDevice, path, unix.Major(dev), unix.Minor(dev))
	}
	return unix.Major(dev), unix.Minor(dev), nil
}

func openDiskStatsDev(major, minor uint32, opts DiskStatsOptions) (*DiskStats, error) {
	opts.EnsureDefaults()
	name, err := diskName(opts.SysRoot, major, minor)
	if err != nil {
		return nil, err
	}
	d := &DiskStats{name: name, stats: filepath.Join(opts.ProcRoot, "diskstats")}
	if _, err := d.Busy(); err != nil {
		return nil, err
	}
	return d, nil
}

// diskName maps major:minor to the kernel name of its whole disk through
// /sys/dev/block/MAJ:MIN, a symlink to the device's sysfs directory. A
// partition's directory holds a "partition" file and sits inside its disk's.
func diskName(sysRoot string, major, minor uint32) (string, error) {
	link := filepath.Join(sysRoot, "dev", "block", fmt.Sprintf("%d:%d", major, minor))
	dir, err := filepath.EvalSymlinks(link)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %d:%d is not in %s", ErrNoBlockDevice, major, minor, filepath.Dir(link))
	}
	if err != nil {
		return "", fmt.Errorf("device: resolve %s: %w", link, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		dir = filepath.Dir(dir)
	}
	return filepath.Base(dir), nil
}

// Name returns the kernel name of the disk, such as "nvme0n1" or "sda".
func (d *DiskStats) Name() string { return d.name }

// Busy returns the disk's cumulative io_ticks: the time it had at least one
// request in flight. The kernel prints io_ticks as 32-bit milliseconds,
// which wrap after 49.7 days of busy time; Busy counts across the wrap, as
// long as it is called at least once per wrap.
func (d *DiskStats) Busy() (time.Duration, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	data, err := d.readLocked()
	if err != nil {
		return 0, fmt.Errorf("device: read %s: %w", d.stats, err)
	}
	ticks, err := parseIOTicks(data, d.name)
	if err != nil {
		return 0, err
	}
	return d.advanceLocked(ticks), nil
}

// readLocked reads the diskstats file whole from its start, through the
// descriptor kept open (the kernel makes the text anew for a read at
// offset 0). The returned bytes are valid until the next call.
func (d *DiskStats) readLocked() ([]byte, error) {
	if d.mu.f == nil {
		f, err := os.Open(d.stats)
		if err != nil {
			return nil, err
		}
		d.mu.f, d.mu.buf = f, make([]byte, 4096)
	}
	n := 0
	for {
		if n == len(d.mu.buf) {
			d.mu.buf = append(d.mu.buf, make([]byte, len(d.mu.buf))...)
		}
		m, err := d.mu.f.ReadAt(d.mu.buf[n:], int64(n))
		n += m
		switch {
		case errors.Is(err, io.EOF) || (err == nil && m == 0):
			return d.mu.buf[:n], nil
		case err != nil:
			d.mu.f.Close() //nolint:errcheck // reopened at the next call
			d.mu.f = nil
			return nil, err
		}
	}
}

// advanceLocked adds the raw io_ticks reading to the running total.
func (d *DiskStats) advanceLocked(ticks uint64) time.Duration {
	delta := ticks
	if d.mu.primed {
		delta = ticks - d.mu.last
		if ticks < d.mu.last && d.mu.last <= math.MaxUint32 {
			delta = ticks + (1 << 32) - d.mu.last // 32-bit wraparound
		}
	}
	d.mu.primed, d.mu.last = true, ticks
	d.mu.total += time.Duration(delta) * time.Millisecond
	return d.mu.total
}

// parseIOTicks returns field 13 (io_ticks, ms doing I/O) of the
// /proc/diskstats line whose field 3 is name. The fields are: major, minor,
// name, then reads completed, reads merged, sectors read, ms reading, writes
// completed, writes merged, sectors written, ms writing, I/Os in progress,
// ms doing I/O, weighted ms, and newer fields for discards and flushes.
func parseIOTicks(data []byte, name string) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 3 || string(f[2]) != name {
			continue
		}
		if len(f) < 13 {
			return 0, fmt.Errorf("%w: diskstats line for %s has %d fields", ErrInvalid, name, len(f))
		}
		ticks, err := strconv.ParseUint(string(f[12]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: diskstats io_ticks for %s: %w", ErrInvalid, name, err)
		}
		return ticks, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("device: scan diskstats: %w", err)
	}
	return 0, fmt.Errorf("%w: %s is not in diskstats", ErrNoBlockDevice, name)
}
