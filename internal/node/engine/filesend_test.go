package engine

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/storage/store"
	"github.com/strata-media/strata/internal/workload"
)

// sendSlice is the most the Front splices from the file into its pipe
// at once (front.SendSlice): one read from the device's file.
const sendSlice = 1 << 20

// sendFromFile sends h as the Front does, its file parts read from the
// device's file in slices of up to sendSlice, each between BeginFileRead
// and EndFileRead as the Front splices one into its pipe, its memory
// parts as they are. It returns the bytes, and the first error.
func sendFromFile(h *store.FileHit) ([]byte, error) {
	var out []byte
	for i := range h.Parts() {
		off, n, mem, err := h.Part(i)
		if err != nil {
			return out, err
		}
		if mem != nil {
			out = append(out, mem...)
			continue
		}
		for n > 0 {
			b := device.AlignedBuffer(int(min(n, sendSlice)), 4096)
			var rerr error
			if err := h.WithFD(func(fd int) error {
				if rerr = h.BeginFileRead(); rerr == nil {
					var k int
					if k, rerr = unix.Pread(fd, b, off); rerr == nil && k != len(b) {
						rerr = syscall.EIO
					}
				}
				h.EndFileRead(rerr)
				return nil
			}); err != nil {
				return out, err
			}
			if rerr != nil {
				return out, rerr
			}
			out = append(out, b...)
			off, n = off+int64(len(b)), n-int64(len(b))
		}
	}
	return out, nil
}

// warmFile is an engine whose flash is a file (a device with a
// descriptor: hits are sent from it), whose reads from the file for
// those sends go through hook (store.Options.BeforeFileRead), and which
// is never starved of CPU; after rounds of every object of a library of
// segments of hundreds of KiB until at least min of 256 KiB or more are
// on flash, which it returns.
func warmFile(t *testing.T, min int, hook func() error, mod func(*Options)) (*Engine, *origin.Synthetic, []ident.Object) {
	t.Helper()
	ds := workload.NewDataset(workload.DatasetOptions{Titles: 2, AllRenditions: true, MaxLength: 30 * time.Second, Efficiency: 1, Seed: 5})
	syn, err := origin.NewSynthetic(ds, origin.SyntheticOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	dev, err := device.OpenFile(filepath.Join(t.TempDir(), "flash"), device.FileOptions{Size: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() }) // after the engine's Close
	e := testEngine(t, dev, syn, func(o *Options) {
		o.Tier = tier.Options{RAMBytes: 4 << 20, BlockSize: 4 << 20, MonitorRoom: 0.5}
		o.Threshold, o.NoSync, o.BeforeFileRead = 2, true, hook
		o.SchedLag = func() time.Duration { return 0 }
		if mod != nil {
			mod(o)
		}
	})
	objs := objects(t, syn)
	for range 50 {
		for _, o := range objs {
			get(t, e, syn, o)
		}
		time.Sleep(20 * time.Millisecond)
		var held []ident.Object
		for _, o := range objs {
			if want, _ := syn.Expected(o); len(want) < 256<<10 {
				continue
			}
			if _, ok := e.flashSegment(o.Key()); ok {
				held = append(held, o)
			}
		}
		if len(held) >= min {
			return e, syn, held
		}
	}
	t.Fatalf("fewer than %d objects of 256 KiB on flash", min)
	return nil, nil, nil
}

// getFile is GetHeldFile of o, sent from the device if it is a hit to
// send from there (sendFromFile) and released; it checks the bytes and
// returns the tier and whether the hit was sent from the device.
func getFile(t *testing.T, e *Engine, syn *origin.Synthetic, o ident.Object) (tier.Tier, bool) {
	t.Helper()
	res, err := e.GetHeldFile(context.Background(), o)
	if err != nil {
		t.Fatalf("%s: %v", o, err)
	}
	defer res.Release()
	want, _ := syn.Expected(o)
	data := res.Data
	if res.File != nil {
		if data, err = sendFromFile(res.File); err != nil {
			t.Fatalf("%s: sending from the device: %v", o, err)
		}
	}
	if !bytes.Equal(data, want) {
		t.Fatalf("%s from %s (file %v): wrong bytes", o, res.Tier, res.File != nil)
	}
	return res.Tier, res.File != nil
}

// TestSendsFromTheDeviceFollowItsHealth: sends from the device whose
// reads from its file pass the read deadline count as the device's
// timeouts, one per hit, and mark its reads degraded after FailAfter;
// hits then go the buffered way, skipped until the probe is due; when
// the device recovers, the probe (a buffered read) marks it healthy and
// hits are sent from it again.
func TestSendsFromTheDeviceFollowItsHealth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var delay atomic.Int64
		e, syn, held := warmFile(t, 8, func() error {
			time.Sleep(time.Duration(delay.Load()))
			return nil
		}, func(o *Options) {
			o.Health.Backoff = time.Minute // no probe due while the slow sends go on
			// The feed probes a degraded device's reads itself on its
			// ticks (and the monitor's kicks): off the grid of the test's
			// sleeps, so that the request at the probe's due time comes
			// first.
			o.FeedPeriod = 10*time.Millisecond + 333*time.Nanosecond
			o.MonitorPeriod = 10*time.Millisecond + 777*time.Nanosecond
		})
		before, _ := e.Health()
		if tr, file := getFile(t, e, syn, held[0]); tr != tier.SSD || !file {
			t.Fatalf("a hit of a healthy device: from %s, sent from the device %v", tr, file)
		}
		if h, _ := e.Health(); h.Read.Succeeded != before.Read.Succeeded+1 || h.Read.Errors["timeout"] != 0 {
			t.Fatalf("a send from a healthy device not counted as one read in time: %+v", h)
		}

		delay.Store(int64(2 * DefaultFlashReadDeadline))
		fa := e.opts.Health.FailAfter
		for i, o := range held[1 : 1+fa] {
			if tr, file := getFile(t, e, syn, o); tr != tier.SSD || !file {
				t.Fatalf("slow hit %d: from %s, sent from the device %v", i, tr, file)
			}
		}
		h, _ := e.Health()
		if !h.Read.Degraded || h.Read.Errors["timeout"] != uint64(fa) || h.LateReads != 0 {
			t.Fatalf("%d slow sends from the device: %+v", fa, h)
		}
		if st := e.Stats().SSD; st.FileReadsLate < uint64(fa) || st.FileReads < uint64(fa) {
			t.Fatalf("slow sends not counted: reads %d, late %d", st.FileReads, st.FileReadsLate)
		}

		// Degraded: no hit is sent from the device; before the probe is
		// due, hits are skipped (the capacity tier answers, the copy stays).
		declined := e.Stats().SSD.FileHitsDeclined
		if tr, file := getFile(t, e, syn, held[1+fa]); tr != tier.Miss || file {
			t.Fatalf("a hit of a degraded device: from %s, sent from the device %v", tr, file)
		}
		if st := e.Stats().SSD; st.FileHitsDeclined != declined+1 {
			t.Fatalf("declined %d, want %d", st.FileHitsDeclined, declined+1)
		}
		if _, still := e.flashSegment(held[1+fa].Key()); !still {
			t.Fatal("a skipped hit dropped its flash copy")
		}

		// The device recovers: the probe, due after the backoff, is a
		// request's buffered read, which marks its reads healthy; then
		// hits are sent from the device again.
		delay.Store(0)
		h, _ = e.Health()
		time.Sleep(h.Read.NextProbeIn)
		if tr, file := getFile(t, e, syn, held[2+fa]); tr != tier.SSD || file {
			t.Fatalf("the probe: from %s, sent from the device %v", tr, file)
		}
		if h, _ := e.Health(); h.Read.Degraded || h.Read.Recoveries != 1 || h.Read.Probes != 1 {
			t.Fatalf("the probe did not mark reads healthy: %+v", h)
		}
		if tr, file := getFile(t, e, syn, held[3+fa]); tr != tier.SSD || !file {
			t.Fatalf("after recovery: from %s, sent from the device %v", tr, file)
		}
	})
}

// TestStalledSendsCapped: sends stalled in a read from the device's file
// count among the late reads once past the deadline, and with
// MaxLateReads of them no hit is sent from the device (nor read from
// it) until they return.
func TestStalledSendsCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var stall atomic.Pointer[chan struct{}]
		e, syn, held := warmFile(t, 4, func() error {
			if c := stall.Load(); c != nil {
				<-*c
			}
			return nil
		}, func(o *Options) { o.Health.FailAfter = 1000; o.MaxLateReads = 2 })
		release := make(chan struct{})
		stall.Store(&release)
		var once sync.Once
		unstall := func() { once.Do(func() { stall.Store(nil); close(release) }) }
		defer unstall() // also when the test fails: the stalled sends end, the test with them
		done := make(chan error, 2)
		for _, o := range held[:2] {
			res, err := e.GetHeldFile(context.Background(), o)
			if err != nil || res.File == nil {
				t.Fatalf("%s: %v, sent from the device %v", o, err, res.File != nil)
			}
			go func() {
				want, _ := syn.Expected(o)
				data, err := sendFromFile(res.File)
				if err == nil && !bytes.Equal(data, want) {
					err = store.ErrMismatch
				}
				res.Release()
				done <- err
			}()
		}
		time.Sleep(DefaultFlashReadDeadline + time.Millisecond)
		if h, _ := e.Health(); h.LateReads != 2 || h.Read.Errors["timeout"] != 2 {
			t.Fatalf("two stalled sends: %+v", h)
		}
		skipped := func() uint64 { h, _ := e.Health(); return h.SkippedReads }()
		res, err := e.GetHeldFile(context.Background(), held[2])
		defer res.Release()
		if err != nil || res.Tier != tier.Miss || res.File != nil {
			t.Fatalf("past MaxLateReads: %v from %s, sent from the device %v", err, res.Tier, res.File != nil)
		}
		if want, _ := syn.Expected(held[2]); !bytes.Equal(res.Data, want) {
			t.Fatalf("past MaxLateReads: wrong bytes")
		}
		if h, _ := e.Health(); h.SkippedReads != skipped+1 {
			t.Fatalf("the hit past MaxLateReads not skipped: %+v", h)
		}
		unstall()
		for range 2 {
			if err := <-done; err != nil {
				t.Fatalf("a stalled send: %v", err)
			}
		}
		if h, _ := e.Health(); h.LateReads != 0 || h.Read.Errors["timeout"] != 2 {
			t.Fatalf("after the stalled sends returned: %+v", h)
		}
		if tr, file := getFile(t, e, syn, held[3]); tr != tier.SSD || !file {
			t.Fatalf("after the stall: from %s, sent from the device %v", tr, file)
		}
	})
}

// TestFailedSendDropsTheCopy: a read from the device's file that fails
// (EIO) counts as the device's read error and drops the flash copy, as
// a buffered read that fails does: the next request is answered by the
// capacity tier.
func TestFailedSendDropsTheCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fail atomic.Bool
		e, syn, held := warmFile(t, 1, func() error {
			if fail.Load() {
				return syscall.EIO
			}
			return nil
		}, nil)
		fail.Store(true)
		res, err := e.GetHeldFile(context.Background(), held[0])
		if err != nil || res.File == nil {
			t.Fatalf("%v, sent from the device %v", err, res.File != nil)
		}
		if _, err := sendFromFile(res.File); err != syscall.EIO {
			t.Fatalf("the send: %v, want EIO", err)
		}
		res.Release()
		if h, _ := e.Health(); h.Read.Errors["io"] != 1 {
			t.Fatalf("a failed read from the file not counted: %+v", h)
		}
		if st := e.Stats().SSD; st.FileReadErrors != 1 {
			t.Fatalf("file read errors %d, want 1", st.FileReadErrors)
		}
		if _, still := e.flashSegment(held[0].Key()); still {
			t.Fatal("a copy the device failed to read is still on flash")
		}
		fail.Store(false)
		if tr := get(t, e, syn, held[0]); tr != tier.Miss {
			t.Fatalf("served from %s after its flash copy failed", tr)
		}
	})
}
