package feed

import (
	"math"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/device"
)

// Stats are the feed's measurements.
type Stats struct {
	// Utilization is the flash device's busy fraction over the last
	// completed epoch (0 without a busy source).
	Utilization float64
	// WriteRate is the recent flash write rate in bytes/s.
	WriteRate float64
	// AverageWriteRate is the flash write rate since Start, in bytes/s.
	AverageWriteRate float64
}

// Stats returns a snapshot. It takes the cache's lock.
func (f *Feeder) Stats() Stats {
	now, written := f.written()
	f.wear.Lock()
	defer f.wear.Unlock()
	return Stats{
		Utilization:      math.Float64frombits(f.utilization.Load()),
		WriteRate:        f.wear.w.Rate(),
		AverageWriteRate: f.wear.w.AverageRate(now, written),
	}
}

// sampleWear gives the core's wear model the bytes written so far and
// reports whether it took a new sample.
func (f *Feeder) sampleWear() bool {
	now, written := f.written()
	f.wear.Lock()
	defer f.wear.Unlock()
	return f.wear.w.Sample(now, written)
}

// adaptClass samples the write rate and, with AdaptClass, passes the
// lifetime class the core derives from it to the device when it changes
// (F_SET_RW_HINT).
func (f *Feeder) adaptClass() {
	if !f.sampleWear() || !f.opts.AdaptClass {
		return
	}
	f.wear.Lock()
	life, ok := f.wear.w.Class(f.flash.Device().Size())
	f.wear.Unlock()
	if !ok {
		return
	}
	class := deviceClass[life]
	if class == f.flash.DataClass() {
		return
	}
	if err := f.flash.SetDataClass(class); err != nil {
		f.opts.Logger.Debug("write hint not passed down", "class", class, "err", err)
	}
}

// written returns the time and the bytes the cache has written to flash.
func (f *Feeder) written() (time.Duration, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.opts.Now(), f.c.Stats().BytesWritten
}

// deviceClass maps the core's lifetime classes to the device's.
var deviceClass = [...]device.Lifetime{
	tier.LifeShort:   device.LifetimeShort,
	tier.LifeMedium:  device.LifetimeMedium,
	tier.LifeLong:    device.LifetimeLong,
	tier.LifeExtreme: device.LifetimeExtreme,
}
