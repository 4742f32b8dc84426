package tier

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestReinsertRandom drives BlockReinsert with random requests over
// grouped keys of random sizes, a driver that fails some rescue reads,
// some block writes and some invalidations, and a model of the device: it
// checks that every write is one whole aligned data block, that every
// segment to rescue is still intact on the device when its write is
// issued (the driver reads it before writing), that a flash lookup never
// points at overwritten bytes, and the core's invariants after every step.
func TestReinsertRandom(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { reinsertRandom(t, seed) })
	}
}

func reinsertRandom(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 17))
	const bs, nblocks = 8192, 12
	c, _, err := New(Options{RAMBytes: 20000, BlockSize: bs, DeviceSize: bs * nblocks, Alignment: 512,
		MonitorRoom: 0.5, FreqWindow: 400, BlockPolicy: BlockReinsert, Admission: Threshold{Max: 2}}, 9)
	if err != nil {
		t.Fatal(err)
	}
	disk := map[uint32]uint64{} // block -> generation of its last write
	sizes := map[string]int64{}
	key := func() string {
		g := int(rng.ExpFloat64() * 4)
		k := fmt.Sprintf("g%d/s%d", g, rng.IntN(6))
		if _, ok := sizes[k]; !ok {
			sizes[k] = 500 + rng.Int64N(9000) // some split over two blocks
		}
		return k
	}
	intact := func(s Segment) bool {
		for _, ch := range s.Chunks {
			if disk[ch.Block] != ch.Gen {
				return false
			}
		}
		return true
	}
	rescued := 0
	for step := range 20000 {
		now := time.Duration(step) * time.Millisecond
		k := key()
		l := c.Lookup(k, now)
		switch l.Tier {
		case Miss:
			c.Insert(k, sizes[k], nil, l.Token, now)
		case SSD:
			if !intact(l.Seg) {
				t.Fatalf("step %d: lookup of %s points at overwritten chunks %v", step, k, l.Seg.Chunks)
			}
		}
		if step%5 == 0 {
			c.Monitor(now)
		}
		if step%997 == 0 {
			if mw, err := c.Invalidate(fmt.Sprintf("g%d/", rng.IntN(3)), now); err == nil && mw != nil {
				c.MetaDone(mw, nil)
			}
		}
		if w := c.Feed(now, Signals{Now: now}); w != nil {
			if w.Block < MetaBlocks || w.Block >= nblocks || w.Used > bs || w.Used < blockHdrLen {
				t.Fatalf("step %d: write of block %d with %d bytes used", step, w.Block, w.Used)
			}
			end := int64(blockHdrLen)
			for _, r := range w.Records {
				if r.Off != end {
					t.Fatalf("step %d: record %s at %d, want %d", step, r.Key, r.Off, end)
				}
				end += recordLen(len(r.Key), int(r.Len))
			}
			if end != w.Used {
				t.Fatalf("step %d: records end at %d, used %d", step, end, w.Used)
			}
			for _, s := range w.Rescue {
				if !intact(s) {
					t.Fatalf("step %d: rescue of %s from overwritten chunks %v", step, s.Key, s.Chunks)
				}
				c.Rescued(s.Key, nil, rng.IntN(10) > 0)
				rescued++
			}
			disk[w.Block] = w.Gen // the whole block, after the rescue reads
			var werr error
			if rng.IntN(50) == 0 {
				werr = fmt.Errorf("injected")
			}
			c.WriteDone(w, werr, now)
		}
		if err := c.Check(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	if rescued == 0 {
		t.Fatal("no segment was reinserted")
	}
	planned, lost := c.Reinserted()
	t.Logf("reinserted %d (lost %d), blocks written %d", planned, lost, c.Stats().BlocksWritten)
}
