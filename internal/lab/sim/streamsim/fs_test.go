package streamsim

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func testFS(t *testing.T, size int64) *fileSystem {
	t.Helper()
	var o fsOptions
	o.ensureDefaults(1.0/16, 8192)
	fs, err := newFileSystem(size, o)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestFSRandomFiles creates, grows and deletes files at random and checks
// after every step that live files own disjoint, allocated space and that
// the free count matches the bitmap. The seed is logged.
func TestFSRandomFiles(t *testing.T) {
	const seed = 42
	t.Logf("seed %d", seed)
	fs := testFS(t, 1<<30)
	rng := rand.New(rand.NewPCG(seed, 1))
	var live []*file
	var open []*file
	for step := range 3000 {
		switch k := rng.IntN(10); {
		case k < 3 || len(live)+len(open) == 0:
			open = append(open, fs.create())
		case k < 7 && len(open) > 0:
			f := open[rng.IntN(len(open))]
			if _, err := fs.appendTo(f, int64(1+rng.IntN(64<<10))); errors.Is(err, errFull) {
				continue
			} else if err != nil {
				t.Fatal(err)
			}
		case k < 8 && len(open) > 0:
			i := rng.IntN(len(open))
			fs.closeFile(open[i])
			live = append(live, open[i])
			open = append(open[:i], open[i+1:]...)
		case len(live) > 0:
			i := rng.IntN(len(live))
			fs.remove(live[i])
			live = append(live[:i], live[i+1:]...)
		}
		if err := checkFiles(fs, append(append([]*file{}, live...), open...)); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if n := countFree(fs); n != fs.nfree {
			t.Fatalf("step %d: %d free granules in the bitmap, %d counted", step, n, fs.nfree)
		}
	}
}

func countFree(fs *fileSystem) int64 {
	var n int64
	for g := range fs.granules {
		if !fs.isUsed(g) {
			n++
		}
	}
	return n
}

func TestFSFull(t *testing.T) {
	fs := testFS(t, 64<<20)
	f := fs.create()
	if _, err := fs.appendTo(f, 1<<30); !errors.Is(err, errFull) {
		t.Fatalf("appending past the end: %v, want ErrFull", err)
	}
}

// TestFSContiguous: one writer alone gets one extent.
func TestFSContiguous(t *testing.T) {
	fs := testFS(t, 1<<30)
	f := fs.create()
	for range 100 {
		if _, err := fs.appendTo(f, 32<<10); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.extents) != 1 {
		t.Fatalf("%d extents, want 1", len(f.extents))
	}
}

// checkFiles verifies that the files' extents are disjoint, inside the
// data area and allocated.
func checkFiles(fs *fileSystem, files []*file) error {
	var all []extent
	for _, f := range files {
		for _, e := range f.extents {
			if e.off < fs.dataOff || e.off+e.n > fs.dataOff+fs.DataBytes() {
				return fmt.Errorf("file %d extent %+v outside the data area", f.id, e)
			}
			for g := (e.off - fs.dataOff) / fs.o.Granule; g < (e.off+e.n-fs.dataOff+fs.o.Granule-1)/fs.o.Granule; g++ {
				if !fs.isUsed(g) {
					return fmt.Errorf("file %d extent %+v: granule %d free", f.id, e, g)
				}
			}
			all = append(all, e)
		}
	}
	slices.SortFunc(all, func(a, b extent) int { return cmp.Compare(a.off, b.off) })
	for i := 1; i < len(all); i++ {
		if all[i-1].off+all[i-1].n > all[i].off {
			return fmt.Errorf("extents %+v and %+v overlap", all[i-1], all[i])
		}
	}
	return nil
}
