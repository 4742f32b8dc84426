package flashstream

import (
	"fmt"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/sim/des"
)

// flashStreamOptions configure the FlashStream system: the tier core with
// the live server's defaults, driven in virtual time.
type flashStreamOptions struct {
	// Name overrides the system's name.
	Name string
	// Tier configures the core; DeviceSize is the flash cache size (0: no
	// flash, a RAM + disk system like the paper's Traditional A and B).
	Tier tier.Options
	// MonitorPeriod, FeedPeriod and Epoch are the live engine's defaults
	// unless set: the live feed's tier.DefaultMonitorPeriod,
	// tier.DefaultFeedPeriod and tier.DefaultEpoch, so the simulator
	// runs the server's periods.
	MonitorPeriod, FeedPeriod, Epoch time.Duration
	// ReadUnit, if positive, reads a missed segment from the disk in
	// sequential requests of this size, each issued when the previous one
	// completes, as a web server over the page cache does (Linux reads a
	// file in read-ahead windows). Zero reads it in one request, as
	// FlashStream's server does.
	ReadUnit int64
}

func (o *flashStreamOptions) ensureDefaults() {
	if o.MonitorPeriod == 0 {
		o.MonitorPeriod = tier.DefaultMonitorPeriod
	}
	if o.FeedPeriod == 0 {
		o.FeedPeriod = tier.DefaultFeedPeriod
	}
	if o.Epoch == 0 {
		o.Epoch = tier.DefaultEpoch
	}
}

// FlashStream serves segments with the tier core: RAM pool, ring, flash
// block cache with utilization admission (FlashStream §3-4).
type FlashStream struct {
	opts    flashStreamOptions
	loop    *des.Loop
	cat     *des.Catalog
	core    *tier.Cache
	ssd     *des.Disk
	hdd     *des.Disk
	bs      int64
	writing bool
	waiting map[int][]func(tier.Tier) // coalesced capacity reads, by segment
	c       counters
}

// newFlashStream builds the system over an SSD (nil for none) and an HDD.
func newFlashStream(l *des.Loop, cat *des.Catalog, ssd, hdd *des.Disk, opts flashStreamOptions) (*FlashStream, error) {
	opts.ensureDefaults()
	if ssd != nil && opts.Tier.DeviceSize == 0 {
		opts.Tier.DeviceSize = ssd.Model().Size()
	}
	if ssd == nil {
		opts.Tier.DeviceSize = 0
	}
	core, _, err := tier.New(opts.Tier, 1)
	if err != nil {
		return nil, err
	}
	f := &FlashStream{opts: opts, loop: l, cat: cat, core: core, ssd: ssd, hdd: hdd,
		bs: core.Options().BlockSize, waiting: make(map[int][]func(tier.Tier))}
	f.c.SSDCapacity = int64(max(int(core.Blocks())-tier.MetaBlocks, 0)) * f.bs
	return f, nil
}

// Name is e.g. "FlashStream(LRU)".
func (f *FlashStream) Name() string {
	if f.opts.Name != "" {
		return f.opts.Name
	}
	return fmt.Sprintf("FlashStream(%s)", f.core.Options().BlockPolicy)
}

// Core is the tier core.
func (f *FlashStream) Core() *tier.Cache { return f.core }

// SSD is the flash device.
func (f *FlashStream) SSD() *des.Disk { return f.ssd }

// HDD is the capacity device.
func (f *FlashStream) HDD() *des.Disk { return f.hdd }

// Counters are the cumulative counters.
func (f *FlashStream) Counters() counters {
	c := f.c
	occ := f.core.Occupancy()
	c.SSDCachedBytes, c.SSDFilled = occ.SSDBytes, filled(occ)
	return c
}

// filled is the share of data blocks holding data.
func filled(o tier.Occupancy) float64 {
	if o.DataBlocks == 0 {
		return 0
	}
	return 1 - float64(o.FreeBlocks)/float64(o.DataBlocks)
}

// Start schedules the monitor, the feed retries and the utilization epochs.
func (f *FlashStream) Start() {
	if f.ssd == nil {
		return
	}
	on := func() bool { return true }
	f.loop.Every(f.opts.Epoch, on, f.ssd.TickEpoch)
	f.loop.Every(f.opts.MonitorPeriod, on, func() {
		f.core.Monitor(f.loop.Now())
		f.feed()
	})
	f.loop.Every(f.opts.FeedPeriod, on, f.feed)
}

// Serve looks the segment up: RAM, then flash, then the disk, with
// concurrent misses of one segment coalesced into one disk read.
func (f *FlashStream) Serve(seg int, done func(tier.Tier)) {
	key, size := f.cat.Keys[seg], f.cat.Sizes[seg]
	f.c.Requests++
	f.c.Units++
	l := f.core.Lookup(key, f.loop.Now())
	switch l.Tier {
	case tier.RAM:
		f.c.RAMUnits++
		f.c.RAMBytes += size
		done(tier.RAM)
	case tier.SSD:
		f.c.SSDUnits++
		f.c.SSDBytes += size
		f.ssd.ReadRanges(chunkRanges(l.Seg, f.bs), func() { done(tier.SSD) })
	default:
		f.c.HDDBytes += size
		f.miss(seg, l.Token, done)
	}
}

// chunkRanges is the aligned device ranges holding a segment's records.
func chunkRanges(s tier.Segment, bs int64) [][2]int64 {
	out := make([][2]int64, len(s.Chunks))
	for i, ch := range s.Chunks {
		off := ch.RecordOff(bs)
		start := off &^ 4095
		end := (off + ch.RecordLen(len(s.Key)) + 4095) &^ 4095
		out[i] = [2]int64{start, end - start}
	}
	return out
}

func (f *FlashStream) miss(seg int, tok tier.Token, done func(tier.Tier)) {
	if w, ok := f.waiting[seg]; ok {
		f.waiting[seg] = append(w, done)
		return
	}
	f.waiting[seg] = []func(tier.Tier){done}
	f.readDisk(f.cat.Offsets[seg], f.cat.Sizes[seg], func() {
		f.core.Insert(f.cat.Keys[seg], f.cat.Sizes[seg], nil, tok, f.loop.Now())
		for _, d := range f.waiting[seg] {
			d(tier.Miss)
		}
		delete(f.waiting, seg)
	})
}

// readDisk reads [off, off+n) in one request, or in ReadUnit requests one
// after another.
func (f *FlashStream) readDisk(off, n int64, done func()) {
	unit := f.opts.ReadUnit
	if unit <= 0 || n <= unit {
		f.hdd.Read(off, n, done)
		return
	}
	f.hdd.Read(off, unit, func() { f.readDisk(off+unit, n-unit, done) })
}

// feed writes one block when the core has one ready and admission allows,
// and chains the next when it completes.
func (f *FlashStream) feed() {
	if f.writing || f.ssd == nil {
		return
	}
	now := f.loop.Now()
	w := f.core.Feed(now, tier.Signals{Now: now, Utilization: f.ssd.Utilization(), ReadsWaiting: f.ssd.ReadsOutstanding(), ReadLatency: f.ssd.ReadLatency()})
	if w == nil {
		return
	}
	f.writing = true
	write := func() {
		f.ssd.Write(int64(w.Block)*f.bs, f.bs, 0, func() {
			f.core.WriteDone(w, nil, f.loop.Now())
			f.writing = false
			f.feed()
		})
	}
	f.rescue(w, write)
}

// rescue reads the segments a block write reinserts (tier.BlockReinsert)
// from flash, one after another, hands them to the core and then calls
// next: the reads come before the write that may overwrite them.
func (f *FlashStream) rescue(w *tier.BlockWrite, next func()) {
	if len(w.Rescue) == 0 {
		next()
		return
	}
	var ranges [][2]int64
	for _, s := range w.Rescue {
		ranges = append(ranges, chunkRanges(s, f.bs)...)
	}
	f.ssd.ReadRanges(ranges, func() {
		for _, s := range w.Rescue {
			f.core.Rescued(s.Key, nil, true)
		}
		next()
	})
}
