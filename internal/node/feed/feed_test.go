package feed

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/store"
)

const testBlock = 64 << 10

// rig is a cache over a device and its feed, as a driver sets them up.
type rig struct {
	mu      sync.Mutex // guards c
	c       *tier.Cache
	flash   *store.Flash
	f       *Feeder
	reads   int // flash reads waiting, guarded by mu
	written []error
}

func newRig(t *testing.T, dev device.Device, topts tier.Options, o Options) *rig {
	t.Helper()
	topts.BlockSize = testBlock
	flash, c, _, err := store.Open(dev, topts, store.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{c: c, flash: flash}
	o.Logger = slog.New(slog.DiscardHandler)
	o.ReadsWaiting = func() int { return r.reads }
	o.Written = func(w *tier.BlockWrite, err error) {
		r.mu.Lock()
		r.written = append(r.written, err)
		r.mu.Unlock()
	}
	r.f = Start(c, &r.mu, flash, o)
	t.Cleanup(func() { r.f.Close() })
	return r
}

func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ seed
	}
	return b
}

// stage queues an object for flash and wakes the feed.
func (r *rig) stage(t *testing.T, key string, data []byte) {
	t.Helper()
	r.mu.Lock()
	ok := r.c.Stage(key, int64(len(data)), data, 1)
	r.mu.Unlock()
	if !ok {
		t.Fatalf("stage %s refused", key)
	}
	r.f.Wake()
}

// onFlash reads key back from flash, or reports false when the index does
// not have it.
func (r *rig) onFlash(t *testing.T, key string) ([]byte, bool) {
	t.Helper()
	r.mu.Lock()
	seg, ok := r.c.FlashSegment(key)
	r.mu.Unlock()
	if !ok {
		return nil, false
	}
	data, err := r.flash.ReadSegment(seg)
	if err != nil {
		t.Fatalf("reading %s back: %v", key, err)
	}
	return data, true
}

// wantOnFlash fails the test unless key reads back from flash as want.
func (r *rig) wantOnFlash(t *testing.T, key string, want []byte) {
	t.Helper()
	if got, ok := r.onFlash(t, key); !ok || !bytes.Equal(got, want) {
		t.Fatalf("%s: on flash %t, right bytes %t", key, ok, bytes.Equal(got, want))
	}
}

func (r *rig) writes() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.written...)
}

// A woken feed writes every full block at once, durably, and tells the
// core; the last, partial block waits for Close, which writes it padded.
func TestFeedWritesBlocksThenFlushesOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, device.NewMem(16*testBlock, 4096), tier.Options{}, Options{})
		big, small := payload(2*testBlock, 1), payload(1000, 2)
		r.stage(t, "big", big)
		r.stage(t, "small", small)
		synctest.Wait()
		if n := len(r.writes()); n != 2 {
			t.Fatalf("%d block writes before Close, want the 2 full blocks", n)
		}
		if _, ok := r.onFlash(t, "small"); ok {
			t.Fatal("the partial block was written before Close")
		}
		if err := r.f.Close(); err != nil {
			t.Fatal(err)
		}
		r.wantOnFlash(t, "big", big)
		r.wantOnFlash(t, "small", small)
		if st := r.c.Stats(); st.BlocksWritten != 3 || st.WriteErrors != 0 {
			t.Fatalf("core stats after Close: %+v", st)
		}
	})
}

// With FlushIdle, the core has the feed write a copy's last block as soon
// as the ring is empty.
func TestFeedFlushesWhenIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, device.NewMem(16*testBlock, 4096), tier.Options{AlignObjects: true, FlushIdle: true}, Options{})
		data := payload(3000, 3)
		r.stage(t, "f/x/0", data)
		synctest.Wait() // no time passes: written because the feed is idle
		r.wantOnFlash(t, "f/x/0", data)
	})
}

// Reads before writes (§3.2.2): nothing is written while a flash read
// waits; the next period after it ends, the block goes.
func TestFeedWaitsForReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, device.NewMem(16*testBlock, 4096), tier.Options{}, Options{})
		r.mu.Lock()
		r.reads = 1
		r.mu.Unlock()
		r.stage(t, "a", payload(testBlock, 4))
		synctest.Wait()
		if n := len(r.writes()); n != 0 {
			t.Fatalf("%d writes while a read waited", n)
		}
		r.mu.Lock()
		r.reads = 0
		rejects := r.c.Stats().AdmissionRejects
		r.mu.Unlock()
		if rejects == 0 {
			t.Fatal("admission was not asked")
		}
		time.Sleep(tier.DefaultFeedPeriod) // the fake clock: the next period
		synctest.Wait()
		if n := len(r.writes()); n != 1 {
			t.Fatalf("%d writes once the read was done, want 1", n)
		}
	})
}

// With a utilization source, nothing is written before the first epoch is
// measured, nor while the device is busier than the threshold (§4.4).
func TestFeedFollowsUtilization(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := device.NewFractionBusy(0)
		r := newRig(t, device.NewMem(16*testBlock, 4096), tier.Options{}, Options{Busy: b})
		r.stage(t, "a", payload(testBlock, 5))
		synctest.Wait()
		if n := len(r.writes()); n != 0 {
			t.Fatalf("%d writes before an epoch was measured", n)
		}
		b.Set(1)
		time.Sleep(3 * tier.DefaultEpoch)
		if n, u := len(r.writes()), r.f.Stats().Utilization; n != 0 || u != 1 {
			t.Fatalf("%d writes at utilization %.2f", n, u)
		}
		b.Set(0)
		time.Sleep(2 * tier.DefaultEpoch)
		if n, u := len(r.writes()), r.f.Stats().Utilization; n != 1 || u != 0 {
			t.Fatalf("%d writes at utilization %.2f, want 1", n, u)
		}
	})
}

// A failed write is reported to the core, which frees the block and drops
// its segments; the feed waits for the next period, then goes on.
func TestFeedReportsWriteFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fault := device.NewFault(device.NewMem(16*testBlock, 4096))
		r := newRig(t, fault, tier.Options{}, Options{})
		fault.FailNext(device.OpWrite, 1)
		r.stage(t, "lost", payload(testBlock, 6))
		synctest.Wait()
		if ws := r.writes(); len(ws) != 1 || ws[0] == nil {
			t.Fatalf("writes %v, want one failed", ws)
		}
		r.mu.Lock()
		st, onTheWay := r.c.Stats(), r.c.OnTheWay("lost")
		r.mu.Unlock()
		if st.WriteErrors != 1 || onTheWay {
			t.Fatalf("core after the failure: %d write errors, segment still on its way %t", st.WriteErrors, onTheWay)
		}
		kept := payload(int(tier.RecordCapacity(testBlock, len("kept"))), 7) // one whole block
		r.stage(t, "kept", kept)
		synctest.Wait()
		r.wantOnFlash(t, "kept", kept)
	})
}

// With AdaptClass, the data blocks' lifetime class follows the write rate:
// a small device rewritten every few seconds holds short-lived data.
func TestFeedAdaptsClass(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, device.NewMem(16*testBlock, 4096), tier.Options{}, Options{AdaptClass: true})
		if c := r.flash.DataClass(); c != device.LifetimeMedium {
			t.Fatalf("class at start %s", c)
		}
		for i := range 20 {
			r.stage(t, "k"+string(rune('a'+i)), payload(testBlock, byte(i)))
			time.Sleep(tier.WearPeriod / 10)
		}
		time.Sleep(tier.WearPeriod)
		if c := r.flash.DataClass(); c != device.LifetimeShort {
			t.Fatalf("class after writing the device over in seconds: %s", c)
		}
		if st := r.f.Stats(); st.WriteRate <= 0 || st.AverageWriteRate <= 0 {
			t.Fatalf("write rates %+v", st)
		}
	})
}

// queue is a producer for the tests: it stages the objects queued so far.
type queue struct {
	mu    sync.Mutex // protects the fields below
	r     *rig
	items map[string][]byte
	runs  int
}

func (q *queue) add(r *rig, key string, data []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.r = r
	q.items[key] = data
}

func (q *queue) produce() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.runs++
	if q.r == nil {
		return 0
	}
	q.r.mu.Lock()
	defer q.r.mu.Unlock()
	n := 0
	for k, data := range q.items {
		if q.r.c.Stage(k, int64(len(data)), data, 1) {
			n++
		}
	}
	clear(q.items)
	return n
}

func (q *queue) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.runs
}

// The producer runs every ProducePeriod and at once when poked; what it
// queues is written without waiting for the feed's period; Close stops it.
func TestFeedRunsProducer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &queue{items: map[string][]byte{}}
		r := newRig(t, device.NewMem(16*testBlock, 4096), tier.Options{AlignObjects: true, FlushIdle: true},
			Options{Produce: q.produce, ProducePeriod: time.Hour, Period: time.Hour})
		a := payload(5000, 8)
		q.add(r, "a", a)
		r.f.Poke()
		synctest.Wait()
		if q.count() != 1 {
			t.Fatalf("producer ran %d times after a poke, want 1", q.count())
		}
		r.wantOnFlash(t, "a", a)
		b := payload(6000, 9)
		q.add(r, "b", b)
		time.Sleep(time.Hour)
		synctest.Wait()
		if q.count() != 2 {
			t.Fatalf("producer ran %d times after its period, want 2", q.count())
		}
		r.wantOnFlash(t, "b", b)
		r.f.Close()
		time.Sleep(2 * time.Hour)
		if q.count() != 2 {
			t.Fatalf("producer ran after Close")
		}
	})
}

// With PokeOnWrite, the producer runs again after each block written, so
// it learns at once that what it queued is on flash.
func TestFeedPokesProducerOnWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &queue{items: map[string][]byte{}}
		r := newRig(t, device.NewMem(16*testBlock, 4096), tier.Options{AlignObjects: true, FlushIdle: true},
			Options{Produce: q.produce, ProducePeriod: time.Hour, Period: time.Hour, PokeOnWrite: true})
		q.add(r, "a", payload(5000, 10))
		q.add(r, "b", payload(5000, 11))
		r.f.Poke()
		synctest.Wait()
		// The poke, then at least one run after the writes (pokes that
		// arrive while one is pending coalesce).
		if n, w := q.count(), len(r.writes()); n < 2 || w != 2 {
			t.Fatalf("producer ran %d times for %d writes, want 2 or more for 2", n, w)
		}
	})
}
