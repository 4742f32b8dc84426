package device

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

func openTestFile(t *testing.T, opts FileOptions) *File {
	t.Helper()
	f, err := OpenFile(filepath.Join(t.TempDir(), "dev"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func pattern(n int, seed byte) []byte {
	p := AlignedBuffer(n, 4096)
	for i := range min(n, 256) {
		p[i] = seed + byte(i*7)
	}
	for done := min(n, 256); done < n; done *= 2 {
		copy(p[done:], p[:done]) // the pattern repeats every 256 bytes
	}
	return p
}

func TestFileDirectRoundTrip(t *testing.T) {
	f := openTestFile(t, FileOptions{Size: 1 << 20})
	if !f.Direct() {
		t.Logf("O_DIRECT refused by the file system under %s; testing buffered I/O", f.Path())
	}
	if f.IsBlockDevice() || f.Size() != 1<<20 || f.Alignment() < 4096 {
		t.Fatalf("block=%v size=%d align=%d", f.IsBlockDevice(), f.Size(), f.Alignment())
	}
	roundTrip(t, f, 3*int64(f.Alignment()), 2*f.Alignment())
}

func roundTrip(t *testing.T, d Device, off int64, n int) {
	t.Helper()
	if err := checkRoundTrip(d, off, n); err != nil {
		t.Fatal(err)
	}
}

// checkRoundTrip writes a pattern at off, syncs and reads it back. It can
// run in any goroutine.
func checkRoundTrip(d Device, off int64, n int) error {
	want := pattern(n, byte(off/4096))
	if got, err := d.WriteAt(want, off); err != nil || got != n {
		return fmt.Errorf("WriteAt(%d bytes at %d) = %d, %w", n, off, got, err)
	}
	if err := d.Sync(); err != nil {
		return err
	}
	got := AlignedBuffer(n, d.Alignment())
	if m, err := d.ReadAt(got, off); err != nil || m != n {
		return fmt.Errorf("ReadAt(%d bytes at %d) = %d, %w", n, off, m, err)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("read back different bytes at %d", off)
	}
	return nil
}

func TestFileRejectsUnaligned(t *testing.T) {
	f := openTestFile(t, FileOptions{Size: 64 << 10})
	a := f.Alignment()
	buf := AlignedBuffer(2*a, a)
	cases := []struct {
		name string
		p    []byte
		off  int64
		want error
	}{
		{"offset", buf[:a], 512, ErrUnaligned},
		{"length", buf[:a-512], 0, ErrUnaligned},
		{"negative", buf[:a], -int64(a), ErrOutOfRange},
		{"past end", buf[:a], f.Size(), ErrOutOfRange},
		{"straddles end", buf[:2*a], f.Size() - int64(a), ErrOutOfRange},
	}
	if f.Direct() {
		cases = append(cases, struct {
			name string
			p    []byte
			off  int64
			want error
		}{"buffer address", buf[1 : a+1], 0, ErrUnaligned})
	}
	for _, c := range cases {
		if _, err := f.WriteAt(c.p, c.off); !errors.Is(err, c.want) {
			t.Errorf("WriteAt %s: %v, want %v", c.name, err, c.want)
		}
		if _, err := f.ReadAt(c.p, c.off); !errors.Is(err, c.want) {
			t.Errorf("ReadAt %s: %v, want %v", c.name, err, c.want)
		}
	}
	if err := f.Trim(512, int64(a)); !errors.Is(err, ErrUnaligned) {
		t.Errorf("Trim unaligned: %v", err)
	}
}

func TestFileSparseSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sparse")
	const size = 1 << 30
	f, err := OpenFile(path, FileOptions{Size: size})
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Size != size || f.Size() != size {
		t.Fatalf("file size %d, device size %d, want %d", st.Size, f.Size(), size)
	}
	if used := st.Blocks * 512; used > 1<<20 {
		t.Errorf("new 1 GiB file uses %d bytes on disk; want sparse", used)
	}
	mustClose(t, f)
	reopenSizes(t, path, size)
}

// reopenSizes checks that Size 0 keeps the existing size, a smaller Size
// neither shrinks the file nor exposes more than asked, and a larger one
// extends it.
func reopenSizes(t *testing.T, path string, size int64) {
	for _, c := range []struct{ opt, dev, file int64 }{
		{0, size, size},
		{size / 2, size / 2, size},
		{2 * size, 2 * size, 2 * size},
		{4095, 4096, 2 * size},
	} {
		f, err := OpenFile(path, FileOptions{Size: c.opt})
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if f.Size() != c.dev || fi.Size() != c.file {
			t.Errorf("Size %d: device %d file %d, want %d %d", c.opt, f.Size(), fi.Size(), c.dev, c.file)
		}
		mustClose(t, f)
	}
}

func mustClose(t *testing.T, d Device) {
	t.Helper()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestFileBadOptions(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenFile(filepath.Join(dir, "x"), FileOptions{Size: -1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative size: %v", err)
	}
	if _, err := OpenFile(filepath.Join(dir, "x"), FileOptions{Size: 1 << 63 / 3 * 2}); !errors.Is(err, ErrInvalid) {
		t.Errorf("huge size: %v", err)
	}
	if _, err := OpenFile(dir, FileOptions{}); err == nil {
		t.Error("opening a directory succeeded")
	}
	if _, err := OpenFile(filepath.Join(dir, "missing", "x"), FileOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing parent: %v", err)
	}
}

func TestFileTrimReadsZeros(t *testing.T) {
	f := openTestFile(t, FileOptions{Size: 1 << 20})
	a := int64(f.Alignment())
	data := pattern(int(4*a), 1)
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	err := f.Trim(a, 2*a)
	if errors.Is(err, ErrTrimUnsupported) {
		t.Skipf("file system refuses hole punching: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	got := AlignedBuffer(int(4*a), int(a))
	if _, err := f.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(data)
	clear(want[a : 3*a])
	if !bytes.Equal(got, want) {
		t.Fatal("trimmed range does not read zeros, or trim spilled outside it")
	}
	if err := f.Trim(0, 0); err != nil {
		t.Errorf("empty trim: %v", err)
	}
}

func TestFileLifetimeHint(t *testing.T) {
	f := openTestFile(t, FileOptions{Size: 1 << 20})
	if r := f.HintReport(); !strings.Contains(r, "no lifetime hint") {
		t.Errorf("initial report %q", r)
	}
	for l := LifetimeNotSet; l <= LifetimeExtreme; l++ {
		err := f.SetLifetime(l)
		r := f.HintReport()
		t.Logf("SetLifetime(%s): %v; report %q", l, err, r)
		if err != nil && !errors.Is(err, ErrHintUnsupported) {
			t.Fatalf("error %v does not wrap ErrHintUnsupported", err)
		}
		if !strings.Contains(r, l.String()) || strings.Contains(r, "accepted") != (err == nil) {
			t.Errorf("report %q does not match error %v", r, err)
		}
	}
	err := f.SetLifetime(Lifetime(9))
	if !errors.Is(err, ErrHintUnsupported) || !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown class: %v", err)
	}
}

func TestFileBufferedFallback(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	f := openTestFile(t, FileOptions{Size: 1 << 20, NoDirect: true, Logger: log})
	if f.Direct() {
		t.Fatal("NoDirect file reports Direct")
	}
	if logs.Len() != 0 {
		t.Errorf("explicit NoDirect logged a warning: %s", logs.String())
	}
	// Buffered I/O does not need an aligned buffer, only aligned offsets.
	p := make([]byte, 4097)[1:]
	p[0] = 42
	if _, err := f.WriteAt(p, 4096); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, f, 8192, 4096)
}

// TestFileDirectRefused simulates a file system that refuses O_DIRECT with
// EINVAL at open.
func TestFileDirectRefused(t *testing.T) {
	sysOpen = func(path string, flags int, perm uint32) (int, error) {
		if flags&unix.O_DIRECT != 0 {
			return -1, unix.EINVAL
		}
		return unix.Open(path, flags, perm)
	}
	defer func() { sysOpen = unix.Open }()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	f := openTestFile(t, FileOptions{Size: 1 << 20, Logger: log})
	if f.Direct() || !strings.Contains(logs.String(), "O_DIRECT refused") {
		t.Fatalf("direct=%v, log %q", f.Direct(), logs.String())
	}
	roundTrip(t, f, 0, 4096)
}

// TestFileTmpfs opens a file on tmpfs, which refuses O_DIRECT before Linux
// 6.6 and accepts it since.
func TestFileTmpfs(t *testing.T) {
	dir, err := os.MkdirTemp("/dev/shm", "strata-device-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	var logs bytes.Buffer
	f, err := OpenFile(filepath.Join(dir, "dev"), FileOptions{Size: 1 << 20, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, f)
	t.Logf("tmpfs: direct=%v, log %q", f.Direct(), logs.String())
	if f.Direct() == strings.Contains(logs.String(), "O_DIRECT refused") {
		t.Errorf("direct=%v but log %q", f.Direct(), logs.String())
	}
	roundTrip(t, f, 0, 4096)
}

func TestFileClosed(t *testing.T) {
	f := openTestFile(t, FileOptions{Size: 1 << 20})
	mustClose(t, f)
	buf := AlignedBuffer(4096, 4096)
	checks := map[string]error{
		"Close":       f.Close(),
		"Sync":        f.Sync(),
		"Trim":        f.Trim(0, 4096),
		"SetLifetime": f.SetLifetime(LifetimeLong),
	}
	_, checks["ReadAt"] = f.ReadAt(buf, 0)
	_, checks["WriteAt"] = f.WriteAt(buf, 0)
	for name, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
}

func TestFileConcurrent(t *testing.T) {
	f := openTestFile(t, FileOptions{Size: 1 << 20})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 8 {
				off := int64(i*8+j) * 4096 * 2
				if err := checkRoundTrip(f, off, 8192); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

// TestBlockGeometryRoot reads the size and logical block size of the disk
// under "/" through a read-only descriptor and compares them with sysfs.
func TestBlockGeometryRoot(t *testing.T) {
	ds, err := NewDiskStats("/")
	if err != nil {
		t.Skipf("no block device under /: %v", err)
	}
	fd, err := unix.Open("/dev/"+ds.Name(), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("cannot open the disk: %v", err)
	}
	defer unix.Close(fd)
	size, lbs, err := blockGeometry(fd)
	if err != nil {
		t.Fatal(err)
	}
	sectors := readSysInt(t, "/sys/block/"+ds.Name()+"/size")
	want := readSysInt(t, "/sys/block/"+ds.Name()+"/queue/logical_block_size")
	if size != sectors*512 || int64(lbs) != want {
		t.Errorf("%s: size %d lbs %d; sysfs says %d and %d", ds.Name(), size, lbs, sectors*512, want)
	}
}

func readSysInt(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skip(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFileLoopDevice exercises the block device path on a loop device. It
// attaches one with losetup, so it runs only as root with
// STRATA_TEST_LOOP=1.
func TestFileLoopDevice(t *testing.T) {
	if os.Getenv("STRATA_TEST_LOOP") != "1" || os.Geteuid() != 0 {
		t.Skip("set STRATA_TEST_LOOP=1 and run as root to attach a loop device")
	}
	backing := filepath.Join(t.TempDir(), "backing")
	if err := os.WriteFile(backing, nil, 0o600); err != nil || os.Truncate(backing, 16<<20) != nil {
		t.Fatal("cannot create backing file")
	}
	out, err := exec.Command("losetup", "--find", "--show", backing).Output()
	if err != nil {
		t.Skipf("losetup: %v", err)
	}
	loop := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("losetup", "-d", loop).Run() })
	f, err := OpenFile(loop, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, f)
	t.Logf("%s: block=%v direct=%v size=%d align=%d", loop, f.IsBlockDevice(), f.Direct(), f.Size(), f.Alignment())
	if !f.IsBlockDevice() || f.Size() != 16<<20 {
		t.Fatalf("block=%v size=%d", f.IsBlockDevice(), f.Size())
	}
	roundTrip(t, f, 8192, 8192)
	t.Logf("discard: %v; hint: %v (%s)", f.Trim(8192, 8192), f.SetLifetime(LifetimeShort), f.HintReport())
	if _, err := OpenFile(loop, FileOptions{Size: 32 << 20}); !errors.Is(err, ErrInvalid) {
		t.Errorf("oversize: %v", err)
	}
}

func TestHintReportRefused(t *testing.T) {
	got := hintReport(LifetimeLong, unix.EINVAL)
	if want := "F_SET_RW_HINT refused (long): EINVAL (invalid argument)"; got != want {
		t.Errorf("hintReport = %q, want %q", got, want)
	}
}
