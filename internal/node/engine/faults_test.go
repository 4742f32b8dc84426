package engine

import (
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
)

// rounds gets every object n times, 20 ms of fake time apart so that the
// monitor and the feed run; every answer must carry the right bytes
// (get checks them). It counts the tiers that served.
func rounds(t *testing.T, e *Engine, syn *origin.Synthetic, objs []ident.Object, n int) map[tier.Tier]int {
	t.Helper()
	seen := map[tier.Tier]int{}
	for range n {
		for _, o := range objs {
			seen[get(t, e, syn, o)]++
		}
		time.Sleep(20 * time.Millisecond)
	}
	return seen
}

// TestDeviceFaultMatrix: with the flash device failing reads or writes
// (EIO), full (ENOSPC) or tearing its writes, every request is answered
// with the right bytes from RAM or the capacity tier, the failures are
// counted, and when the fault clears flash serves again; after torn
// writes a restart recovers only whole records.
func TestDeviceFaultMatrix(t *testing.T) {
	for _, c := range []struct {
		name   string
		inject func(f *device.Fault)
		// counted is the stat the failures show in.
		counted func(s Stats) uint64
	}{
		{"EIO on reads", func(f *device.Fault) { f.FailAllWith(device.OpRead, syscall.EIO) }, func(s Stats) uint64 { return s.SSD.ReadErrors }},
		{"EIO on writes", func(f *device.Fault) { f.FailAllWith(device.OpWrite, syscall.EIO) }, func(s Stats) uint64 { return s.SSD.WriteErrors }},
		{"ENOSPC", func(f *device.Fault) { f.FailAllWith(device.OpWrite|device.OpTrim, syscall.ENOSPC) }, func(s Stats) uint64 { return s.SSD.WriteErrors }},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				syn := library(t)
				fault := device.NewFault(device.NewMem(24*testBlock, 4096))
				e := testEngine(t, fault, syn, nil)
				objs := objects(t, syn)
				if seen := rounds(t, e, syn, objs, 5); seen[tier.SSD] == 0 {
					t.Fatalf("nothing served from flash before the fault: %v", seen)
				}
				c.inject(fault)
				rounds(t, e, syn, objs, 5)
				if got := c.counted(e.Stats()); got == 0 || fault.Injected() == 0 {
					t.Fatalf("the fault was not exercised: %d counted, %d injected; stats %+v", got, fault.Injected(), e.Stats().SSD)
				}
				fault.Reset()
				written := e.Stats().SSD.BlocksWritten
				if seen := rounds(t, e, syn, objs, 10); seen[tier.SSD] == 0 {
					t.Errorf("flash does not serve after the fault cleared: %v", seen)
				}
				if e.Stats().SSD.BlocksWritten == written {
					t.Errorf("no block written after the fault cleared: %+v", e.Stats().SSD)
				}
			})
		})
	}
}

// TestTornWritesRecover: writes torn mid-block (power lost) fail, are
// counted, never served; a restart over the device recovers only records
// that verify, and every object is served with the right bytes.
func TestTornWritesRecover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		syn := library(t)
		fault := device.NewFault(device.NewMem(24*testBlock, 4096))
		e := testEngine(t, fault, syn, nil)
		objs := objects(t, syn)
		for k := range 24 { // from the first write on, a tear pending in each block in turn
			fault.TearWriteAt(int64(k)*testBlock + testBlock/2)
			rounds(t, e, syn, objs, 1)
		}
		t.Logf("%d writes torn, %d blocks written", fault.Injected(), e.Stats().SSD.BlocksWritten)
		if fault.Injected() == 0 {
			t.Fatal("no write was torn")
		}
		if err := e.Close(); err != nil {
			t.Logf("close after torn writes: %v", err)
		}
		fault.Reset()
		e = testEngine(t, fault, syn, nil)
		if seen := rounds(t, e, syn, objs, 5); seen[tier.SSD] == 0 {
			t.Errorf("flash does not serve after the restart: %v", seen)
		}
	})
}
