package ramfile

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOwnFileNotReopenedWritable: a published object's file cannot be
// changed through another path: reopening its descriptor for writing
// through /proc (what any process of the same user, or root, may do)
// must fail, as a sealed memory file's write does.
func TestOwnFileNotReopenedWritable(t *testing.T) {
	for _, backing := range []string{TmpfsAuto, TmpfsOff} {
		t.Run(backing, func(t *testing.T) {
			a := newArena(t, Options{Live: 16 << 20, Tmpfs: backing})
			defer a.Close()
			data := object(100<<10, 1)
			f, ok := a.Put(data)
			if !ok {
				t.Fatal("not put")
			}
			fd := f.Range(0, f.Len()).FD()
			w, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDWR|unix.O_CLOEXEC, 0)
			if err == nil {
				defer unix.Close(w)
				unix.Pwrite(w, []byte("CHANGED"), 0)
				if !bytes.Equal(f.Bytes(), data) {
					t.Errorf("backing %q: object changed through /proc reopen: %q", a.Stats().Backing, f.Bytes()[:7])
				}
			} else {
				t.Logf("backing %q: reopen for write refused: %v", a.Stats().Backing, err)
			}
		})
	}
}

// TestOwnFilesFreed: a tmpfs of the arena's own gives its blocks back as
// its files close, immutable or not.
func TestOwnFilesFreed(t *testing.T) {
	a := newArena(t, Options{Live: 64 << 20})
	defer a.Close()
	if a.dir < 0 {
		t.Skip(a.Stats().Backing)
	}
	used := func() int64 {
		var st unix.Statfs_t
		if err := unix.Fstatfs(a.dir, &st); err != nil {
			t.Fatal(err)
		}
		return int64(st.Blocks-st.Bfree) * st.Bsize
	}
	base := used()
	var fs []*File
	for i := range 40 {
		f, ok := a.Put(object(1<<20, uint64(i)))
		if !ok {
			t.Fatalf("put %d refused: %+v", i, a.Stats())
		}
		fs = append(fs, f)
	}
	if u := used() - base; u < 40<<20 {
		t.Fatalf("%d bytes used for 40 MiB", u)
	}
	for _, f := range fs {
		f.Close()
	}
	if u := used() - base; u != 0 {
		t.Fatalf("%d bytes still used after the closes", u)
	}
}

// TestFoliosBounded: a tmpfs file's folios are at most MaxFolio, so that a
// stalled client holds at most that beyond the bytes it is owed. Read
// from the kernel's counts of shmem folios allocated by size
// (/sys/kernel/mm/transparent_hugepage/hugepages-*kB/stats/shmem_alloc,
// Linux 6.10 and later): none between MaxFolio and the PMD size while the
// object is written (2 MiB ones are left out: other tests' collapses make
// them).
func TestFoliosBounded(t *testing.T) {
	a := newArena(t, Options{Live: 64 << 20})
	defer a.Close()
	if a.dir < 0 {
		t.Skip(a.Stats().Backing)
	}
	counts := func() (small, large uint64) {
		dirs, _ := filepath.Glob("/sys/kernel/mm/transparent_hugepage/hugepages-*kB")
		for _, d := range dirs {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(d), "hugepages-"), "kB"))
			b, err2 := os.ReadFile(filepath.Join(d, "stats", "shmem_alloc"))
			n, err3 := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
			if err != nil || err2 != nil || err3 != nil {
				continue
			}
			switch {
			case kb<<10 <= MaxFolio:
				small += n
			case kb<<10 < RegionSize:
				large += n
			}
		}
		return small, large
	}
	small0, large0 := counts()
	var fs []*File
	for i := range 8 {
		f, ok := a.Put(object(3<<20+5000, uint64(i)))
		if !ok {
			t.Fatal("not put")
		}
		fs = append(fs, f)
	}
	small1, large1 := counts()
	t.Logf("shmem folios allocated: %d of up to %d bytes, %d larger", small1-small0, MaxFolio, large1-large0)
	if large1 != large0 {
		t.Fatalf("%d folios larger than %d bytes", large1-large0, MaxFolio)
	}
	if !bytes.Equal(fs[7].Bytes(), object(3<<20+5000, 7)) {
		t.Fatal("an object written in pieces is not its bytes")
	}
	runtime.KeepAlive(fs)
}
