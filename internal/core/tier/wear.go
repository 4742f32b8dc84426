package tier

import "time"

// WearPeriod is how often Wear samples the flash write rate.
const WearPeriod = 10 * time.Second

// DefaultEnduranceCycles is the rated program/erase cycles of MLC flash,
// the VoD paper's §4 figure.
const DefaultEnduranceCycles = 3000

// Wear follows a cache's flash write rate, from which it estimates how long
// a block stays before it is overwritten (its lifetime class) and how long
// the device lasts. The driver samples it with the bytes written so far
// (Stats.BytesWritten) and the time, live or simulated.
type Wear struct {
	started   bool
	start     time.Duration
	last      time.Duration
	lastBytes uint64
	startByte uint64
	rate      float64 // bytes/s, exponentially weighted over about a minute
}

// Sample records that written bytes had been written by now. It updates
// the rate and reports true once WearPeriod has passed since the last
// update; the first sample only starts the clock.
func (w *Wear) Sample(now time.Duration, written uint64) bool {
	if !w.started {
		w.started, w.start, w.last, w.lastBytes, w.startByte = true, now, now, written, written
		return false
	}
	dt := now - w.last
	if dt < WearPeriod {
		return false
	}
	r := float64(written-w.lastBytes) / dt.Seconds()
	w.rate = 0.8*w.rate + 0.2*r // about a minute of memory at 10 s samples
	w.last, w.lastBytes = now, written
	return true
}

// Rate is the recent write rate in bytes/s.
func (w *Wear) Rate() float64 { return w.rate }

// AverageRate is the write rate in bytes/s since the first sample, with
// written bytes written by now; 0 before any time has passed.
func (w *Wear) AverageRate(now time.Duration, written uint64) float64 {
	if !w.started || now <= w.start {
		return 0
	}
	return float64(written-w.startByte) / (now - w.start).Seconds()
}

// Class is the lifetime class of the cache's writes at the recent rate on
// a cache of capacity bytes, and false while the rate is unknown (no
// writes yet). The block policies overwrite blocks roughly in rotation, so
// a block stays about the time it takes to write the whole cache once.
func (w *Wear) Class(capacity int64) (WriteLife, bool) {
	if w.rate <= 0 {
		return 0, false
	}
	return LifeOf(time.Duration(float64(capacity) / w.rate * float64(time.Second))), true
}

// WriteLife is the expected lifetime class of data written together
// (multi-streamed SSD §3: data of one lifetime written together keeps
// garbage collection cheap). Drivers map it to their device's classes.
type WriteLife uint8

// Lifetime classes, shortest first.
const (
	LifeShort   WriteLife = iota + 1 // overwritten within the hour
	LifeMedium                       // within the day
	LifeLong                         // within the week
	LifeExtreme                      // later
)

func (l WriteLife) String() string {
	switch l {
	case LifeShort:
		return "short"
	case LifeMedium:
		return "medium"
	case LifeLong:
		return "long"
	case LifeExtreme:
		return "extreme"
	}
	return "unknown"
}

// LifeOf is the lifetime class of data that stays about residency before
// it is overwritten.
func LifeOf(residency time.Duration) WriteLife {
	switch {
	case residency < time.Hour:
		return LifeShort
	case residency < 24*time.Hour:
		return LifeMedium
	case residency < 7*24*time.Hour:
		return LifeLong
	}
	return LifeExtreme
}

// ProjectedLifetimeHours is the VoD paper's §4 formula T = C x 1024 x N /
// (W x 3600) hours: C the capacity in GB, N the erase endurance in cycles,
// W the write rate in MB/s. 0 without writes.
func ProjectedLifetimeHours(capacityBytes int64, cycles int, bytesPerSec float64) float64 {
	if bytesPerSec <= 0 {
		return 0
	}
	c := float64(capacityBytes) / (1 << 30)
	w := bytesPerSec / (1 << 20)
	return c * 1024 * float64(cycles) / (w * 3600)
}
