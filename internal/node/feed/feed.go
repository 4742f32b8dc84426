// Package feed is the live driver of a tier.Cache's flash side: it runs
// what fills the ring and writes the blocks the core plans (FlashStream
// §3.2).
package feed

import (
	"cmp"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-media/strata/internal/core/health"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/store"
)

// Options configure a Feeder. Zero fields take the defaults of
// EnsureDefaults.
type Options struct {
	// Period is how often an idle feed asks the core again for a block
	// that admission refused or that was not ready. Default
	// tier.DefaultFeedPeriod (50 ms).
	Period time.Duration
	// Epoch is the utilization epoch (FlashStream §4.4). Default
	// tier.DefaultEpoch (1 s).
	Epoch time.Duration
	// Busy reports the flash device's busy time for the utilization
	// signal; with it, nothing is written before the first epoch has been
	// measured. Nil: no utilization signal (utilization reads 0).
	Busy device.BusySource
	// NoSync skips the fdatasync after each block write. By default a
	// block counts as written once it is durable.
	NoSync bool
	// AdaptClass re-estimates the lifetime class of data blocks from the
	// write rate (tier.Wear) and passes it to the device when it changes.
	// False: data blocks keep the class the store was opened with.
	AdaptClass bool
	// ReadsWaiting reports the flash reads in progress, for reads before
	// writes (§3.2.2). It is called with the cache's lock held. Nil: 0.
	ReadsWaiting func() int
	// Now is the cache's clock: the time since its driver started, the
	// same the driver passes to the cache's other calls. Nil: the time
	// since Start.
	Now func() time.Duration
	// Written, if set, is called after each block write the core has been
	// told of, without the lock held: err is the write's error.
	Written func(w *tier.BlockWrite, err error)
	// Produce, if set, fills the ring: the RAM monitor (§3.2.1) or a
	// copier staging whole objects. The Feeder runs it in a goroutine of
	// its own, without the lock, every ProducePeriod and after each Poke,
	// and wakes the feed when it reports that it queued something.
	Produce func() int
	// ProducePeriod is how often Produce runs unpoked. Default
	// tier.DefaultMonitorPeriod (100 ms).
	ProducePeriod time.Duration
	// PokeOnWrite runs Produce again after each block written: for a
	// producer that waits for what it queued to reach flash (the copier
	// installs a copy once its last piece is written).
	PokeOnWrite bool
	// Health, if set, is the flash device's health: while its writes are
	// degraded the feed writes nothing but the probes it lets through,
	// and every write's outcome is reported to it.
	Health *Health
	// ReadDeadline is how long the feed's probe read of a degraded device
	// may take before it counts as a timeout. Default 250 ms.
	ReadDeadline time.Duration
	// Logger receives the feed's messages. Nil: slog.Default().
	Logger *slog.Logger
}

// EnsureDefaults fills zero fields with defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	o.Period = cmp.Or(o.Period, tier.DefaultFeedPeriod)
	o.Epoch = cmp.Or(o.Epoch, tier.DefaultEpoch)
	o.ProducePeriod = cmp.Or(o.ProducePeriod, tier.DefaultMonitorPeriod)
	o.ReadDeadline = cmp.Or(o.ReadDeadline, 250*time.Millisecond)
	if o.ReadsWaiting == nil {
		o.ReadsWaiting = func() int { return 0 }
	}
	if o.Now == nil {
		start := time.Now()
		o.Now = func() time.Duration { return time.Since(start) }
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// A Feeder runs the feed of one cache: it writes whole blocks while the
// core admits them, and otherwise waits for Wake or the next period. It
// owns the goroutines that fill and drain the ring, the epoch and the wear
// sampling; the core makes every decision.
type Feeder struct {
	mu    sync.Locker // the owner's lock: guards c
	opts  Options
	c     *tier.Cache
	flash *store.Flash
	epoch *device.Epoch // owned by the loop goroutine

	wear struct {
		sync.Mutex // protects w
		w          tier.Wear
	}
	utilization atomic.Uint64 // math.Float64bits of the last epoch's utilization

	kick chan struct{} // wakes the feed
	poke chan struct{} // wakes the producer
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
	err  error // of Close
}

// Start starts the feed of c, whose block writes go to flash. mu is the
// lock under which the caller uses c; the feed takes it for each call to
// the core and never holds it during I/O. Close stops the feed.
func Start(c *tier.Cache, mu sync.Locker, flash *store.Flash, o Options) *Feeder {
	o.EnsureDefaults()
	f := &Feeder{
		opts: o, mu: mu, c: c, flash: flash,
		epoch: device.NewEpoch(o.Busy, o.Epoch),
		kick:  make(chan struct{}, 1), poke: make(chan struct{}, 1), stop: make(chan struct{}),
	}
	f.sampleWear()
	f.wg.Add(1)
	go f.loop()
	if o.Produce != nil {
		f.wg.Add(1)
		go f.produce()
	}
	return f
}

// Wake asks the feed to look for a block now: the caller queued something.
func (f *Feeder) Wake() { signal(f.kick) }

// Poke asks the producer to run now: there may be something to queue.
func (f *Feeder) Poke() { signal(f.poke) }

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// produce runs Produce every ProducePeriod and when poked.
func (f *Feeder) produce() {
	defer f.wg.Done()
	t := time.NewTicker(f.opts.ProducePeriod)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-f.poke:
		case <-t.C:
		}
		if f.opts.Produce() > 0 {
			f.Wake()
		}
	}
}

// loop is the SSD feed (§3.2.2): it writes blocks while the core has them
// ready and admitted, samples the write rate, and otherwise waits for Wake
// or the next period.
func (f *Feeder) loop() {
	defer f.wg.Done()
	t := time.NewTicker(f.opts.Period)
	defer t.Stop()
	for {
		for f.step() {
		}
		f.probeReads()
		f.adaptClass()
		select {
		case <-f.stop:
			return
		case <-f.kick:
		case <-t.C:
		}
	}
}

// step writes one block if the core has one ready and admitted, and
// reports whether it wrote one.
func (f *Feeder) step() bool {
	sig, ok := f.measure()
	if !ok {
		return false
	}
	probe := false
	if h := f.opts.Health; h != nil {
		var ok bool
		if ok, probe = h.Admit(health.Write); !ok {
			return false
		}
	}
	f.mu.Lock()
	sig.Now = f.opts.Now()
	sig.ReadsWaiting = f.opts.ReadsWaiting()
	w := f.c.Feed(sig.Now, sig)
	f.mu.Unlock()
	if w == nil {
		if probe {
			f.opts.Health.Abort(health.Write)
		}
		return false
	}
	return f.write(w, probe) == nil
}

// probeReads probes a device whose reads are degraded when its probe is
// due, with a read of its first aligned block, so that it recovers even
// when no request asks for what it holds.
func (f *Feeder) probeReads() {
	h := f.opts.Health
	if h == nil || !h.probeDue(health.Read) {
		return
	}
	dev := f.flash.Device()
	start := time.Now()
	_, err := dev.ReadAt(device.AlignedBuffer(dev.Alignment(), dev.Alignment()), 0)
	if err == nil && time.Since(start) > f.opts.ReadDeadline {
		err = ErrDeadline
	}
	h.Done(health.Read, true, err)
}

// measure returns the signals the feed measures itself, and false while
// the utilization has not been measured over a whole epoch yet.
func (f *Feeder) measure() (tier.Signals, bool) {
	if f.opts.Busy == nil {
		return tier.Signals{}, true
	}
	u, err := f.epoch.Tick(time.Now())
	if err == nil {
		f.utilization.Store(math.Float64bits(u))
	}
	return tier.Signals{Utilization: u}, f.epoch.Completed()
}

// write writes w whole and aligned, syncs it, and reports to the core
// and to the device's health (probe: the write is its probe).
func (f *Feeder) write(w *tier.BlockWrite, probe bool) error {
	start := time.Now()
	err := f.flash.WriteBlock(w)
	if err == nil && !f.opts.NoSync {
		err = f.flash.Sync()
	}
	if f.opts.Health != nil {
		f.opts.Health.written(probe, time.Since(start), err)
	}
	if err != nil {
		f.opts.Logger.Warn("flash block write failed", "block", w.Block, "err", err)
	}
	f.mu.Lock()
	f.c.WriteDone(w, err, f.opts.Now())
	f.mu.Unlock()
	if f.opts.Written != nil {
		f.opts.Written(w, err)
	}
	if f.opts.PokeOnWrite {
		f.Poke()
	}
	return err
}

// Close stops the producer and the feed, writes the ring's last segments
// in whole blocks (the last one padded, whatever admission would say), and
// syncs the flash device.
func (f *Feeder) Close() error {
	f.once.Do(func() {
		close(f.stop)
		f.wg.Wait()
		for {
			f.mu.Lock()
			w := f.c.Flush(f.opts.Now())
			f.mu.Unlock()
			if w == nil {
				break
			}
			f.write(w, false)
		}
		f.err = f.flash.Sync()
	})
	return f.err
}
