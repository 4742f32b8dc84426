package ramfile

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOwnFileNotReopenedWritable: a published object's file cannot be
// changed through another path: reopening its descriptor for writing
// through /proc (what any process of the same user, or root, may do)
// must fail, as a sealed memory file's write does.
func TestOwnFileNotReopenedWritable(t *testing.T) {
	dirs := []string{TmpfsAuto, TmpfsOff}
	if d := os.Getenv("RV_TMPFS_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	for _, backing := range dirs {
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
