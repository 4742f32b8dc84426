package engine

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/storage/ramfile"
	"github.com/strata-media/strata/internal/workload"
	"golang.org/x/sys/unix"
)

// With RAMFiles, an object RAM keeps lies in a memory file: a held
// lookup's RAM hit carries the file (Result.RAM) and its bytes; one that
// is not held gets a copy in Go's heap, which outlives the file; an
// object below the files' minimum stays in the heap. A held miss gets the
// file RAM kept the loaded bytes in; one not held, the loaded bytes.
func TestRAMFiles(t *testing.T) {
	syn := library(t)
	e := testEngine(t, nil, syn, func(o *Options) { o.RAMFiles = true; o.Tier.RAMBytes = 8 << 20 })
	objs := objects(t, syn)
	ctx := context.Background()
	inFile, inHeap := 0, 0
	for _, o := range objs[:20] {
		want, _ := syn.Expected(o)
		res, err := e.GetHeld(ctx, o)
		if err != nil || res.Tier != tier.Miss || !bytes.Equal(res.Data, want) {
			t.Fatalf("%s: miss %v from %v", o, err, res.Tier)
		}
		// A held miss answers from the file RAM kept (the heap's copy
		// the load read goes with the load).
		if inRAMFile := len(want) >= 32<<10; (res.RAM != nil) != inRAMFile ||
			(inRAMFile && unsafe.SliceData(res.Data) != unsafe.SliceData(res.RAM.Bytes())) {
			t.Fatalf("%s: a held miss of %d bytes: memory file %v", o, len(want), res.RAM != nil)
		}
		res.Release()
		held, err := e.GetHeld(ctx, o)
		if err != nil || held.Tier != tier.RAM || !bytes.Equal(held.Data, want) {
			t.Fatalf("%s: held hit %v from %v", o, err, held.Tier)
		}
		copied, err := e.Get(ctx, o)
		if err != nil || copied.Tier != tier.RAM || copied.RAM != nil || !bytes.Equal(copied.Data, want) {
			t.Fatalf("%s: hit %v from %v", o, err, copied.Tier)
		}
		switch {
		case len(want) < 32<<10:
			if held.RAM != nil {
				t.Fatalf("%s: %d bytes in a memory file", o, len(want))
			}
			inHeap++
		case held.RAM == nil:
			t.Fatalf("%s: %d bytes not in a memory file", o, len(want))
		default:
			if unsafe.SliceData(held.Data) != unsafe.SliceData(held.RAM.Bytes()) {
				t.Fatalf("%s: the held hit's bytes are not its file's", o)
			}
			if unsafe.SliceData(copied.Data) == unsafe.SliceData(held.Data) {
				t.Fatalf("%s: a hit not held aliases the memory file", o)
			}
			inFile++
		}
		held.Release()
	}
	if inFile == 0 {
		t.Fatal("no object in a memory file")
	}
	for _, o := range objs[20:30] {
		want, _ := syn.Expected(o)
		if res, err := e.Get(ctx, o); err != nil || res.Tier != tier.Miss || res.RAM != nil || !bytes.Equal(res.Data, want) {
			t.Fatalf("%s: a miss not held: %v from %v, memory file %v", o, err, res.Tier, res.RAM != nil)
		}
	}
	st := e.Stats().RAM.Files
	if st == nil || st.Made < uint64(inFile) || st.Files == 0 {
		t.Fatalf("memory files %+v, %d objects in files, %d in the heap", st, inFile, inHeap)
	}
}

// TestRAMFilesMoveOutOfSparseRegions: objects RAM keeps while others
// around them leave keep memory-file regions mostly empty; their hits
// move them into the region being filled (the mover), RAM's entries
// point at the moved bytes, and the hits still answer the objects'.
func TestRAMFilesMoveOutOfSparseRegions(t *testing.T) {
	ds := workload.NewDataset(workload.DatasetOptions{Titles: 2, MaxLength: 4 * time.Minute,
		SegmentDuration: 2 * time.Second, Efficiency: 1, Seed: 3})
	for i := range ds.Titles {
		ds.Titles[i].Renditions = ds.Titles[i].Renditions[:1]
	}
	syn, err := origin.NewSynthetic(ds, origin.SyntheticOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	e := testEngine(t, nil, syn, func(o *Options) { o.RAMFiles, o.RAMHugePages = true, true; o.Tier.RAMBytes = 8 << 20 })
	ctx := context.Background()
	var big []ident.Object
	for _, o := range objects(t, syn) {
		if want, _ := syn.Expected(o); len(want) >= 64<<10 {
			big = append(big, o)
		}
	}
	if len(big) < 60 {
		t.Fatalf("%d objects of 64 KiB and more", len(big))
	}
	// Every object once (RAM evicts as it goes), every sixth one hit
	// again each round, so that RAM keeps those, spread over regions.
	kept := func() []ident.Object {
		var k []ident.Object
		for i, o := range big {
			if i%6 == 0 {
				k = append(k, o)
			}
		}
		return k
	}()
	for round := range 3 {
		for i, o := range big {
			if res, err := e.Get(ctx, o); err != nil {
				t.Fatalf("round %d, %s: %v", round, o, err)
			} else if want, _ := syn.Expected(o); !bytes.Equal(res.Data, want) {
				t.Fatalf("round %d, %s: other bytes", round, o)
			}
			if i%6 == 5 {
				for _, k := range kept[:min(len(kept), i/6+1)] {
					e.Get(ctx, k) //nolint:errcheck // keeps it in RAM
				}
			}
		}
		runtime.GC()
	}
	for stop := time.Now().Add(10 * time.Second); e.Stats().RAM.Files.Moved == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(stop) {
			t.Fatalf("no object moved: %+v", e.Stats().RAM.Files)
		}
		for _, k := range kept {
			e.Get(ctx, k) //nolint:errcheck
		}
		runtime.GC()
	}
	for _, k := range kept {
		want, _ := syn.Expected(k)
		res, err := e.GetHeld(ctx, k)
		if err != nil || !bytes.Equal(res.Data, want) {
			t.Fatalf("%s after moves: %v, equal %v", k, err, bytes.Equal(res.Data, want))
		}
		res.Release()
	}
	t.Logf("memory files: %+v", *e.Stats().RAM.Files)
}

// TestRAMTmpfsDirectoryChecked: an operator's directory for RAM's files
// that is not on a tmpfs fails the start, before flash is opened.
func TestRAMTmpfsDirectoryChecked(t *testing.T) {
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Type == 0x01021994 {
		t.Skip("the test directory is on a tmpfs")
	}
	o := Options{Tier: tier.Options{RAMBytes: 1 << 20, BlockSize: testBlock}, RAMFiles: true, RAMTmpfs: dir,
		Logger: slog.New(slog.DiscardHandler)}
	if _, err := New(o, nil, nil); err == nil || !strings.Contains(err.Error(), "not on a tmpfs") {
		t.Fatalf("New with RAM's files in %s: %v", dir, err)
	}
	o.RAMTmpfs = ramfile.TmpfsOff
	e, err := New(o, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if fs, ok := e.RAMFiles(); !ok || fs.Backing != "memfd" {
		t.Fatalf("RAM's files %+v, %v with tmpfs off", fs, ok)
	}
}

// When RAM's memory files are at their limit, held by answers in flight
// after RAM let their objects go, a load is answered but not kept (kept
// in Go's heap instead, RAM would take the node past its memory budget);
// once the answers let go, loads are kept again.
func TestRAMFilesFullNotKept(t *testing.T) {
	e := testEngine(t, nil, nil, func(o *Options) { o.RAMFiles = true; o.Tier.RAMBytes = 4 << 20 })
	ctx := context.Background()
	obj := bytes.Repeat([]byte("x"), 1<<20)
	load := func(context.Context) ([]byte, error) { return append([]byte(nil), obj...), nil }
	var held []Result
	for i := 0; i < 64 && e.Stats().RAM.NotKept == 0; i++ {
		res, err := e.GetWithHeld(ctx, "k"+strconv.Itoa(i), load)
		if err != nil || !bytes.Equal(res.Data, obj) {
			t.Fatalf("load %d: %v", i, err)
		}
		held = append(held, res) // an answer to a slow client
	}
	st := e.Stats().RAM
	if st.NotKept != 1 || st.Files == nil || st.Files.Bytes+1<<20 <= st.Files.LimitBytes {
		t.Fatalf("after %d loads held: not kept %d, files %+v", len(held), st.NotKept, st.Files)
	}
	last := "k" + strconv.Itoa(len(held)-1)
	if f := e.Find(last); f.Tier != tier.Miss {
		t.Fatalf("the load not kept is in %v", f.Tier)
	}
	for _, r := range held {
		r.Release()
	}
	held = nil
	for i := 0; i < 3; i++ {
		runtime.GC() // the files' cleanups run after a collection
		time.Sleep(10 * time.Millisecond)
	}
	res, err := e.GetWithHeld(ctx, last, load)
	if err != nil || res.RAM == nil || e.Stats().RAM.NotKept != 1 {
		t.Fatalf("after the answers let go: %v, memory file %v, not kept %d", err, res.RAM != nil, e.Stats().RAM.NotKept)
	}
	res.Release()
	if f := e.Find(last); f.Tier != tier.RAM {
		t.Fatalf("the load kept is in %v", f.Tier)
	}
}
