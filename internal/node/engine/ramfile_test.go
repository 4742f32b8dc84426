package engine

import (
	"bytes"
	"context"
	"testing"
	"unsafe"

	"github.com/strata-media/strata/internal/core/tier"
)

// With RAMFiles, an object RAM keeps lies in a memory file: a held
// lookup's RAM hit carries the file (Result.RAM) and its bytes; one that
// is not held gets a copy in Go's heap, which outlives the file; an
// object below the files' minimum stays in the heap.
func TestRAMFiles(t *testing.T) {
	syn := library(t)
	e := testEngine(t, nil, syn, func(o *Options) { o.RAMFiles = true; o.Tier.RAMBytes = 8 << 20 })
	objs := objects(t, syn)
	ctx := context.Background()
	inFile, inHeap := 0, 0
	for _, o := range objs[:20] {
		want, _ := syn.Expected(o)
		if res, err := e.GetHeld(ctx, o); err != nil || res.Tier != tier.Miss || !bytes.Equal(res.Data, want) {
			t.Fatalf("%s: miss %v from %v", o, err, res.Tier)
		}
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
	st := e.Stats().RAM.Files
	if st == nil || st.Made < uint64(inFile) || st.Files == 0 {
		t.Fatalf("memory files %+v, %d objects in files, %d in the heap", st, inFile, inHeap)
	}
}
