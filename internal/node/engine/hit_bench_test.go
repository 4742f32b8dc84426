package engine

import (
	"context"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/workload"
)

// BenchmarkFlashHit is a flash hit through the request path, on the
// in-memory device (so that the device's own time, a copy here, is not
// the figure): segments of about 0.4 MiB (FlashStream's 2 s segments
// at 1.5 Mbit/s) in 4 MiB blocks. "get" is Get: the bytes copied out into
// the caller's own; "held" is GetHeld then Release, the server's hit path:
// the bytes served from the pooled read buffer; "held-crc" is GetHeld with
// every record's checksum computed on every hit, as before decision 0030.
func BenchmarkFlashHit(b *testing.B) {
	ds := workload.NewDataset(workload.DatasetOptions{Titles: 1, AllRenditions: true, MaxLength: time.Minute,
		SegmentDuration: 2 * time.Second, Seed: 5})
	syn, err := origin.NewSynthetic(ds, origin.SyntheticOptions{Seed: 5})
	if err != nil {
		b.Fatal(err)
	}
	lru, _ := tier.ParseBlockPolicy("lru")
	e := testEngine(b, device.NewMem(64<<20, 4096), syn, func(o *Options) {
		// Every block admitted: the object benchmarked reaches flash.
		o.Tier = tier.Options{RAMBytes: 2 << 20, BlockSize: 4 << 20, MonitorRoom: 0.5, BlockPolicy: lru}
		o.Threshold = 2
	})
	o, seg := flashObject(b, e, syn, 400<<10)
	b.Logf("%s: %d bytes in %d chunks", o, seg.Size, len(seg.Chunks))
	ctx := context.Background()
	for _, c := range []struct {
		name string
		get  func() (Result, error)
	}{
		{"get", func() (Result, error) { return e.Get(ctx, o) }},
		{"held", func() (Result, error) { return e.GetHeld(ctx, o) }},
		{"held-crc", func() (Result, error) { e.flash.ForgetVerified(); return e.GetHeld(ctx, o) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(seg.Size)
			b.ReportAllocs()
			for b.Loop() {
				res, err := c.get()
				if err != nil || res.Tier != tier.SSD || int64(len(res.Data)) != seg.Size {
					b.Fatalf("%v from %v, %d bytes", err, res.Tier, len(res.Data))
				}
				res.Release()
			}
		})
	}
}

// flashObject returns the library's first object of at least size bytes
// that reaches flash in one chunk (the common case: a segment within a
// block), after loading it and then the others until the RAM monitor has
// moved it to flash.
func flashObject(b *testing.B, e *Engine, syn *origin.Synthetic, size int) (ident.Object, tier.Segment) {
	objs := objects(b, syn)
	get := func(o ident.Object) {
		if _, err := e.Get(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
	for _, target := range objs {
		if want, _ := syn.Expected(target); len(want) < size {
			continue
		}
		get(target)
		for i, o := range objs {
			if o != target {
				get(o)
			}
			if i%8 == 0 {
				time.Sleep(20 * time.Millisecond)
			}
			if seg, ok := e.flashSegment(target.Key()); ok {
				if len(seg.Chunks) == 1 {
					return target, seg
				}
				break
			}
		}
	}
	b.Fatal("no object on flash in one chunk")
	return ident.Object{}, tier.Segment{}
}

// TestFlashHitsHeldAndDigested: a flash hit of GetHeld is the object's
// bytes, in a buffer held until Release (counted in the hit memory's
// accounting), with the digest its RAM entry carried to the flash index,
// which is Digest of the bytes served; Get's bytes are the caller's own,
// the buffer returned at once.
func TestFlashHitsHeldAndDigested(t *testing.T) {
	syn := library(t)
	e := testEngine(t, device.NewMem(24*testBlock, 4096), syn, nil)
	ctx := context.Background()
	hits := 0
	for range 20 {
		for _, o := range objects(t, syn) {
			seg, ok := e.flashSegment(o.Key())
			if !ok {
				if _, err := e.Get(ctx, o); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, _ := syn.Expected(o)
			res, err := e.GetHeld(ctx, o)
			if err != nil || res.Tier != tier.SSD || string(res.Data) != string(want) {
				t.Fatalf("%s: %v from %v", o, err, res.Tier)
			}
			if seg.Sum == 0 || res.Sum != Digest(want) || seg.Sum != res.Sum {
				t.Fatalf("%s: index digest %x, result's %x, the bytes' %x", o, seg.Sum, res.Sum, Digest(want))
			}
			if held := e.hits.Stats().HeldBytes; held < int64(len(want)) {
				t.Fatalf("%s: %d bytes held by a hit of %d", o, held, len(want))
			}
			res.Release()
			res.Release()
			if held := e.hits.Stats().HeldBytes; held != 0 {
				t.Fatalf("%s: %d bytes held after Release", o, held)
			}
			if res, err := e.Get(ctx, o); err != nil || res.Tier != tier.SSD || e.hits.Stats().HeldBytes != 0 || res.Sum != Digest(want) {
				t.Fatalf("%s: Get: %v from %v, %d held", o, err, res.Tier, e.hits.Stats().HeldBytes)
			}
			hits++
		}
		if hits > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no flash hit")
}
