package engine

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/workload"
)

const testBlock = 256 << 10

// library is a small synthetic capacity tier: 4 titles x 2 renditions x 6
// segments of 25-50 KB on average.
func library(t testing.TB) *origin.Synthetic {
	t.Helper()
	ds := workload.NewDataset(workload.DatasetOptions{Titles: 4, AllRenditions: true, MaxLength: time.Minute,
		SegmentDuration: 10 * time.Second, Efficiency: 0.1, Seed: 3})
	for i := range ds.Titles {
		ds.Titles[i].Renditions = ds.Titles[i].Renditions[:2]
	}
	syn, err := origin.NewSynthetic(ds, origin.SyntheticOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	return syn
}

// objects lists every media segment of the library.
func objects(t testing.TB, org origin.Origin) []ident.Object {
	titles, err := org.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []ident.Object
	for _, tt := range titles {
		for _, r := range tt.Renditions {
			for n := r.StartNumber; n < r.StartNumber+r.Segments; n++ {
				out = append(out, ident.Object{Video: tt.ID, Rendition: r.ID, Name: ident.SegmentName(uint32(n))})
			}
		}
	}
	return out
}

func testEngine(t testing.TB, dev device.Device, org origin.Origin, mod func(*Options)) *Engine {
	t.Helper()
	o := Options{
		Tier:          tier.Options{RAMBytes: 300 << 10, BlockSize: testBlock, MonitorRoom: 0.5},
		MonitorPeriod: 10 * time.Millisecond,
		FeedPeriod:    10 * time.Millisecond,
		Logger:        slog.New(slog.DiscardHandler),
		// Not the runtime's: the machine's load (other packages' tests)
		// would excuse late reads in virtual time at random.
		SchedLag: func() time.Duration { return 0 },
	}
	if mod != nil {
		mod(&o)
	}
	e, err := New(o, dev, org)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func get(t *testing.T, e *Engine, syn *origin.Synthetic, o ident.Object) tier.Tier {
	t.Helper()
	res, err := e.Get(context.Background(), o)
	if err != nil {
		t.Fatalf("get %s: %v", o, err)
	}
	want, _ := syn.Expected(o)
	if !bytes.Equal(res.Data, want) {
		t.Fatalf("get %s from %s: wrong bytes", o, res.Tier)
	}
	if res.Sum != Digest(want) {
		t.Fatalf("get %s from %s: digest %x, want %x", o, res.Tier, res.Sum, Digest(want))
	}
	return res.Tier
}

// The monitor and feed goroutines move RAM's tail to flash in virtual
// time; lookups then find every tier, with the right bytes.
func TestTiersInVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		syn := library(t)
		e := testEngine(t, device.NewMem(24*testBlock, 4096), syn, nil)
		objs := objects(t, syn)
		seen := map[tier.Tier]int{}
		for range 3 {
			for _, o := range objs {
				seen[get(t, e, syn, o)]++
				time.Sleep(5 * time.Millisecond) // fake time: monitor and feed run meanwhile
			}
		}
		st := e.Stats()
		if seen[tier.RAM] == 0 || seen[tier.SSD] == 0 || seen[tier.Miss] == 0 {
			t.Fatalf("tiers served %v; stats %+v", seen, st)
		}
		if st.SSD.BytesWritten != st.SSD.BlocksWritten*testBlock || st.SSD.BlocksWritten == 0 {
			t.Fatalf("flash written %d bytes in %d blocks", st.SSD.BytesWritten, st.SSD.BlocksWritten)
		}
	})
}

// gated delays capacity reads until released and counts them.
type gated struct {
	origin.Origin
	release chan struct{}
	reads   atomic.Int64
}

func (g *gated) Get(ctx context.Context, o ident.Object) (origin.Object, error) {
	g.reads.Add(1)
	<-g.release
	return g.Origin.Get(ctx, o)
}

// Concurrent misses of one segment read the capacity tier once.
func TestMissesCoalesce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		syn := library(t)
		g := &gated{Origin: syn, release: make(chan struct{})}
		e := testEngine(t, nil, g, nil)
		o := objects(t, syn)[0]
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() { get(t, e, syn, o) })
		}
		synctest.Wait() // all 20 are blocked: one in the read, 19 waiting for it
		close(g.release)
		wg.Wait()
		if n := g.reads.Load(); n != 1 {
			t.Fatalf("%d capacity reads for 20 concurrent misses", n)
		}
		if st := e.Stats(); st.Origin.Reads != 1 || st.Origin.Coalesced != 19 {
			t.Fatalf("origin stats %+v", st.Origin)
		}
	})
}

// At most MaxLoads capacity-tier reads run at once; the others wait for a
// token, counted in Stats, and all complete once the reads go on.
func TestMaxLoadsBoundsReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		syn := library(t)
		g := &gated{Origin: syn, release: make(chan struct{})}
		e := testEngine(t, nil, g, func(o *Options) { o.MaxLoads = 3 })
		if e.LoadLimit() != 3 {
			t.Fatalf("LoadLimit %d, want 3", e.LoadLimit())
		}
		var wg sync.WaitGroup
		for _, o := range objects(t, syn)[:8] {
			wg.Go(func() { get(t, e, syn, o) })
		}
		synctest.Wait() // 3 reads started, 5 waiting for a token
		if n, st := g.reads.Load(), e.Stats().Origin; n != 3 || st.Loads != 3 || st.LoadWaits != 5 {
			t.Fatalf("%d reads started, stats %+v: want 3 reads, 3 loads, 5 waits", n, st)
		}
		close(g.release)
		wg.Wait()
		if st := e.Stats().Origin; st.Reads != 8 || st.Loads != 0 || st.LoadWaits != 5 {
			t.Fatalf("after the reads: stats %+v", st)
		}
	})
}

// The feed writes only while the flash device's utilization over the last
// epoch is below the threshold (FlashStream §4.4).
func TestAdmissionFollowsUtilization(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		syn := library(t)
		b := device.NewFractionBusy(0.9)
		e := testEngine(t, device.NewMem(24*testBlock, 4096), syn, func(o *Options) {
			o.Busy, o.Epoch = b, 100*time.Millisecond
		})
		for _, o := range objects(t, syn) {
			get(t, e, syn, o)
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Second)
		if st := e.Stats(); st.SSD.BlocksWritten != 0 || st.SSD.AdmissionRejects == 0 {
			t.Fatalf("wrote %d blocks at 90%% utilization (%d rejects)", st.SSD.BlocksWritten, st.SSD.AdmissionRejects)
		}
		b.Set(0.1)
		time.Sleep(time.Second)
		if st := e.Stats(); st.SSD.BlocksWritten == 0 {
			t.Fatalf("no block written at 10%% utilization: %+v", st.SSD)
		}
	})
}

// A flash read that does not verify falls back to the capacity tier with
// the right bytes and drops the flash copy. The monitor and feed run in
// the bubble's fake time.
func TestCorruptFlashFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		syn := library(t)
		fault := device.NewFault(device.NewMem(24*testBlock, 4096))
		e := testEngine(t, fault, syn, nil)
		objs := objects(t, syn)
		var onFlash ident.Object
		for i := 0; i < 50 && onFlash.Video == ""; i++ {
			for _, o := range objs {
				get(t, e, syn, o)
			}
			time.Sleep(20 * time.Millisecond)
			for _, o := range objs {
				if _, ok := e.flashSegment(o.Key()); ok {
					onFlash = o
					break
				}
			}
		}
		if onFlash.Video == "" {
			t.Fatal("nothing reached flash")
		}
		seg, _ := e.flashSegment(onFlash.Key())
		// As after a restart: records this process wrote are not
		// verified again (decision 0030); those it found are, once.
		e.flash.ForgetVerified()
		fault.CorruptReads(seg.Chunks[0].RecordOff(testBlock)+200, 1)
		before := e.Stats().SSD
		if tr := get(t, e, syn, onFlash); tr != tier.Miss {
			t.Fatalf("served from %s", tr)
		}
		st := e.Stats()
		if st.SSD.ReadErrors == 0 || st.SSD.Dropped == 0 {
			t.Fatalf("ssd stats %+v", st.SSD)
		}
		// The corrupt copy was not a hit: counted as a flash miss.
		if st.SSD.Hits != before.Hits || st.SSD.HitBytes != before.HitBytes || st.SSD.Misses != before.Misses+1 {
			t.Fatalf("flash hits %d -> %d (bytes %d -> %d), misses %d -> %d: the unserved hit is not a miss",
				before.Hits, st.SSD.Hits, before.HitBytes, st.SSD.HitBytes, before.Misses, st.SSD.Misses)
		}
		if _, ok := e.flashSegment(onFlash.Key()); ok {
			t.Fatal("corrupt copy still indexed")
		}
	})
}

// Invalidation durably replaces a title: after it, and after a restart,
// the old bytes are not served.
func TestInvalidateSurvivesRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		syn := library(t)
		mem := device.NewMem(24*testBlock, 4096)
		e := testEngine(t, mem, syn, nil)
		objs := objects(t, syn)
		for range 5 {
			for _, o := range objs {
				get(t, e, syn, o)
			}
			time.Sleep(20 * time.Millisecond)
		}
		var video string // a title with a segment on flash
		for _, o := range objs {
			if _, ok := e.flashSegment(o.Key()); ok {
				video = o.Video
				break
			}
		}
		if video == "" {
			t.Fatal("nothing reached flash: the invalidation would prove nothing")
		}
		if err := e.Invalidate(ident.VideoPrefix(video)); err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if _, ok := e.flashSegment(o.Key()); ok && o.Video == video {
				t.Fatalf("%s still on flash", o)
			}
		}
		e.Close()
		e2 := testEngine(t, mem, syn, nil)
		if e2.Stats().SSD.RecoveredSegments == 0 {
			t.Fatal("nothing recovered")
		}
		for _, o := range objs {
			if _, ok := e2.flashSegment(o.Key()); ok && o.Video == video {
				t.Fatalf("%s resurrected by recovery", o)
			}
		}
	})
}

func TestNotFound(t *testing.T) {
	e := testEngine(t, nil, library(t), nil)
	_, err := e.Get(context.Background(), ident.Object{Video: "nope", Rendition: "1k", Name: "1.m4s"})
	if !errors.Is(err, origin.ErrNotFound) {
		t.Fatalf("err %v", err)
	}
}

// A request that looks up after an invalidation does not join a capacity
// read that started before it: its bytes may be the old version's.
func TestNoCoalescingAcrossInvalidation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		syn := library(t)
		g := &gated{Origin: syn, release: make(chan struct{})}
		e := testEngine(t, device.NewMem(24*testBlock, 4096), g, nil)
		o := objects(t, syn)[0]
		var wg sync.WaitGroup
		wg.Go(func() { get(t, e, syn, o) })
		synctest.Wait()
		if err := e.Invalidate(ident.VideoPrefix(o.Video)); err != nil {
			t.Error(err)
		}
		wg.Go(func() { get(t, e, syn, o) })
		synctest.Wait()
		if n := g.reads.Load(); n != 2 {
			t.Errorf("%d capacity reads: the request after the invalidation joined the earlier read", n)
		}
		close(g.release)
		wg.Wait()
	})
}

// BenchmarkDigest is the content digest's cost, paid once per capacity
// read and once per flash read (RAM hits reuse the stored one).
func BenchmarkDigest(b *testing.B) {
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		Digest(buf)
	}
}

// StopLoads cancels capacity reads that outlived their requests, waits for
// those that ignore cancellation up to its bound, and refuses new ones.
func TestStopLoads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		syn := library(t)
		g := &gated{Origin: syn, release: make(chan struct{})}
		e := testEngine(t, nil, g, nil)
		objs := objects(t, syn)
		// A load that honours its context, whose request has gone away.
		ctx, cancel := context.WithCancel(context.Background())
		canceled := make(chan error, 1)
		go e.GetWith(ctx, "i/test/1", func(ctx context.Context) ([]byte, error) {
			<-ctx.Done()
			canceled <- ctx.Err()
			return nil, ctx.Err()
		})
		// A load that does not (the gated origin).
		go e.Get(context.Background(), objs[0])
		synctest.Wait()
		cancel() // the first request leaves; its load goes on
		synctest.Wait()
		if e.StopLoads(time.Second) {
			t.Fatal("StopLoads returned true with a load still blocked")
		}
		if err := <-canceled; !errors.Is(err, context.Canceled) {
			t.Fatalf("the load saw %v, want its context canceled", err)
		}
		close(g.release)
		if !e.StopLoads(time.Second) {
			t.Fatal("StopLoads timed out after every load returned")
		}
		if _, err := e.Get(context.Background(), objs[1]); !errors.Is(err, ErrStopped) {
			t.Fatalf("a miss after StopLoads: %v, want ErrStopped", err)
		}
	})
}
