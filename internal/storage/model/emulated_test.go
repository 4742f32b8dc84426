package model

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/strata-media/strata/internal/storage/device"
)

// TestEmulatedTiming runs in a synctest bubble, where time.Now and
// time.Sleep are virtual: a write takes exactly the model's time, and the
// data reaches the inner device.
func TestEmulatedTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := OCZCoreV2().WithCapacity(1 << 30)
		ref := newSSD(t, p)
		want := ref.Submit(0, Request{Op: Write, Offset: 0, Length: 1 << 20})

		inner := device.NewMem(1<<30, 4096)
		e := NewEmulated(inner, newSSD(t, p), EmulatedOptions{})
		buf := bytes.Repeat([]byte{7}, 1<<20)
		start := time.Now()
		if _, err := e.WriteAt(buf, 0); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != want {
			t.Errorf("write took %v, model says %v", got, want)
		}
		got := make([]byte, 4096)
		if _, err := inner.ReadAt(got, 0); err != nil || got[0] != 7 {
			t.Errorf("inner device holds %v, %v", got[0], err)
		}
		busy, _ := e.Busy()
		if busy != want {
			t.Errorf("busy %v, want %v", busy, want)
		}
	})
}

// fakeClock is a clock whose Sleep advances Now; safe for concurrent use.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
}

func TestEmulatedStreamsAndErrors(t *testing.T) {
	rec := &recorder{size: 1 << 20}
	clock := &fakeClock{now: time.Unix(1000, 0)}
	e := NewEmulated(device.NewMem(1<<20, 4096), rec, EmulatedOptions{Now: clock.Now, Sleep: clock.Sleep})
	buf := make([]byte, 4096)
	for _, l := range []device.Lifetime{device.LifetimeNotSet, device.LifetimeShort, device.LifetimeExtreme} {
		if err := e.SetLifetime(l); err != nil {
			t.Fatal(err)
		}
		if _, err := e.WriteAt(buf, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []int{0, 1, 4} {
		if got := rec.reqs[i].Stream; got != want {
			t.Errorf("write %d: stream %d, want %d", i, got, want)
		}
	}
	if len(clock.slept) != 3 || clock.slept[0] != time.Millisecond {
		t.Errorf("slept %v, want three 1ms sleeps", clock.slept)
	}
	if _, err := e.WriteAt(buf[:100], 0); !errors.Is(err, device.ErrUnaligned) {
		t.Errorf("unaligned write: %v", err)
	}
	if err := e.Trim(0, 1<<21); !errors.Is(err, device.ErrOutOfRange) {
		t.Errorf("trim past the end: %v", err)
	}
	if len(rec.reqs) != 3 {
		t.Errorf("rejected I/O reached the model: %v", rec.reqs[3:])
	}
}

// TestEmulatedConcurrent drives the device from several goroutines (run
// with -race): every I/O is charged to the model once.
func TestEmulatedConcurrent(t *testing.T) {
	s := newSSD(t, smallSSD(0.2, 64, 4))
	clock := &fakeClock{now: time.Unix(0, 0)}
	e := NewEmulated(device.NewMem(s.Size(), 4096), s, EmulatedOptions{Now: clock.Now, Sleep: clock.Sleep})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			buf := make([]byte, 16384)
			for i := range 50 {
				off := int64((g*50+i)%1000) * 16384
				if _, err := e.WriteAt(buf, off); err != nil {
					t.Error(err)
				}
				if _, err := e.ReadAt(buf, off); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if got := e.Model().(*SSD).Stats().HostWrites; got != 8*50*4 {
		t.Errorf("model saw %d page writes, want %d", got, 8*50*4)
	}
}
