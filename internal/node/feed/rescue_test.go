package feed

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/device"
)

// With BlockReinsert and flash full, the feed reads the victim's still-hot
// segment back from the device before overwriting the victim, and the
// segment reaches flash again, intact, first in the next block.
func TestFeedReinsertsFromVictim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Three data blocks, three segments a block.
		r := newRig(t, device.NewMem((tier.MetaBlocks+3)*testBlock, 4096), tier.Options{BlockPolicy: tier.BlockReinsert}, Options{})
		data := map[string][]byte{}
		stage := func(names ...string) {
			for _, k := range names {
				data[k] = payload(21600, byte(len(data)))
				r.stage(t, k, data[k])
			}
			synctest.Wait()
		}
		lookup := func(k string, n int) {
			for range n {
				r.mu.Lock()
				l := r.c.Lookup(k, 0)
				r.mu.Unlock()
				if l.Tier != tier.SSD {
					t.Fatalf("%s: %s, want ssd", k, l.Tier)
				}
			}
		}
		stage("a1", "a2", "a3", "b1", "b2", "b3", "c1", "c2", "c3")
		if n := len(r.writes()); n != 3 {
			t.Fatalf("%d block writes, want 3", n)
		}
		// Block a is worth least, and a1 was read since written.
		lookup("a1", 1)
		lookup("b1", 2)
		lookup("c1", 2)
		lookup("c2", 2)
		stage("d1", "d2", "d3") // replaces block a; a1 is read back first
		if _, ok := r.onFlash(t, "a2"); ok {
			t.Fatal("a2 survived its block's replacement")
		}
		// a1 waits, read back, ahead of the ring: the next block packs it
		// first, with e1 and e2.
		stage("e1", "e2")
		if n := len(r.writes()); n != 5 {
			t.Fatalf("%d block writes, want 5", n)
		}
		r.wantOnFlash(t, "a1", data["a1"])
		r.wantOnFlash(t, "e1", data["e1"])
		planned, lost := r.c.Reinserted()
		if planned == 0 || lost != 0 {
			t.Fatalf("reinserted %d, lost %d", planned, lost)
		}
		for i, err := range r.writes() {
			if err != nil {
				t.Fatal(fmt.Errorf("write %d: %w", i, err))
			}
		}
	})
}
