package streamsim

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/storage/model"
	"github.com/strata-media/strata/internal/workload"
)

// segCacheOptions configure the FlashStream segment cache's traffic: the
// tier core the live server runs (internal/core/tier), fed FlashStream §5.1's
// requests, writing whole blocks to a cache that spans Fill of the drive.
type segCacheOptions struct {
	// Fill is the share of the drive the cache spans; the rest holds
	// other data that is never rewritten. Default 0.9.
	Fill float64
	// Block is the cache block size; 0 is the drive's write unit (one
	// erase block on every die), what strata probe finds (FlashStream
	// §3.1).
	Block int64
	// Policy is the block replacement policy. Default: the core's.
	Policy tier.BlockPolicy
	// RAM is the RAM pool: FlashStream's 2 GB, scaled.
	RAM int64
	// LibraryRatio is the library's size over the cache's. Default 2.5:
	// the cache holds the popular head, misses keep replacing blocks
	// (FlashStream §5 had 545 GB over 75 GB of flash, 7x; the ratio
	// changes which blocks are evicted, not that whole blocks are).
	LibraryRatio float64
	// Seed seeds the library and the requests.
	Seed uint64
}

// The classes of the segment cache's writes.
var (
	classSegments = Class{Name: "segments", Kind: kindData, Rank: medium}
	classSegMeta  = Class{Name: "segments-meta", Kind: kindLog, Rank: short}
	classFlashRnd = Class{Name: "flashcache", Kind: kindData, Rank: medium}
)

// segFeed drives the tier core with FlashStream §5.1's requests and
// issues each block write it plans.
type segFeed struct {
	cache *tier.Cache
	cat   *des.Catalog
	zipf  *workload.Zipf
	rng   *rand.Rand
	bs    int64
	now   time.Duration
	n     int64
	q     opQueue
}

// newSegFeed builds the core over a cache of span bytes.
func newSegFeed(o segCacheOptions, span int64) (*segFeed, error) {
	titles := int(o.LibraryRatio * float64(span) / 0.2725e9) // FlashStream §5.1: 545 GB over 2000 titles
	ds := workload.NewDataset(workload.DatasetOptions{Titles: max(titles, 20), Seed: o.Seed})
	z, err := workload.NewZipfTheta(len(ds.Titles), 0.2)
	if err != nil {
		return nil, err
	}
	c, meta, err := tier.New(tier.Options{RAMBytes: o.RAM, DeviceSize: span, BlockSize: o.Block,
		BlockPolicy: o.Policy, Admission: tier.Threshold{Max: 1}}, o.Seed|1)
	if err != nil {
		return nil, fmt.Errorf("segment cache: %w", err)
	}
	f := &segFeed{cache: c, cat: des.NewCatalog(ds, 0), zipf: z, bs: o.Block,
		rng: rand.New(rand.NewPCG(o.Seed, 0x5e9))}
	if meta != nil {
		f.q.push(Op{Kind: opWrite, Off: int64(meta.Slot) * o.Block, Len: o.Block, Class: classSegMeta, Work: o.Block})
		c.MetaDone(meta, nil)
	}
	return f, nil
}

// Next implements Thread: it serves requests (every 10 ms of the feed's
// own clock) until the core plans a block write.
func (f *segFeed) Next(time.Duration) (Op, status, time.Duration) {
	if op, ok := f.q.pop(); ok {
		return ready(op)
	}
	for {
		f.request()
		if w := f.cache.Feed(f.now, tier.Signals{Now: f.now}); w != nil {
			for _, s := range w.Rescue { // read before the write; reads do not age the drive
				f.cache.Rescued(s.Key, nil, true)
			}
			f.cache.WriteDone(w, nil, f.now)
			return ready(Op{Kind: opWrite, Off: int64(w.Block) * f.bs, Len: f.bs, Class: classSegments, Work: f.bs})
		}
	}
}

// request serves one segment request: a lookup, and an insert on a miss.
func (f *segFeed) request() {
	f.now += 10 * time.Millisecond
	f.n++
	seg := f.cat.Pick(f.zipf.Draw(f.rng), f.rng)
	key := f.cat.Keys[seg]
	if l := f.cache.Lookup(key, f.now); l.Tier == tier.Miss {
		f.cache.Insert(key, f.cat.Sizes[seg], nil, l.Token, f.now)
	}
	if f.n%10 == 0 {
		f.cache.Monitor(f.now)
	}
}

// randWriter is a flashcache-like cache's traffic: 4 KiB blocks written at
// uniformly random slots of the cache (a set-associative cache fills and
// replaces slots all over the device).
type randWriter struct {
	rng   *rand.Rand
	span  int64
	block int64
}

// Next implements Thread.
func (w *randWriter) Next(time.Duration) (Op, status, time.Duration) {
	off := w.rng.Int64N(w.span/w.block) * w.block
	return ready(Op{Kind: opWrite, Off: off, Len: w.block, Class: classFlashRnd, Work: w.block})
}

// segCacheScenario is Strata's segment cache at o.Fill of the drive.
func segCacheScenario(sc Scale, o segCacheOptions) (*Scenario, error) {
	p, err := drive(sc.Dies)
	if err != nil {
		return nil, err
	}
	o.Fill = cmp.Or(o.Fill, 0.9)
	o.Block = cmp.Or(o.Block, p.UnitSize())
	o.RAM = cmp.Or(o.RAM, int64(float64(2<<30)*sc.factor()))
	o.LibraryRatio = cmp.Or(o.LibraryRatio, 2.5)
	span := int64(o.Fill*float64(p.Capacity)) / o.Block * o.Block
	name := fmt.Sprintf("segcache-%s-%s", o.Policy, bytesize.Compact(o.Block))
	return &Scenario{
		Name: name, Drive: p, Volume: sc.CacheVolume, AgedAt: 0.5, Window: volumeWindow(p, sc.CacheVolume),
		WorkUnit: "MB/s", WorkScale: 1e6,
		Build: func(ssd *model.SSD, trim bool) (*instance, error) {
			f, err := newSegFeed(o, span)
			if err != nil {
				return nil, err
			}
			return &instance{Run: []threadSpec{{f, 1}}, Err: noErr, Notes: f.notes}, nil
		},
	}, nil
}

func (f *segFeed) notes() map[string]float64 {
	st := f.cache.Stats()
	occ := f.cache.Occupancy()
	return map[string]float64{"requests": float64(f.n), "blocks_written": float64(st.BlocksWritten),
		"cache_blocks": float64(f.cache.Blocks()), "free_blocks": float64(occ.FreeBlocks)}
}

// randCacheScenario is a flashcache-like cache of 4 KiB blocks at fill of
// the drive, the rest holding data that is never rewritten.
func randCacheScenario(sc Scale, fill float64, seed uint64) (*Scenario, error) {
	p, err := drive(sc.Dies)
	if err != nil {
		return nil, err
	}
	span := int64(fill*float64(p.Capacity)) / p.PageSize * p.PageSize
	return &Scenario{
		Name: "flashcache-4k", Drive: p, Volume: sc.RandVolume, AgedAt: 2.0 / 3, Window: volumeWindow(p, sc.RandVolume),
		WorkUnit: "MB/s", WorkScale: 1e6,
		Build: func(ssd *model.SSD, trim bool) (*instance, error) {
			w := &randWriter{rng: rand.New(rand.NewPCG(seed, 0xf1a5)), span: span, block: 4096}
			return &instance{Run: []threadSpec{{w, 32}}, Err: noErr}, nil
		},
	}, nil
}

func noErr() error { return nil }

// volumeWindow is a window width that cuts a run of volume drive
// capacities at the drive's fresh program rate into about 40 windows.
func volumeWindow(p model.SSDParams, volume float64) time.Duration {
	secs := volume * float64(p.Capacity) / p.ProgramRate() / 40
	return max(time.Duration(secs*float64(time.Second)).Round(time.Second), time.Second)
}
