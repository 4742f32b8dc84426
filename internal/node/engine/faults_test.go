package engine

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/strata-media/strata/internal/core/health"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/feed"
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
// (EIO), full (ENOSPC), stalling or tearing its writes, every request is
// answered with the right bytes from RAM or the capacity tier, the
// failures are counted, the device is marked degraded, and when the fault
// clears a probe after the backoff marks it healthy and flash serves
// again.
func TestDeviceFaultMatrix(t *testing.T) {
	for _, c := range []struct {
		name   string
		inject func(f *device.Fault)
		// counted is the stat the failures show in.
		counted func(s Stats) uint64
		op      string // the degraded operation
	}{
		{"EIO on reads", func(f *device.Fault) { f.FailAllWith(device.OpRead, syscall.EIO) }, func(s Stats) uint64 { return s.SSD.ReadErrors }, "read"},
		{"EIO on writes", func(f *device.Fault) { f.FailAllWith(device.OpWrite, syscall.EIO) }, func(s Stats) uint64 { return s.SSD.WriteErrors }, "write"},
		{"ENOSPC", func(f *device.Fault) { f.FailAllWith(device.OpWrite|device.OpTrim, syscall.ENOSPC) }, func(s Stats) uint64 { return s.SSD.WriteErrors }, "write"},
		{"torn writes", func(f *device.Fault) { f.TearWrites() }, func(s Stats) uint64 { return s.SSD.WriteErrors }, "write"},
		{"stall", func(f *device.Fault) { f.SetLatency(device.OpAll, 5*time.Second) }, func(s Stats) uint64 { return s.SSD.Health.Read.Errors["timeout"] }, "read"},
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
				// Rounds until the op is degraded: how many writes the feed
				// issues per round depends on the goroutines' interleaving.
				for i := 0; i < 50 && !degradedOp(e.Stats().SSD.Health, c.op); i++ {
					rounds(t, e, syn, objs, 1)
				}
				s := e.Stats()
				if got := c.counted(s); got == 0 || fault.Injected() == 0 && c.name != "stall" {
					t.Fatalf("the fault was not exercised: %d counted, %d injected; stats %+v", got, fault.Injected(), s.SSD)
				}
				if h := s.SSD.Health; !h.Degraded || !degradedOp(h, c.op) {
					t.Fatalf("%s not marked degraded: %+v", c.op, h)
				}
				fault.Reset()
				time.Sleep(40 * time.Second) // past the longest backoff
				written := e.Stats().SSD.BlocksWritten
				if seen := rounds(t, e, syn, objs, 10); seen[tier.SSD] == 0 {
					t.Errorf("flash does not serve after the fault cleared: %v", seen)
				}
				// How soon RAM evicts something the policy admits depends
				// on the goroutines' interleaving: more rounds, bounded.
				for i := 0; i < 50 && e.Stats().SSD.BlocksWritten == written; i++ {
					rounds(t, e, syn, objs, 1)
				}
				if e.Stats().SSD.BlocksWritten == written {
					t.Errorf("no block written after the fault cleared: %+v", e.Stats().SSD)
				}
				if h := e.Stats().SSD.Health; h.Degraded || h.Read.Recoveries+h.Write.Recoveries == 0 {
					t.Errorf("not recovered after the fault cleared: %+v", h)
				}
			})
		})
	}
}

// TestIdleDeviceRecovers: a device whose reads were degraded recovers
// once the fault clears though no request asks for what it holds: the
// feed probes it.
func TestIdleDeviceRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fault, syn, objs := warmFaulty(t, nil)
		fault.FailAllWith(device.OpRead, syscall.EIO)
		for i := 0; i < 50 && !degradedOp(e.Stats().SSD.Health, "read"); i++ {
			rounds(t, e, syn, objs, 1)
		}
		if h, _ := e.Health(); !h.Read.Degraded {
			t.Fatalf("reads not degraded: %+v", h)
		}
		time.Sleep(10 * time.Second) // idle: the feed's probes fail
		if h, _ := e.Health(); !h.Read.Degraded || h.Read.Probes == 0 {
			t.Fatalf("no failed probe while the fault lasts: %+v", h.Read)
		}
		fault.Reset()
		time.Sleep(40 * time.Second) // idle, past the longest backoff
		if h, _ := e.Health(); h.Degraded || h.Read.Recoveries != 1 {
			t.Errorf("not recovered without requests: %+v", h)
		}
	})
}

// degradedOp reports whether h has op ("read", "write") degraded.
func degradedOp(h *feed.DeviceReport, op string) bool {
	if op == "read" {
		return h.Read.Degraded
	}
	return h.Write.Degraded
}

// TestStalledReadIsAbandoned: a flash read that stalls past the deadline
// is answered from the capacity tier at the deadline, counted late while
// the device still holds it, and its buffer is dropped when it returns:
// the late bytes reach nobody, even when the device writes garbage into
// them on its way out.
func TestStalledReadIsAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fault, syn, objs := warmFaulty(t, nil)
		var o ident.Object
		var seg tier.Segment
		for _, obj := range objs {
			if s, ok := e.flashSegment(obj.Key()); ok {
				o, seg = obj, s
				break
			}
		}
		if seg.Key == "" {
			t.Fatal("nothing on flash")
		}
		release := make(chan struct{})
		fault.SetSleep(func(time.Duration) { <-release })
		fault.SetLatency(device.OpRead, time.Hour)
		fault.CorruptReads(0, fault.Size()) // whatever the late read returns is wrong
		start := time.Now()
		if tr := get(t, e, syn, o); tr != tier.Miss {
			t.Fatalf("a stalled read served from %s", tr)
		}
		if waited := time.Since(start); waited != DefaultFlashReadDeadline {
			t.Errorf("the request waited %v, want the deadline %v", waited, DefaultFlashReadDeadline)
		}
		if h, _ := e.Health(); h.LateReads != 1 || h.Read.Errors["timeout"] != 1 {
			t.Fatalf("late read not counted: %+v", h)
		}
		if _, still := e.flashSegment(o.Key()); !still {
			t.Error("a late read dropped the flash copy")
		}
		close(release)
		synctest.Wait()
		if h, _ := e.Health(); h.LateReads != 0 {
			t.Errorf("late read not finished: %+v", h)
		}
		fault.Reset()
		if tr := get(t, e, syn, o); tr != tier.SSD {
			t.Errorf("after the stall, served from %s", tr)
		}
	})
}

// TestLastResortReadsASlowCopy: a flash copy whose read passes the
// deadline is a miss for FindHeld (the capacity tier answers) but stays;
// FindLastResort, for a caller whose capacity tier failed, waits for the
// slow device and returns its verified bytes, also while reads are
// skipped because too many are late; a key held nowhere is still a miss.
func TestLastResortReadsASlowCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fault, syn, objs := warmFaulty(t, nil)
		o := onFlash(t, e, objs, 1)[0]
		fault.SetLatency(device.OpRead, 4*DefaultFlashReadDeadline)
		f := e.FindHeld(context.Background(), o.Key())
		f.Release()
		if f.Tier != tier.Miss {
			t.Fatalf("a read past the deadline served from %s", f.Tier)
		}
		want, _ := syn.Expected(o)
		lastResort := func(when string) {
			t.Helper()
			f := e.FindLastResort(context.Background(), o.Key())
			defer f.Release()
			if f.Tier != tier.SSD || !bytes.Equal(f.Data, want) {
				t.Fatalf("last resort, %s: tier %s, %d bytes, want the flash copy's %d", when, f.Tier, len(f.Data), len(want))
			}
		}
		lastResort("a read past the deadline")
		// Reads that keep timing out degrade the device's reads: later
		// ones are skipped, the copy is not read at all.
		for i := 0; i < 50 && e.Stats().SSD.Health.SkippedReads == 0; i++ {
			f := e.FindHeld(context.Background(), o.Key())
			f.Release()
		}
		if h, _ := e.Health(); h.SkippedReads == 0 {
			t.Fatalf("flash reads never skipped: %+v", h)
		}
		lastResort("reads skipped")
		if _, still := e.flashSegment(o.Key()); !still {
			t.Error("the slow reads dropped the flash copy")
		}
		if f := e.FindLastResort(context.Background(), "v/nowhere"); f.Tier != tier.Miss || f.Data != nil {
			t.Errorf("a key held nowhere: tier %s", f.Tier)
		}
		synctest.Wait()
	})
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
		// From the first write on, every write torn until one is (the
		// library fits on flash: once it is there, nothing is written)...
		fault.TearWrites()
		for i := 0; i < 50 && fault.Injected() == 0; i++ {
			rounds(t, e, syn, objs, 1)
		}
		fault.Reset()
		time.Sleep(2 * time.Second) // past the write probe's backoff
		// ...then a tear pending in each block in turn, which the feed
		// meets or not depending on which blocks it writes.
		for k := range 24 {
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

// TestLateReadsCapped: with a device that hangs and a threshold too high
// to mark it degraded, at most MaxLateReads reads are left on it; the
// next requests do not wait for the deadline.
func TestLateReadsCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fault, syn, objs := warmFaulty(t, func(o *Options) { o.Health.FailAfter = 1000; o.MaxLateReads = 4 })
		onFlash := onFlash(t, e, objs, 6)
		release := make(chan struct{})
		fault.SetSleep(func(time.Duration) { <-release })
		fault.SetLatency(device.OpRead, time.Hour)
		for i, o := range onFlash[:6] {
			start := time.Now()
			get(t, e, syn, o)
			want := DefaultFlashReadDeadline
			if i >= 4 {
				want = 0 // skipped: 4 reads are late already
			}
			if waited := time.Since(start); waited != want {
				t.Errorf("request %d waited %v, want %v", i, waited, want)
			}
		}
		if h, _ := e.Health(); h.LateReads != 4 || h.SkippedReads != 2 {
			t.Errorf("late %d skipped %d, want 4 and 2", h.LateReads, h.SkippedReads)
		}
		close(release)
		synctest.Wait()
		if h, _ := e.Health(); h.LateReads != 0 {
			t.Errorf("late reads left: %d", h.LateReads)
		}
	})
}

// flashResident fills e's flash and returns a segment on it (not in RAM).
func flashResident(b *testing.B, e *Engine, syn *origin.Synthetic) tier.Segment {
	objs := objects(b, syn)
	for range 5 {
		for _, o := range objs {
			if _, err := e.Get(context.Background(), o); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(30 * time.Millisecond)
	}
	for _, o := range objs {
		if seg, ok := e.flashSegment(o.Key()); ok {
			return seg
		}
	}
	b.Fatal("nothing on flash")
	return tier.Segment{}
}

// BenchmarkFlashRead compares a flash read through the request path's
// deadline (a goroutine and a timer per read) with the bare store read,
// side by side on the in-memory device: the deadline's cost per hit.
func BenchmarkFlashRead(b *testing.B) {
	syn := library(b)
	e := testEngine(b, device.NewMem(24*testBlock, 4096), syn, nil)
	seg := flashResident(b, e, syn)
	b.Run("store", func(b *testing.B) {
		b.SetBytes(seg.Size)
		for b.Loop() {
			if _, err := e.flash.ReadSegment(seg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("deadline", func(b *testing.B) {
		b.SetBytes(seg.Size)
		for b.Loop() {
			_, buf, err := e.readFlash(context.Background(), seg)
			if err != nil {
				b.Fatal(err)
			}
			buf.Release()
		}
	})
}

// TestLastResortReadIsBounded: with the device stalled, FindLastResort
// gives up at LastResortReadDeadline (a miss; the copy stays, nothing of
// the stalled read is served), and also when its caller goes; the
// abandoned reads give their hit buffers back once the device answers,
// and the copy is served again when it does.
func TestLastResortReadIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fault, syn, objs := warmFaulty(t, nil)
		o := onFlash(t, e, objs, 1)[0]
		release := make(chan struct{})
		fault.SetSleep(func(time.Duration) { <-release })
		fault.SetLatency(device.OpRead, time.Hour)
		fault.CorruptReads(0, fault.Size()) // whatever the stalled read returns is wrong
		start := time.Now()
		f := e.FindLastResort(context.Background(), o.Key())
		f.Release()
		if f.Tier != tier.Miss || f.Data != nil {
			t.Fatalf("a stalled last-resort read served from %s", f.Tier)
		}
		want := LastResortDeadlineFactor * DefaultFlashReadDeadline
		if waited := time.Since(start); waited != want {
			t.Errorf("the last resort waited %v, want its deadline %v", waited, want)
		}
		// A caller that goes first stops waiting then.
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		start = time.Now()
		f = e.FindLastResort(ctx, o.Key())
		f.Release()
		cancel()
		if waited := time.Since(start); f.Tier != tier.Miss || waited != 100*time.Millisecond {
			t.Fatalf("a caller gone after 100ms: tier %s after %v", f.Tier, waited)
		}
		if _, still := e.flashSegment(o.Key()); !still {
			t.Fatal("a stalled last-resort read dropped the flash copy")
		}
		if held := e.Stats().SSD.HitMemory.HeldBytes; held == 0 {
			t.Fatal("the stalled reads hold no hit buffer: they were given back while the device still reads into them")
		}
		close(release)
		synctest.Wait()
		if held := e.Stats().SSD.HitMemory.HeldBytes; held != 0 {
			t.Fatalf("%d bytes of hit memory held after the stalled reads ended", held)
		}
		fault.Reset()
		f = e.FindLastResort(context.Background(), o.Key())
		defer f.Release()
		if exp, _ := syn.Expected(o); f.Tier != tier.SSD || !bytes.Equal(f.Data, exp) {
			t.Fatalf("after the stall: tier %s, %d bytes", f.Tier, len(f.Data))
		}
	})
}

// TestStarvedProcessDoesNotDegradeDevice: reads past their deadline while
// the process waits for a CPU (its scheduling latency a quarter of the
// deadline or more) still stop at the deadline, served from the capacity
// tier, but they are not the device's timeouts: however many, its reads
// stay healthy and the next hits still go to flash. Once the process has
// its CPU back, the same stall marks the reads degraded.
func TestStarvedProcessDoesNotDegradeDevice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lag atomic.Int64
		lag.Store(int64(DefaultFlashReadDeadline / 4))
		e, fault, syn, objs := warmFaulty(t, func(o *Options) {
			o.SchedLag = func() time.Duration { return time.Duration(lag.Load()) }
		})
		onFlash := onFlash(t, e, objs, 8)
		release := make(chan struct{})
		fault.SetSleep(func(time.Duration) { <-release })
		fault.SetLatency(device.OpRead, time.Hour)
		fault.CorruptReads(0, fault.Size()) // whatever a late read returns is wrong
		for i, o := range onFlash[:4] {
			start := time.Now()
			if tr := get(t, e, syn, o); tr != tier.Miss {
				t.Fatalf("request %d: a stalled read served from %s", i, tr)
			}
			if waited := time.Since(start); waited != DefaultFlashReadDeadline {
				t.Errorf("request %d waited %v, want the deadline %v", i, waited, DefaultFlashReadDeadline)
			}
		}
		h, _ := e.Health()
		if h.Read.Degraded || h.Read.Errors["timeout"] != 0 || h.Read.Starved != 4 || h.LateReads != 4 {
			t.Fatalf("starved reads counted against the device: %+v", h)
		}
		close(release)
		synctest.Wait()
		fault.Reset()
		if tr := get(t, e, syn, onFlash[4]); tr != tier.SSD {
			t.Errorf("after the starved reads, a hit served from %s", tr)
		}

		// The process has its CPU back: the same stall is the device's.
		lag.Store(0)
		release = make(chan struct{})
		fault.SetSleep(func(time.Duration) { <-release })
		fault.SetLatency(device.OpRead, time.Hour)
		for _, o := range onFlash[5:8] {
			get(t, e, syn, o)
		}
		if h, _ := e.Health(); !h.Read.Degraded || h.Read.Errors["timeout"] != 3 {
			t.Errorf("a stall with the process on its CPU not marked degraded: %+v", h)
		}
		close(release)
		synctest.Wait()
	})
}

// warmFaulty is an engine on a fault-wrapped device over the test
// library, after five rounds of every object (so that some are on flash).
func warmFaulty(t *testing.T, mod func(*Options)) (*Engine, *device.Fault, *origin.Synthetic, []ident.Object) {
	t.Helper()
	syn := library(t)
	fault := device.NewFault(device.NewMem(24*testBlock, 4096))
	e := testEngine(t, fault, syn, mod)
	objs := objects(t, syn)
	rounds(t, e, syn, objs, 5)
	return e, fault, syn, objs
}

// onFlash is the objects of objs that e holds on flash, at least min.
func onFlash(t *testing.T, e *Engine, objs []ident.Object, min int) []ident.Object {
	t.Helper()
	var held []ident.Object
	for _, o := range objs {
		if _, ok := e.flashSegment(o.Key()); ok {
			held = append(held, o)
		}
	}
	if len(held) < min {
		t.Fatalf("%d objects on flash, want %d", len(held), min)
	}
	return held
}

// TestOverloadedDeviceShedsReads: a device whose reads take twice the
// read limit's target (queued behind each other, as on a device that is
// the bottleneck) keeps serving a few hits at once and sheds the rest to
// the capacity tier at once, with the right bytes, without marking the
// device degraded nor dropping a copy; when its reads are fast again the
// limit climbs back while hits are turned away.
func TestOverloadedDeviceShedsReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fault, syn, objs := warmFaulty(t, func(o *Options) {
			o.ReadLimit = health.LimitOptions{Target: 50 * time.Millisecond, Min: 2, Max: 64}
		})
		held := onFlash(t, e, objs, 6)
		load := func(d time.Duration) map[tier.Tier]int {
			var mu sync.Mutex
			seen := map[tier.Tier]int{}
			var wg sync.WaitGroup
			end := time.Now().Add(d)
			for w := range 16 {
				wg.Go(func() {
					for i := w; time.Now().Before(end); i++ {
						got := get(t, e, syn, held[i%len(held)])
						mu.Lock()
						seen[got]++
						mu.Unlock()
						time.Sleep(time.Millisecond)
					}
				})
			}
			wg.Wait()
			return seen
		}
		fault.SetLatency(device.OpRead, 100*time.Millisecond)
		seen := load(3 * time.Second)
		s := e.Stats().SSD
		if seen[tier.SSD] == 0 || seen[tier.Miss] == 0 {
			t.Fatalf("served %v: want some hits from flash and some shed to the capacity tier", seen)
		}
		if s.Health.ShedReads == 0 || s.Health.ReadLimit > 4 {
			t.Fatalf("health %+v: want hits shed and the read limit near its minimum", s.Health)
		}
		if s.Health.Degraded || s.Health.Read.Errors["timeout"] != 0 || s.Dropped != 0 {
			t.Fatalf("an overloaded device is not a failing one: health %+v, dropped %d", s.Health, s.Dropped)
		}
		if n := len(onFlash(t, e, objs, 6)); n < len(held) {
			t.Fatalf("%d copies on flash after shedding, want %d", n, len(held))
		}
		low := s.Health.ReadLimit

		fault.SetLatency(device.OpRead, 0)
		seen = load(3 * time.Second)
		if h := e.Stats().SSD.Health; h.ReadLimit <= low || seen[tier.SSD] == 0 {
			t.Fatalf("fast reads again: limit %d (was %d), served %v; want it higher and flash serving", h.ReadLimit, low, seen)
		}
	})
}

// TestStarvedProcessDoesNotShed: reads that take longer than the read
// limit's target while the process waits as long for a CPU are the
// process's lateness, not the device's queue: nothing is shed.
func TestStarvedProcessDoesNotShed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fault, syn, objs := warmFaulty(t, func(o *Options) {
			o.ReadLimit = health.LimitOptions{Target: 50 * time.Millisecond, Min: 2, Max: 64}
			o.SchedLag = func() time.Duration { return 100 * time.Millisecond }
		})
		held := onFlash(t, e, objs, 6)
		fault.SetLatency(device.OpRead, 100*time.Millisecond)
		var wg sync.WaitGroup
		end := time.Now().Add(3 * time.Second)
		for w := range 16 {
			wg.Go(func() {
				for i := w; time.Now().Before(end); i++ {
					get(t, e, syn, held[i%len(held)])
					time.Sleep(time.Millisecond)
				}
			})
		}
		wg.Wait()
		if h := e.Stats().SSD.Health; h.ShedReads != 0 || h.ReadLimit != 64 {
			t.Fatalf("health %+v: a starved process's slow reads shed hits", h)
		}
	})
}
