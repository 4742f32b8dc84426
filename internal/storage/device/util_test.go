package device

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestUtilization(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cases := []struct {
		busy0, busy1 time.Duration
		wall         time.Duration
		want         float64
	}{
		{0, 500 * time.Millisecond, time.Second, 0.5},
		{2 * time.Second, 2*time.Second + 250*time.Millisecond, time.Second, 0.25},
		{0, 0, time.Second, 0},
		{0, 3 * time.Second, time.Second, 1}, // clamped: io_ticks jitter
		{time.Second, 0, time.Second, 0},     // clamped: counter went back
		{0, time.Second, 0, 0},               // empty interval
		{0, time.Second, -time.Second, 0},    // backward interval
		{0, 10 * time.Millisecond, 40 * time.Millisecond, 0.25},
	}
	for _, c := range cases {
		got := Utilization(c.busy0, c.busy1, t0, t0.Add(c.wall))
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Utilization(%v, %v, wall %v) = %v, want %v", c.busy0, c.busy1, c.wall, got, c.want)
		}
	}
}

// fakeBusy is a BusySource with a settable reading.
type fakeBusy struct {
	busy time.Duration
	err  error
}

func (f *fakeBusy) Busy() (time.Duration, error) { return f.busy, f.err }

func TestEpoch(t *testing.T) {
	src := &fakeBusy{}
	e := NewEpoch(src, time.Second)
	t0 := time.Unix(0, 0)
	steps := []struct {
		at, busy  time.Duration
		want      float64
		completed bool
	}{
		{0, 0, 0, false},
		{500 * time.Millisecond, 400 * time.Millisecond, 0, false}, // epoch not over
		{time.Second, 600 * time.Millisecond, 0.6, true},
		{1500 * time.Millisecond, 600 * time.Millisecond, 0.6, true}, // still the last epoch
		{3 * time.Second, 1600 * time.Millisecond, 0.5, true},        // a late reading: a 2 s epoch
		{4 * time.Second, 1600 * time.Millisecond, 0, true},          // idle
		{4500 * time.Millisecond, 0, 0, true},                        // source restarted
		{5500 * time.Millisecond, 900 * time.Millisecond, 0.9, true},
	}
	for i, s := range steps {
		src.busy = s.busy
		got, err := e.Tick(t0.Add(s.at))
		if err != nil || math.Abs(got-s.want) > 1e-12 || e.Completed() != s.completed {
			t.Errorf("step %d: %v, %v, completed %v; want %v, %v", i, got, err, e.Completed(), s.want, s.completed)
		}
	}
	src.err = errors.New("gone")
	if got, err := e.Tick(t0.Add(10 * time.Second)); err == nil || got != 0.9 {
		t.Errorf("failing source: %v, %v", got, err)
	}
	if _, err := NewEpoch(nil, time.Second).Tick(t0); !errors.Is(err, ErrInvalid) {
		t.Errorf("nil source: %v", err)
	}
}

const fakeDiskstats = `   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
   8       0 sda 5000 10 400000 2500 3000 20 300000 4000 0 123456 6600 0 0 0 0 10 5
   8       1 sda1 4000 10 300000 2000 2000 20 200000 3000 0 99999 5000
 259       0 nvme0n1 1 2 3 4 5 6 7 8 0 777 9
`

// fakeTree builds /proc/diskstats and a sysfs with a disk sda holding a
// partition sda1, an nvme0n1 disk, and a device 9:0 absent from diskstats.
func fakeTree(t *testing.T) DiskStatsOptions {
	root := t.TempDir()
	opts := DiskStatsOptions{ProcRoot: filepath.Join(root, "proc"), SysRoot: filepath.Join(root, "sys")}
	mustWrite(t, filepath.Join(opts.ProcRoot, "diskstats"), fakeDiskstats)
	dev := filepath.Join(opts.SysRoot, "devices", "pci0000:00", "block")
	mustWrite(t, filepath.Join(dev, "sda", "sda1", "partition"), "1\n")
	mustWrite(t, filepath.Join(dev, "nvme0n1", "size"), "100\n")
	mustWrite(t, filepath.Join(dev, "md9", "size"), "100\n")
	links := map[string]string{"8:0": "sda", "8:1": "sda/sda1", "259:0": "nvme0n1", "9:0": "md9"}
	for num, target := range links {
		link := filepath.Join(opts.SysRoot, "dev", "block", num)
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../../devices/pci0000:00/block/"+target, link); err != nil {
			t.Fatal(err)
		}
	}
	return opts
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDiskStatsFakeTree(t *testing.T) {
	opts := fakeTree(t)
	cases := []struct {
		major, minor uint32
		name         string
		busy         time.Duration
		err          error
	}{
		{8, 0, "sda", 123456 * time.Millisecond, nil},
		{8, 1, "sda", 123456 * time.Millisecond, nil}, // partition -> whole disk
		{259, 0, "nvme0n1", 777 * time.Millisecond, nil},
		{8, 16, "", 0, ErrNoBlockDevice}, // not in sysfs
		{9, 0, "", 0, ErrNoBlockDevice},  // not in diskstats
	}
	for _, c := range cases {
		d, err := openDiskStatsDev(c.major, c.minor, opts)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%d:%d: %v, want %v", c.major, c.minor, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%d:%d: %v", c.major, c.minor, err)
		}
		busy, err := d.Busy()
		if d.Name() != c.name || busy != c.busy || err != nil {
			t.Errorf("%d:%d: %s busy %v (%v), want %s %v", c.major, c.minor, d.Name(), busy, err, c.name, c.busy)
		}
	}
}

func TestDiskStatsWraparound(t *testing.T) {
	d := &DiskStats{}
	for i, c := range []struct {
		raw  uint64
		want time.Duration
	}{
		{math.MaxUint32 - 100, (math.MaxUint32 - 100) * time.Millisecond},
		{math.MaxUint32, math.MaxUint32 * time.Millisecond},
		{49, (math.MaxUint32 + 50) * time.Millisecond}, // wrapped
		{149, (math.MaxUint32 + 150) * time.Millisecond},
	} {
		if got := d.advanceLocked(c.raw); got != c.want {
			t.Errorf("step %d: %v, want %v", i, got, c.want)
		}
	}
}

func TestParseIOTicks(t *testing.T) {
	cases := []struct {
		data, name string
		want       uint64
		err        error
	}{
		{fakeDiskstats, "sda", 123456, nil},
		{fakeDiskstats, "sda1", 99999, nil},
		{fakeDiskstats, "loop0", 0, nil},
		{fakeDiskstats, "sdb", 0, ErrNoBlockDevice},
		{"8 0 sda 1 2 3\n", "sda", 0, ErrInvalid},
		{"8 0 sda 1 2 3 4 5 6 7 8 9 x 11\n", "sda", 0, ErrInvalid},
		{"", "sda", 0, ErrNoBlockDevice},
	}
	for _, c := range cases {
		got, err := parseIOTicks([]byte(c.data), c.name)
		if got != c.want || !errors.Is(err, c.err) || (c.err == nil && err != nil) {
			t.Errorf("parseIOTicks(%q) = %d, %v; want %d, %v", c.name, got, err, c.want, c.err)
		}
	}
}

func FuzzParseIOTicks(f *testing.F) {
	f.Add([]byte(fakeDiskstats), "sda")
	f.Add([]byte("8 0 sda 1 2 3 4 5 6 7 8 9 10 18446744073709551616\n"), "sda")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		_, _ = parseIOTicks(data, name)
	})
}

func TestDiskStatsNoBlockDevice(t *testing.T) {
	for _, path := range []string{"/proc", "/dev/shm"} {
		if _, err := os.Stat(path); err != nil {
			continue
		}
		if _, err := NewDiskStats(path); !errors.Is(err, ErrNoBlockDevice) {
			t.Errorf("%s: %v, want ErrNoBlockDevice", path, err)
		}
	}
	if _, err := NewDiskStats("/no/such/path"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing path: %v", err)
	}
}

// TestDiskStatsRoot reads the real disk under "/".
func TestDiskStatsRoot(t *testing.T) {
	d, err := NewDiskStats("/")
	if errors.Is(err, ErrNoBlockDevice) {
		t.Skipf("/ has no block device here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join("/sys/block", d.Name())); err != nil {
		t.Errorf("disk %q is not a whole disk in /sys/block: %v", d.Name(), err)
	}
	t0 := time.Now()
	b0, err := d.Busy()
	if err != nil {
		t.Fatal(err)
	}
	syncSomething(t)
	b1, err := d.Busy()
	if err != nil || b1 < b0 {
		t.Fatalf("busy %v then %v (%v)", b0, b1, err)
	}
	u := Utilization(b0, b1, t0, time.Now())
	t.Logf("disk %s: busy %v, utilization over the test %.2f", d.Name(), b1, u)
}

func syncSomething(t *testing.T) {
	f, err := OpenFile(filepath.Join(t.TempDir(), "dev"), FileOptions{Size: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, f)
	for i := range 4 {
		roundTrip(t, f, int64(i)*65536, 65536)
	}
}

func ExampleUtilization() {
	t0 := time.Unix(0, 0)
	fmt.Println(Utilization(10*time.Second, 10*time.Second+300*time.Millisecond, t0, t0.Add(time.Second)))
	// Output: 0.3
}

// Busy reads the diskstats file anew each time through the descriptor it
// keeps: a file longer than one read buffer (a machine with many disks,
// the one asked for last) and its text changing between calls, as the
// kernel's does.
func TestDiskStatsRereadsKeptFile(t *testing.T) {
	opts := fakeTree(t)
	path := filepath.Join(opts.ProcRoot, "diskstats")
	var many strings.Builder
	for i := range 300 {
		fmt.Fprintf(&many, " 253 %5d dm-%d 1 2 3 4 5 6 7 8 0 %d 9\n", i, i, i)
	}
	write := func(ticks int) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0) // in place: the same file
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "%s 259       0 nvme0n1 1 2 3 4 5 6 7 8 0 %d 9\n", many.String(), ticks)
		f.Close()
	}
	write(1000)
	d, err := openDiskStatsDev(259, 0, opts)
	if err != nil {
		t.Fatal(err)
	}
	if many.Len() < 8192 {
		t.Fatalf("the fixture is %d bytes: not longer than the read buffer", many.Len())
	}
	for _, ticks := range []int{1500, 4000} {
		write(ticks)
		if busy, err := d.Busy(); err != nil || busy != time.Duration(ticks)*time.Millisecond {
			t.Fatalf("ticks %d: busy %v, %v", ticks, busy, err)
		}
	}
}
