package engine

import (
	"sync"
	"time"

	"github.com/strata-media/strata/internal/storage/device"
)

// wear follows the flash write rate: the expected residency of a block,
// which sets the lifetime class of the cache's writes, and the projected
// lifetime of the device.
type wear struct {
	mu       sync.Mutex // protects the fields below
	start    time.Time
	last     time.Time
	lastByte uint64
	rate     float64 // bytes/s, exponentially weighted over about a minute
}

// wearPeriod is how often the write rate is sampled.
const wearPeriod = 10 * time.Second

func (w *wear) init(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.start, w.last = now, now
}

// sample updates the rate with the bytes written so far; it reports false
// when the last sample is too recent.
func (w *wear) sample(now time.Time, written uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	dt := now.Sub(w.last)
	if dt < wearPeriod {
		return false
	}
	r := float64(written-w.lastByte) / dt.Seconds()
	w.rate = 0.8*w.rate + 0.2*r // about a minute of memory at 10 s samples
	w.last, w.lastByte = now, written
	return true
}

func (w *wear) current() (rate float64, start time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rate, w.start
}

// residencyClass is the lifetime class of data that stays about residency
// before it is overwritten (multi-streamed SSD §3: data of one lifetime
// written together). The cache's block policies overwrite blocks roughly
// in rotation, so a block stays about the time it takes to write the whole
// cache once at the current rate.
func residencyClass(residency time.Duration) device.Lifetime {
	switch {
	case residency < time.Hour:
		return device.LifetimeShort
	case residency < 24*time.Hour:
		return device.LifetimeMedium
	case residency < 7*24*time.Hour:
		return device.LifetimeLong
	}
	return device.LifetimeExtreme
}

// updateClass re-estimates the residency of cache blocks and, when its
// class changes, passes the new class to the kernel (F_SET_RW_HINT).
func (e *Engine) updateClass(now time.Time) {
	written := e.Stats().SSD.BytesWritten
	if !e.wear.sample(now, written) {
		return
	}
	rate, _ := e.wear.current()
	if rate <= 0 {
		return
	}
	capacity := float64(e.flash.Device().Size())
	class := residencyClass(time.Duration(capacity / rate * float64(time.Second)))
	if class != e.flash.DataClass() {
		if err := e.flash.SetDataClass(class); err != nil {
			e.log.Debug("write hint not passed down", "class", class, "err", err)
		}
	}
}

// projectedLifetimeHours is the VoD paper's §4 formula T = C x 1024 x N /
// (W x 3600) hours: C the capacity in GB, N the erase endurance in cycles,
// W the write rate in MB/s (here the average since start). 0 without writes.
func projectedLifetimeHours(capacityBytes int64, cycles int, avgBytesPerSec float64) float64 {
	if avgBytesPerSec <= 0 {
		return 0
	}
	c := float64(capacityBytes) / (1 << 30)
	w := avgBytesPerSec / (1 << 20)
	return c * 1024 * float64(cycles) / (w * 3600)
}
