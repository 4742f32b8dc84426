// Package engine is the live driver of the tier core: the request path RAM
// -> flash -> capacity tier with coalesced misses, and the monitor and feed
// goroutines that move segments from RAM to flash while the flash device has
// headroom (FlashStream §3.2, §4).
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/strata-media/strata/internal/core/health"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/feed"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/storage/ramfile"
	"github.com/strata-media/strata/internal/storage/store"
	"github.com/strata-media/strata/internal/wtrace"
)

// Options configure an Engine. Zero fields take the defaults of
// EnsureDefaults.
type Options struct {
	// Tier configures the cache core; its DeviceSize and Alignment come
	// from the flash device.
	Tier tier.Options
	// MonitorPeriod is how often the RAM monitor scans the monitor room.
	// Default tier.DefaultMonitorPeriod (100 ms).
	MonitorPeriod time.Duration
	// FeedPeriod is how often an idle feed retries a block that admission
	// refused. Zero: feed.Options' default, tier.DefaultFeedPeriod (50 ms).
	FeedPeriod time.Duration
	// Epoch is the utilization epoch (§4.4). Default tier.DefaultEpoch
	// (1 s).
	Epoch time.Duration
	// Threshold is the admission threshold λ on the flash device's
	// utilization over the last epoch (§4.4). Default 0.6. Ignored when
	// Tier.Admission is set.
	Threshold float64
	// Busy reports the flash device's busy time for the utilization
	// signal. Nil: no utilization signal (utilization reads 0).
	Busy device.BusySource
	// NoSync skips the fdatasync after each block write. By default a
	// block counts as written once it is durable.
	NoSync bool
	// OriginTimeout bounds one capacity-tier read. Default 30 s.
	OriginTimeout time.Duration
	// Trace, if set, records every flash write (strata serve
	// --trace-writes).
	Trace *wtrace.Writer
	// EnduranceCycles is the flash's rated program/erase cycles, for the
	// projected lifetime (VoD paper §4). Default
	// tier.DefaultEnduranceCycles (3000, MLC).
	EnduranceCycles int
	// MaxLoads bounds the capacity-tier reads in progress at once, each of
	// which buffers a whole object. Default DefaultMaxLoads. A read past
	// it waits for a token (Stats: origin.load_waits counts those).
	MaxLoads int
	// FlashReadDeadline bounds a flash read on the request path, from
	// when a reader issues it: past it the request is served from the
	// capacity tier and the read counts as a timeout of the device,
	// unless the process was starved of CPU meanwhile (SchedLag).
	// Default DefaultFlashReadDeadline (250 ms).
	FlashReadDeadline time.Duration
	// LastResortReadDeadline bounds FindLastResort's flash read: past
	// it the caller answers as if nothing were held. Default
	// LastResortDeadlineFactor times FlashReadDeadline (2 s).
	LastResortReadDeadline time.Duration
	// Health is when the flash device is marked degraded and probed again
	// (health.Options' defaults: degraded after 3 consecutive failures,
	// probed after 1 s, then after a backoff doubling up to 30 s).
	Health health.Options
	// HitMemory bounds the bytes of the buffers flash hits are read
	// into, from the read until the response is written (GetHeld) or
	// the bytes are copied out (the other lookups): a hit that finds
	// them held waits in line up to HitQueueWait, then fails with
	// ErrBusy. Default DefaultHitMemory.
	HitMemory int64
	// HitQueueWait is how long a flash hit waits for HitMemory to have
	// room. The wait comes before the read and its FlashReadDeadline:
	// the device's health sees the device, not the line. Default
	// DefaultHitQueueWait.
	HitQueueWait time.Duration
	// MaxLateReads caps the flash reads abandoned at their deadline that
	// the device may still hold (feed.HealthOptions). Default 16.
	MaxLateReads int
	// ReadLimit bounds the flash hits read at once while the device is
	// overloaded (health.Limit): a hit past the limit is served from the
	// capacity tier at once (counted shed) and its copy stays. Its Target
	// is the average read time above which the limit falls; zero: a
	// tenth of FlashReadDeadline; negative: no limit.
	ReadLimit health.LimitOptions
	// SchedLag returns the process's recent scheduling latency, told to
	// the device's health with each read abandoned at its deadline: a
	// process starved of CPU makes reads late that the device answered
	// in time (health.StarvedShare). Nil: the Go runtime's
	// /sched/latencies over the last quarter second or so (schedlag.go).
	SchedLag func() time.Duration
	// NoSendfile turns off the flash hits sent straight from the device
	// (GetHeldFile): every flash hit is read into a hit
	// buffer. By default a hit of verified records (decision 0030) on a
	// device with a file descriptor is pinned and sent with sendfile(2).
	NoSendfile bool
	// RAMFiles keeps RAM's objects of ramfile.MinObject bytes and more in
	// memory files (ramfile, decision 0036), which a caller that can
	// send a file sends without copying them (Result.RAM), sized by
	// RAM and the ring; an object past the files' limits, or where the
	// system has no memory files, stays in Go's heap.
	RAMFiles bool
	// RAMHugePages packs the memory files into regions of huge pages
	// (ramfile.Options.Pack, decision 0041); without it each object has
	// a file of its own.
	RAMHugePages bool
	// RAMTmpfs is where the memory files are made (ramfile.Options.Tmpfs,
	// decision 0042): "" or "auto" a tmpfs of the process's own with
	// large folios where it may mount one, else memfd; "off" memfd; or a
	// directory on a tmpfs, New failing if it will not do.
	RAMTmpfs string
	// Logger receives the engine's messages. Nil: slog.Default().
	Logger *slog.Logger
	// BeforeFileRead, a test hook, is store.Options.BeforeFileRead:
	// called before each read from the device's file of a send from the
	// device, inside its time (a slow or failing device). Nil: nothing.
	BeforeFileRead func() error
}

// DefaultFlashReadDeadline is Options.FlashReadDeadline's default: a
// segment read takes 1 to 5 ms on an SSD, so 250 ms is 50 times that and
// about the worst a capacity read (a disk seek, an S3 GET) takes; past it,
// waiting longer for flash costs the client more than the capacity tier.
const DefaultFlashReadDeadline = 250 * time.Millisecond

// LastResortDeadlineFactor is how many FlashReadDeadlines a last-resort
// read (FindLastResort) waits by default: 8, 2 s with the default 250 ms.
// Its copy is the only answer left, so it waits far past the point where
// the capacity tier would have been faster, up to where a device that
// has not answered is stalled rather than slow (400 times a 5 ms SSD
// read; a loaded device's queue is hundreds of milliseconds), and not
// much further: the client has already waited for its upstream to fail.
// An operator who raised flash_read_deadline for a slower device gets a
// last resort as much longer.
const LastResortDeadlineFactor = 8

// DefaultHitMemory is Options.HitMemory's default: 64 MiB, 64 hits of
// 1 MiB segments in flight (a node's configuration derives its own from
// its RAM budget).
const DefaultHitMemory = 64 << 20

// DefaultHitQueueWait is Options.HitQueueWait's default: a player asks
// again after a 503 sooner than it would wait on a stalled answer.
const DefaultHitQueueWait = time.Second

// ErrBusy is a flash hit that waited HitQueueWait for HitMemory to have
// room (store.ErrBusy): answer 503 with Retry-After.
var ErrBusy = store.ErrBusy

// DefaultMaxLoads is Options.MaxLoads' default: 64 whole objects buffered
// at once (64 MiB of 1 MiB segments).
const DefaultMaxLoads = 64

// EnsureDefaults fills zero fields with defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.Epoch == 0 {
		o.Epoch = tier.DefaultEpoch
	}
	if o.MonitorPeriod == 0 {
		o.MonitorPeriod = tier.DefaultMonitorPeriod
	}
	if o.Threshold == 0 {
		o.Threshold = tier.DefaultThreshold
	}
	if o.Tier.Admission == nil {
		o.Tier.Admission = tier.Threshold{Max: o.Threshold}
	}
	if o.OriginTimeout == 0 {
		o.OriginTimeout = 30 * time.Second
	}
	if o.EnduranceCycles == 0 {
		o.EnduranceCycles = tier.DefaultEnduranceCycles
	}
	if o.MaxLoads == 0 {
		o.MaxLoads = DefaultMaxLoads
	}
	if o.FlashReadDeadline <= 0 {
		o.FlashReadDeadline = DefaultFlashReadDeadline
	}
	if o.LastResortReadDeadline <= 0 {
		o.LastResortReadDeadline = LastResortDeadlineFactor * o.FlashReadDeadline
	}
	if o.HitMemory <= 0 {
		o.HitMemory = DefaultHitMemory
	}
	if o.ReadLimit.Target == 0 {
		o.ReadLimit.Target = o.FlashReadDeadline / 10
	}
	if o.HitQueueWait <= 0 {
		o.HitQueueWait = DefaultHitQueueWait
	}
	o.Health.EnsureDefaults()
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Engine serves objects from RAM, flash and the capacity tier.
type Engine struct {
	opts   Options
	log    *slog.Logger
	origin origin.Origin
	flash  *store.Flash   // nil without a flash tier
	feed   *feed.Feeder   // nil without a flash tier
	health *feed.Health   // nil without a flash tier
	hits   *store.Hits    // nil without a flash tier
	files  *ramfile.Arena // RAM's memory files; nil unless Options.RAMFiles
	moves  chan move      // RAM hits whose bytes should move (ramfile.File.Sparse), for mover
	stop   chan struct{}  // closed by Close: mover returns

	maxCharge  int64 // the most chargeFiles counts against RAM: a quarter of it
	closeFiles sync.Once
	start      time.Time

	mu struct {
		sync.Mutex // protects c
		c          *tier.Cache
	}
	metaMu  sync.Mutex   // serializes metadata writes
	flights flights      // the loads in progress (flight.go)
	waiting atomic.Int64 // callers waiting for a load (fetch)

	readsWaiting atomic.Int64
	reads        *reads // the flash readers and their deadline watch; nil without a flash tier
	// limit bounds the flash hits being read at once (Options.ReadLimit):
	// hitsReading counts the reads on the device now (a buffered hit's
	// from its admission until its read returns; a send from the device's
	// while each of its reads from the file runs, so that a slow client
	// holding a pinned hit holds no room in the limit).
	limit struct {
		sync.Mutex // protects l
		l          *health.Limit
	}
	hitsReading atomic.Int64
	sched       *schedLag // the runtime's scheduling latency, unless Options.SchedLag
	counters    counters
	recovery    tier.RecoveryReport

	loads chan struct{} // a token per capacity-tier read in progress
	// inflight fences capacity-tier reads, which outlive the request
	// that started them (coalesced callers may still wait): StopLoads
	// cancels them and waits, so that what they read (the image store)
	// is not closed under them.
	inflight struct {
		sync.Mutex // protects stopped and Add on wg
		stopped    bool
		wg         sync.WaitGroup
		ctx        context.Context
		cancel     context.CancelFunc
	}
}

// counters are the engine's own counters, beside the core's.
type counters struct {
	originReads, originBytes, originErrors, coalesced atomic.Uint64
	abandoned                                         atomic.Uint64 // loads canceled when their last waiter left
	loadWaits                                         atomic.Uint64
	flashReads, flashReadErrors, flashReadBytes       atomic.Uint64
	// flash hits the core counted that the device then did not serve
	// (failed, late or skipped reads): served from the capacity tier.
	unservedHits, unservedBytes atomic.Uint64
	fileHits                    atomic.Uint64 // flash hits pinned for a send from the device
	// flash hits that would have been sent from the device but went the
	// buffered way (a probe, or a skip) because the device's reads were
	// degraded or too many were late (fileHit)
	fileHitsDeclined atomic.Uint64
	// the reads from the device's file of the sends from the device,
	// those past FlashReadDeadline, and those that failed (fileSend)
	fileReads, fileReadsLate, fileReadErrors atomic.Uint64
	// loads answered but not kept: RAM's memory files were at their limit
	notKept atomic.Uint64
}

// New starts an engine over the flash device dev (nil: RAM and capacity
// tier only) and the capacity tier org. It recovers or formats the flash
// cache on dev, then starts its feed, which runs the monitor too; Close
// stops them. The caller keeps ownership of dev.
func New(opts Options, dev device.Device, org origin.Origin) (*Engine, error) {
	opts.EnsureDefaults()
	e := &Engine{
		opts: opts, log: opts.Logger, origin: org, start: time.Now(),
		loads: make(chan struct{}, opts.MaxLoads),
	}
	e.inflight.ctx, e.inflight.cancel = context.WithCancel(context.Background())
	if opts.RAMFiles {
		// The operator's directory is checked before flash is opened and
		// recovered: a start it fails opens nothing.
		if err := ramfile.CheckTmpfs(opts.RAMTmpfs); err != nil {
			return nil, err
		}
	}
	if err := e.openCache(dev); err != nil {
		return nil, err
	}
	if opts.RAMFiles {
		o := e.mu.c.Options()
		// The objects in use are RAM's and the ring's: files beyond them
		// wait for a collection, which the arena then asks for.
		a, err := ramfile.New(ramfile.Options{Live: o.RAMBytes + o.RingBytes, Pack: opts.RAMHugePages, Tmpfs: opts.RAMTmpfs})
		switch {
		case err != nil:
			e.log.Warn("RAM's objects stay in Go's heap, copied into each answer", "err", err)
		default:
			e.files = a
			e.log.Info("RAM's objects of 32 KiB and more in files", "in", a.Stats().Backing)
			if opts.RAMHugePages {
				e.moves, e.stop = make(chan move, 64), make(chan struct{})
				e.maxCharge = o.RAMBytes / 4
				go e.mover()
			}
		}
	}
	if e.flash != nil {
		e.hits = store.NewHits(opts.HitMemory, opts.HitQueueWait, dev.Alignment())
		e.reads = newReads(e.runRead, e.abandon, opts.FlashReadDeadline)
		e.limit.l = health.NewLimit(opts.ReadLimit)
		if opts.SchedLag == nil {
			e.sched = newSchedLag()
		}
		e.health = feed.NewHealth("segments", feed.HealthOptions{Monitor: opts.Health, MaxLateReads: opts.MaxLateReads, Now: e.now})
		e.feed = feed.Start(e.mu.c, &e.mu.Mutex, e.flash, feed.Options{
			Period: opts.FeedPeriod, Epoch: opts.Epoch, Busy: opts.Busy, NoSync: opts.NoSync, AdaptClass: true,
			ReadsWaiting: func() int { return int(e.readsWaiting.Load()) }, Now: e.now, Logger: e.log,
			Produce: e.monitor, ProducePeriod: opts.MonitorPeriod, Health: e.health, ReadDeadline: opts.FlashReadDeadline,
		})
	}
	return e, nil
}

func (e *Engine) openCache(dev device.Device) error {
	if dev == nil {
		c, _, err := tier.New(e.opts.Tier, 0)
		e.mu.c = c
		return err
	}
	f, c, rep, err := store.Open(dev, e.opts.Tier, store.Options{Logger: e.log, Name: "segments", Trace: e.opts.Trace,
		BeforeFileRead: e.opts.BeforeFileRead})
	if err != nil {
		return fmt.Errorf("engine: opening the flash cache: %w", err)
	}
	e.flash, e.mu.c, e.recovery = f, c, rep
	return nil
}

// RAMFiles returns the counters of RAM's memory files, and false when
// RAM has none (Options.RAMFiles off or refused by the system).
func (e *Engine) RAMFiles() (ramfile.Stats, bool) {
	if e.files == nil {
		return ramfile.Stats{}, false
	}
	return e.files.Stats(), true
}

// now is the time passed to the core: monotonic time since start.
func (e *Engine) now() time.Duration { return time.Since(e.start) }

// A Result is an object and the tier that served it.
type Result struct {
	Data []byte
	Tier tier.Tier
	// Sum is Digest(Data), whichever tier served it (Get only; 0 from
	// GetWith): computed once when the bytes enter RAM, and kept in the
	// flash index when they move to flash (tier.Segment.Sum), where the
	// records' checksums vouch that the bytes read are the ones digested;
	// computed for each flash read only of a segment recovered at start. The server's ETag is made of it, so it names these
	// bytes, never a version of the title they may not belong to.
	Sum uint64

	buf *store.Buf // the flash hit buffer Data lies in (GetHeld), nil otherwise
	// RAM, a RAM hit of GetHeld and the other held lookups whose bytes
	// lie in a memory file (Options.RAMFiles), is that file: Data is
	// its bytes, mapped, valid until Release, and a caller that can
	// send a file sends a range of it (RAM.Range) without a copy.
	RAM *ramfile.File
	// File, a flash hit of GetHeldFile, is the hit's
	// bytes pinned on the device, to be sent from there (Data is nil):
	// Release unpins it.
	File *store.FileHit
}

// Release returns the flash hit buffer a Result of GetHeld holds to the
// pool and its bytes to Options.HitMemory: call it once the response is
// written, and use nothing of Data after. It does nothing for a Result
// that holds none (RAM, capacity tier, the other lookups), or twice.
func (r Result) Release() {
	r.buf.Release()
	r.File.Release()
	runtime.KeepAlive(r.RAM) // its mapping is in use until now
}

// Digest is the content digest of Result.Sum (xxHash64: several GB/s,
// so it costs a miss or a flash read little).
func Digest(data []byte) uint64 { return xxhash.Sum64(data) }

// Get returns the object o: from RAM, else from flash (verified; FlashStream
// §3.2: not copied into RAM), else from the capacity tier, read once however
// many clients ask at the same time and inserted at the RAM head. A flash
// read that fails or does not verify drops the flash copy and falls back to
// the capacity tier: a client never receives wrong bytes.
func (e *Engine) Get(ctx context.Context, o ident.Object) (Result, error) {
	return e.get(ctx, o.Key(), func(ctx context.Context) ([]byte, error) {
		obj, err := e.origin.Get(ctx, o)
		return obj.Data, err
	}, true, false, false)
}

// GetHeld is Get whose flash hit is served from a pooled buffer, bounded
// by Options.HitMemory, that the Result holds until Release: the caller
// must call Release once it has written Data (every Result, whatever its
// tier or error). A flash hit that waited HitQueueWait for room returns
// ErrBusy.
func (e *Engine) GetHeld(ctx context.Context, o ident.Object) (Result, error) {
	return e.get(ctx, o.Key(), func(ctx context.Context) ([]byte, error) {
		obj, err := e.origin.Get(ctx, o)
		return obj.Data, err
	}, true, true, false)
}

// GetHeldFile is GetHeld whose flash hit of verified records may come as
// Result.File, pinned for a send straight from the device (Data nil),
// unless Options.NoSendfile: a caller that can send a file
// (front.FileWriter) asks for it.
func (e *Engine) GetHeldFile(ctx context.Context, o ident.Object) (Result, error) {
	return e.get(ctx, o.Key(), func(ctx context.Context) ([]byte, error) {
		obj, err := e.origin.Get(ctx, o)
		return obj.Data, err
	}, true, true, true)
}

// FindHeldFile is FindHeld whose flash hit of verified records may come
// as Found.File, pinned for a send straight from the device (Data nil),
// unless Options.NoSendfile, as GetHeldFile's: the edge's fast path, on a
// writer that can send a file (front.FileWriter), asks for it. Load takes
// a Found with Data only: a caller that does not send the File reads it
// into memory first (File.Rest).
func (e *Engine) FindHeldFile(ctx context.Context, key string) Found {
	return e.find(ctx, key, false, true, true)
}

// A Loader reads an object's bytes from wherever it lives in full: the
// capacity tier, or another store (the image store's value log).
type Loader func(ctx context.Context) ([]byte, error)

// GetWith is Get for any tier key: on a miss in RAM and flash it calls load,
// once for all concurrent callers of the key, and inserts the result in
// RAM. Keys of different kinds of object must not collide ("v/" videos,
// "i/" images, "f/" files).
// Its Result has no Sum: callers that name objects by content compute
// their own (the image store keeps each variant's).
func (e *Engine) GetWith(ctx context.Context, key string, load Loader) (Result, error) {
	return e.get(ctx, key, load, false, false, false)
}

// GetWithHeld is GetWith whose flash hit is served from a pooled buffer
// the Result holds until Release, as GetHeld's: the caller must call
// Release once it has written Data (every Result, whatever its tier or
// error), and use nothing of Data after.
func (e *Engine) GetWithHeld(ctx context.Context, key string, load Loader) (Result, error) {
	return e.get(ctx, key, load, false, true, false)
}

// Cached is GetWith for callers that know nothing of the engine (the image
// store's Cache): the bytes and the tier that served them.
func (e *Engine) Cached(ctx context.Context, key string, load func(context.Context) ([]byte, error)) ([]byte, tier.Tier, error) {
	res, err := e.GetWith(ctx, key, load)
	return res.Data, res.Tier, err
}

// get is GetWith, with Result.Sum if digest is set, and a flash hit's
// buffer held in the Result if held is. All callers of one key pass the
// same digest (keys are per kind of object).
func (e *Engine) get(ctx context.Context, key string, load Loader, digest, held, file bool) (Result, error) {
	f := e.find(ctx, key, digest, held, file)
	if f.err != nil {
		return f.Result, f.err
	}
	if f.Tier != tier.Miss {
		return f.Result, nil
	}
	return e.fetch(ctx, key, load, f.token, digest, held)
}

// Found is what Find found of a key: its bytes, when RAM or flash held
// them (Tier RAM or SSD), else (Tier Miss) what Load needs to read it
// without looking it up again.
type Found struct {
	Result
	key   string
	token tier.Token
	held  bool  // looked up by a held lookup: Load's Result may hold a memory file
	err   error // ErrBusy: flash held it, but no hit buffer had room; Load returns it
	shed  bool  // flash holds it, but the read limit turned its read away (Shed)
}

// Shed reports a miss whose copy flash holds but did not read: the
// device is overloaded and the read limit turned the read away
// (Options.ReadLimit). The copy stays; Load reads it from the capacity
// tier and does not keep it (it is on flash), so a caller that can
// relay the capacity tier's answer without keeping it (the edge) does
// better to relay it than to Load.
func (f Found) Shed() bool { return f.shed }

// Find is the first half of GetWith: it looks key up in RAM, then flash
// (a flash copy that cannot be read counts as a miss), counting the
// access as GetWith does, and never loads. After a miss, Load is the
// second half: a caller that looks up before it knows whether it will
// load (a fast path that answers only hits) asks the tiers once.
func (e *Engine) Find(key string) Found {
	return e.find(context.Background(), key, false, false, false)
}

// FindHeld is Find whose flash hit is served from a pooled buffer the
// Found holds, as GetHeld's, waiting for room in it until ctx ends (or
// HitQueueWait: then Load returns ErrBusy): the caller must call Release
// once it has written Data, or hand the Found to Load, whose Result then
// holds the buffer.
func (e *Engine) FindHeld(ctx context.Context, key string) Found {
	return e.find(ctx, key, false, true, false)
}

// FindLastResort is FindHeld for a caller whose capacity tier failed
// after a miss (an edge whose upstream is down): a flash copy that find
// counted a miss without dropping it (its read passed FlashReadDeadline,
// or was skipped because the device's reads are degraded or late) is
// read with a longer deadline, LastResortReadDeadline, since nothing else
// can answer; past it, or when ctx ends, it is a miss (the copy stays),
// so that a stalled device and a failed upstream still answer within
// bounded time. The read is outside the device's health accounting (not
// admitted, not timed); a copy that does not verify is dropped, as find
// drops it.
func (e *Engine) FindLastResort(ctx context.Context, key string) Found {
	e.mu.Lock()
	l := e.mu.c.Lookup(key, e.now())
	ram := ramOf(l)
	e.mu.Unlock()
	switch l.Tier {
	case tier.RAM:
		return Found{Result: e.ramResult(key, ram, true, ram.sum)}
	case tier.Miss:
		return Found{Result: Result{Tier: tier.Miss}, key: key, token: l.Token}
	}
	buf, err := e.hits.Acquire(ctx, e.flash.SpanSize(l.Seg))
	if err != nil {
		return Found{Result: Result{Tier: tier.Miss}, key: key, err: err}
	}
	data, err := e.readLastResort(ctx, l.Seg, buf)
	switch {
	case err == nil:
		return Found{Result: Result{Data: data, Tier: tier.SSD, Sum: l.Seg.Sum, buf: buf}}
	case ctx.Err() != nil:
		return Found{Result: Result{Tier: tier.Miss}, key: key, err: err}
	}
	return Found{Result: Result{Tier: tier.Miss}, key: key, token: e.flashFailed(l.Seg, err)}
}

// readLastResort reads seg into buf for FindLastResort on a goroutine of
// its own, waiting up to LastResortReadDeadline or until ctx ends: then
// it returns feed.ErrDeadline (or ctx's error) and leaves the read
// running, which releases buf once the device is done with it, as an
// abandoned read on the request path does. On any error buf is released
// or left to the read; on success the caller holds it. Not on the
// engine's readers: their watch keeps one deadline for every read
// (reads.go), and a last resort is rare (an upstream failing on a copy
// the request path missed).
func (e *Engine) readLastResort(ctx context.Context, seg tier.Segment, buf *store.Buf) ([]byte, error) {
	var state atomic.Int32
	var data []byte
	var err error
	done := make(chan struct{})
	e.readsWaiting.Add(1) // reads before writes, as for a read on the request path
	go func() {
		d, rerr := e.flash.ReadSegmentInto(seg, buf.Bytes())
		e.readsWaiting.Add(-1)
		e.counters.flashReads.Add(1)
		if rerr == nil {
			e.counters.flashReadBytes.Add(uint64(len(d)))
		}
		if !state.CompareAndSwap(readRunning, readDone) {
			buf.Release() // abandoned: nobody sees what was read
			return
		}
		data, err = d, rerr
		close(done)
	}()
	t := time.NewTimer(e.opts.LastResortReadDeadline)
	defer t.Stop()
	var late error
	select {
	case <-done:
	case <-t.C:
		late = feed.ErrDeadline
	case <-ctx.Done():
		late = ctx.Err()
	}
	if late != nil && state.CompareAndSwap(readRunning, readAbandoned) {
		return nil, late
	}
	<-done // it completed as the wait ended
	if err != nil {
		buf.Release()
		return nil, err
	}
	return data, nil
}

// Load is GetWith for a key that Find missed: it loads it with load, once
// for all concurrent callers, and inserts it into RAM, unless the key was
// invalidated since the Find (the load is then not shared with loads that
// began before it, and not inserted).
func (e *Engine) Load(ctx context.Context, f Found, load Loader) (Result, error) {
	if f.err != nil {
		return f.Result, f.err
	}
	if f.Tier != tier.Miss {
		return f.Result, nil
	}
	return e.fetch(ctx, f.key, load, f.token, false, f.held)
}

// find looks key up in RAM and flash, with Result.Sum if digest is set.
// A flash hit's bytes are in a pooled buffer the Result holds if held is
// set, else copied out of it into the caller's own; with file, a hit of
// verified records whose digest is known is pinned on the device instead
// (Result.File), unread.
func (e *Engine) find(ctx context.Context, key string, digest, held, file bool) Found {
	sum := func(data []byte, known uint64) uint64 {
		if !digest || known != 0 {
			return known
		}
		return Digest(data)
	}
	e.mu.Lock()
	l := e.mu.c.Lookup(key, e.now())
	ram := ramOf(l)
	e.mu.Unlock()
	switch l.Tier {
	case tier.RAM:
		return Found{Result: e.ramResult(key, ram, held, sum(ram.data, ram.sum))}
	case tier.SSD:
		var data []byte
		var buf *store.Buf
		var err error
		if file && !e.opts.NoSendfile && (!digest || l.Seg.Sum != 0) {
			var h *store.FileHit
			if h, data, buf, err = e.fileHit(ctx, l.Seg); h != nil {
				return Found{Result: Result{Tier: tier.SSD, Sum: l.Seg.Sum, File: h}}
			}
		} else {
			data, buf, err = e.readFlash(ctx, l.Seg)
		}
		if err == nil {
			if !held {
				data = append([]byte(nil), data...)
				buf.Release()
				buf = nil
			}
			// The bytes verified against the records' checksums are the
			// ones written, whose digest the index kept if RAM had it.
			return Found{Result: Result{Data: data, Tier: tier.SSD, Sum: sum(data, l.Seg.Sum), buf: buf}}
		}
		e.counters.unservedHits.Add(1)
		e.counters.unservedBytes.Add(uint64(l.Seg.Size))
		if errors.Is(err, ErrBusy) || ctx.Err() != nil {
			// Not the device's doing, nor the capacity tier's to answer:
			// the copy stays, the caller answers 503 (or nobody).
			return Found{Result: Result{Tier: tier.Miss}, key: key, err: err}
		}
		l.Token = e.flashFailed(l.Seg, err)
		return Found{Result: Result{Tier: tier.Miss}, key: key, token: l.Token, held: held, shed: errors.Is(err, errShed)}
	}
	return Found{Result: Result{Tier: tier.Miss}, key: key, token: l.Token, held: held}
}

// ramEntry is what a RAM hit reads of its entry, under the engine's lock
// (Rehome may replace the bytes and their hold after).
type ramEntry struct {
	data []byte
	hold any
	sum  uint64
}

func ramOf(l tier.Lookup) ramEntry {
	if l.Tier != tier.RAM {
		return ramEntry{}
	}
	return ramEntry{data: l.Entry.Data, hold: l.Entry.Hold, sum: l.Entry.Sum}
}

// ramResult is the Result of a RAM hit on key's entry: its bytes, or if
// they lie in a memory file (Options.RAMFiles), the file too (Result.RAM)
// for a caller that holds the Result until Release (held); a copy of them
// in Go's heap for one that does not. A memory file whose bytes should
// move (ramfile.File.Sparse) is handed to the mover.
func (e *Engine) ramResult(key string, entry ramEntry, held bool, sum uint64) Result {
	f, ok := entry.hold.(*ramfile.File)
	if ok && f.Sparse() {
		select {
		case e.moves <- move{key, f}:
		default:
			f.Unmoved()
		}
	}
	switch {
	case !ok:
		return Result{Data: entry.data, Tier: tier.RAM, Sum: sum}
	case held:
		return Result{Data: entry.data, Tier: tier.RAM, Sum: sum, RAM: f}
	}
	data := append([]byte(nil), entry.data...)
	runtime.KeepAlive(f)
	return Result{Data: data, Tier: tier.RAM, Sum: sum}
}

// chargeFiles counts against RAM's budget what the memory files' regions
// hold beyond their objects past half the slack (ramfile.Arena.Waste),
// up to a quarter of the budget: RAM then keeps fewer segments, so that
// its segments, wherever they are, and the regions stay within the
// memory budget's share; a small RAM (a few regions) keeps three
// quarters of its room whatever the regions hold. Moves (mover) bring
// it down again. Under e.mu.
func (e *Engine) chargeFiles() {
	if e.moves != nil { // regions: ram_huge_pages
		e.mu.c.ChargeRAM(min(e.files.Waste()-e.files.Slack()/2, e.maxCharge))
	}
}

// A move is a RAM object whose memory file should move: its bytes lie in
// a region of the arena that holds little else, or in a file of their
// own (ramfile.File.Sparse).
type move struct {
	key string
	f   *ramfile.File
}

// mover moves RAM's objects the hits found sparse (ramResult) into the
// arena's region being filled, one at a time, so that the regions they
// kept can be freed: a copy of the bytes (Arena.Move), then RAM's entry
// pointed at it (tier.Cache.Rehome) if it still holds the old file.
// Readers of the old file keep it until they are done.
func (e *Engine) mover() {
	for {
		select {
		case <-e.stop:
			return
		case m := <-e.moves:
			nf, ok := e.files.Move(m.f)
			if !ok {
				continue
			}
			e.mu.Lock()
			ok = e.mu.c.Rehome(m.key, m.f, nf.Bytes(), nf)
			e.mu.Unlock()
			if !ok {
				nf.Close() // nobody saw it
			}
		}
	}
}

// errSkipped is a flash read not issued because the device's reads are
// degraded or too many reads are late on it.
var errSkipped = errors.New("engine: flash reads degraded")

// readFlash reads a segment from flash into a hit buffer, which it
// returns with the segment's bytes (lying in it): it first waits in line
// for the buffer's bytes (Options.HitMemory, up to HitQueueWait: ErrBusy
// past it), then, unless the device's reads are degraded (then only a
// probe goes, once per backoff), reads within FlashReadDeadline: past it,
// it returns feed.ErrDeadline and leaves the read running on its own,
// which keeps the buffer until the device is done with it. The read runs
// on one of the engine's readers and its deadline is kept by the
// engine's one deadline watch (reads.go): no goroutine nor timer per
// read. While a read runs, the feed issues no caching write (reads before
// writes, §3.2.2). The lines are not the device: only the read itself,
// from when a reader issues it, is timed against the deadline, so
// neither a burst of slow clients holding every buffer nor the wait for
// a reader to be scheduled marks a healthy device degraded; nor does a
// read made late by the process's own wait for a CPU (abandon).
func (e *Engine) readFlash(ctx context.Context, seg tier.Segment) ([]byte, *store.Buf, error) {
	// The read limit first: a hit it sheds does not wait in line for a
	// buffer (HitQueueWait) to be turned away after.
	if !e.admitRead(true) {
		return nil, nil, errShed
	}
	buf, err := e.hits.Acquire(ctx, e.flash.SpanSize(seg))
	if err != nil {
		e.hitsReading.Add(-1)
		return nil, nil, err
	}
	ok, probe := e.health.Admit(health.Read)
	if !ok {
		e.hitsReading.Add(-1)
		buf.Release()
		return nil, nil, errSkipped
	}
	return e.issueRead(seg, probe, true, buf)
}

// errShed is a flash hit the read limit turned away (Options.ReadLimit):
// the device is overloaded, the capacity tier answers and the copy stays.
var errShed = fmt.Errorf("%w: flash device overloaded", errSkipped)

// admitRead reports whether the read limit lets one more hit read the
// device now, and if so and count is set, counts it among hitsReading
// (a buffered read, until it returns; a send from the device counts
// each of its reads as it makes it: fileSend).
func (e *Engine) admitRead(count bool) bool {
	e.limit.Lock()
	defer e.limit.Unlock()
	ok := e.limit.l.Admit(int(e.hitsReading.Load()), e.now())
	if ok && count {
		e.hitsReading.Add(1)
	}
	return ok
}

// readTook reports a read of the device that took d to the read limit.
// A read past the limit's target is reported less the process's recent
// scheduling latency: a process starved of CPU finds its reads slow
// because it ran them late, not because the device queued them, and
// shedding them would send hits upstream, which costs more CPU (as a
// starved process's late reads are not the device's timeouts, decision
// 0033).
func (e *Engine) readTook(d time.Duration) {
	if d > e.opts.ReadLimit.Target {
		d = max(d-e.schedLag(), 0)
	}
	e.limit.Lock()
	e.limit.l.Done(d, e.now())
	e.limit.Unlock()
}

// readProbe is readFlash for a probe the device's health let through
// before the hit buffer was had (fileHit): the probe is withdrawn if
// the buffer is not had.
func (e *Engine) readProbe(ctx context.Context, seg tier.Segment) ([]byte, *store.Buf, error) {
	buf, err := e.hits.Acquire(ctx, e.flash.SpanSize(seg))
	if err != nil {
		e.health.Abort(health.Read)
		return nil, nil, err
	}
	return e.issueRead(seg, true, false, buf)
}

// issueRead reads seg into buf on a reader, within FlashReadDeadline
// (readFlash).
func (e *Engine) issueRead(seg tier.Segment, probe, limited bool, buf *store.Buf) ([]byte, *store.Buf, error) {
	e.readsWaiting.Add(1)
	r := &flashRead{seg: seg, probe: probe, limited: limited, buf: buf, wake: make(chan struct{}, 1)}
	e.reads.start(r)
	<-r.wake
	if r.state.Load() == readAbandoned {
		return nil, nil, feed.ErrDeadline
	}
	if r.err != nil {
		buf.Release()
		return nil, nil, r.err
	}
	return r.data, buf, nil
}

// A flashRead is one read of a segment, handed from the reader that
// reads it to the request that waits, unless the deadline watch
// abandoned it first.
type flashRead struct {
	seg   tier.Segment
	probe bool
	// limited: the read limit admitted the read's hit (admitRead), which
	// is done with the device when the read returns
	limited bool
	send    *fileSend    // the send from the device whose read this is, made by its sender; nil: a buffered read
	state   atomic.Int32 // readRunning, then readDone (the reader) or readAbandoned (the watch)
	buf     *store.Buf   // the hit buffer read into: the request's once done, the reader's after an abandon
	data    []byte       // set before wake, never after an abandon
	err     error
	wake    chan struct{} // one send: by whichever of the reader and the watch decided the state

	deadline   time.Time
	issued     time.Time  // when its reader issued it (listed)
	prev, next *flashRead // in the watch's list, by deadline (reads.go)
	listed     bool
}

const (
	readRunning int32 = iota
	readDone
	readAbandoned
)

// runRead reads r.seg into r.buf, on a reader. If the watch abandoned
// the read at its deadline, the buffer is released here, once the device
// has finished with it: it goes back to the pool only then, and what was
// read into it is never handed to anyone.
func (e *Engine) runRead(r *flashRead) {
	data, err := e.flash.ReadSegmentInto(r.seg, r.buf.Bytes())
	e.reads.unlist(r)
	e.readsWaiting.Add(-1)
	if r.limited {
		e.readTook(time.Since(r.issued))
		e.hitsReading.Add(-1)
	}
	e.counters.flashReads.Add(1)
	if err == nil {
		e.counters.flashReadBytes.Add(uint64(len(data)))
	}
	if !r.state.CompareAndSwap(readRunning, readDone) {
		e.health.Late(-1)
		r.buf.Release()
		return
	}
	e.health.Done(health.Read, r.probe, err)
	r.data, r.err = data, err
	r.wake <- struct{}{}
}

// abandon gives up r at its deadline, for the watch: the request is
// woken to be served from the capacity tier, and the read counts as a
// timeout of the device, unless it completed meanwhile or the process
// was starved of CPU (health.Monitor.Late). The read of a send from the
// device is not abandoned (its header is out; its sender waits in
// splice(2)): it counts as a timeout, and among the late reads until it
// returns (fileSend.FileReadEnded), and nobody is woken.
func (e *Engine) abandon(r *flashRead) {
	e.health.Late(1) // before the abandon, so that runRead's -1 never comes first
	if !r.state.CompareAndSwap(readRunning, readAbandoned) {
		e.health.Late(-1) // it completed as the deadline passed: runRead wakes the request
		return
	}
	if r.send != nil {
		e.counters.fileReadsLate.Add(1)
		if r.send.told.CompareAndSwap(false, true) { // the send is one read for the device's health
			e.health.Timeout(health.Read, false, e.schedLag(), e.opts.FlashReadDeadline)
		}
		return
	}
	e.health.Timeout(health.Read, r.probe, e.schedLag(), e.opts.FlashReadDeadline)
	r.wake <- struct{}{}
}

// schedLag is the process's recent scheduling latency (Options.SchedLag).
func (e *Engine) schedLag() time.Duration {
	if e.opts.SchedLag != nil {
		return e.opts.SchedLag()
	}
	if e.sched == nil {
		return 0
	}
	return e.sched.lag()
}

// flashFailed handles a flash read that did not serve, and returns the
// token for the capacity read that replaces it. A copy the device failed
// to read or that did not verify is dropped; one that was not read
// (degraded device, deadline) stays: the device may serve it again.
func (e *Engine) flashFailed(seg tier.Segment, err error) tier.Token {
	if !errors.Is(err, errSkipped) && !errors.Is(err, feed.ErrDeadline) {
		return e.dropFlash(seg, err)
	}
	if errors.Is(err, feed.ErrDeadline) {
		e.counters.flashReadErrors.Add(1)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.mu.c.Token()
}

// dropFlash forgets a flash copy that could not be read and returns the
// token for the capacity read that replaces it.
func (e *Engine) dropFlash(seg tier.Segment, err error) tier.Token {
	e.counters.flashReadErrors.Add(1)
	if !errors.Is(err, store.ErrMismatch) {
		e.log.Warn("flash read failed; serving from the capacity tier", "key", seg.Key, "err", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mu.c.Drop(seg)
	return e.mu.c.Token()
}

// fetch loads key once for all concurrent callers and inserts it into RAM.
// The load runs while at least one caller waits for it (or holds it:
// Hold), whoever started it, and is canceled when the last has gone,
// unless it has its bytes already and is only storing them. A held caller
// (held) gets the bytes RAM kept in a memory file, if they are in one
// (Result.RAM), so that the heap's copy the load read goes as soon as the
// load is over, however long the answers take; the others get the heap's.
func (e *Engine) fetch(ctx context.Context, key string, load Loader, tok tier.Token, digest, held bool) (Result, error) {
	// Callers share a load only under the same invalidation token: one that
	// looked up after an invalidation must not get bytes read before it.
	name := key + "\x00" + strconv.FormatUint(uint64(tok), 10)
	f, leader := e.flights.join(name, func(f *flight) {
		res, err := e.load(ctx, f, key, load, tok, digest)
		e.flights.finish(f, res, err)
	})
	e.waiting.Add(1)
	defer e.waiting.Add(-1)
	select {
	case <-f.done:
		if !leader {
			e.counters.coalesced.Add(1)
		}
		if f.err != nil {
			return Result{Tier: tier.Miss}, f.err
		}
		res := f.res
		switch {
		case res.RAM == nil:
		case held:
			res.Data = res.RAM.Bytes()
		default:
			res.RAM = nil
		}
		return res, nil
	case <-ctx.Done():
		e.flights.leave(f)
		return Result{Tier: tier.Miss}, ctx.Err()
	}
}

// load runs flight f: it reads key with load, under a context of its own
// (ctx's values, not its cancellation: the callers come and go) that is
// canceled when f is abandoned, after OriginTimeout or by StopLoads, and
// inserts what it read into RAM.
func (e *Engine) load(ctx context.Context, f *flight, key string, load Loader, tok tier.Token, digest bool) (Result, error) {
	miss := Result{Tier: tier.Miss}
	if !e.beginLoad() {
		return miss, ErrStopped
	}
	defer e.inflight.wg.Done()
	lctx, abandon := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), holdKey{}, heldFlight{&e.flights, f}))
	defer abandon()
	if !e.flights.setCancel(f, abandon) {
		return miss, context.Canceled // abandoned before it began
	}
	rctx, cancel := context.WithTimeout(lctx, e.opts.OriginTimeout)
	defer cancel()
	defer context.AfterFunc(e.inflight.ctx, cancel)()
	if err := e.acquireLoad(rctx); err != nil {
		return miss, err
	}
	defer func() { <-e.loads }()
	data, err := load(rctx)
	if err == nil {
		// It has the bytes: storing them costs nothing upstream, and
		// goes on even if its last waiter left as it returned (the
		// bytes of a body complete are then kept, not thrown away).
		e.flights.storing(f)
	}
	if err != nil {
		switch {
		case lctx.Err() != nil:
			e.counters.abandoned.Add(1) // not the origin's failure
		case !errors.Is(err, origin.ErrNotFound):
			e.counters.originErrors.Add(1)
		}
		return miss, err
	}
	e.counters.originReads.Add(1)
	e.counters.originBytes.Add(uint64(len(data)))
	res := Result{Data: data, Tier: tier.Miss}
	if digest {
		res.Sum = Digest(data)
	}
	// The bytes RAM keeps: a memory file's, if they can be one (fetch
	// gives it to held callers; the others answer from the heap's).
	kept, hold := data, any(nil)
	if e.files != nil {
		f, ok := e.files.Put(data)
		switch {
		case ok:
			kept, hold, res.RAM = f.Bytes(), f, f
		case e.files.Full(len(data)):
			// The files are at their limit (RAM's objects, and those
			// that answers in flight to slow clients still hold): kept
			// in the heap, RAM would take the node past its memory
			// budget. Answered, not kept (decision 0044).
			e.counters.notKept.Add(1)
			return res, nil
		}
	}
	e.mu.Lock()
	e.chargeFiles()
	e.mu.c.InsertSum(key, int64(len(data)), kept, hold, res.Sum, tok, e.now())
	e.mu.Unlock()
	return res, nil
}

// Invalidate makes every cached object of prefix (tier key prefix, e.g.
// ident.VideoPrefix) unservable, durably: it returns once the flash
// metadata recording it is synced.
func (e *Engine) Invalidate(prefix string) error {
	_, err := e.Purge(prefix)
	return err
}

// monitor is one pass of the RAM monitor (§3.2.1), which the feed runs
// every MonitorPeriod: it returns how many segments it queued for flash.
func (e *Engine) monitor() int {
	if e.sched != nil {
		e.sched.tick(time.Now())
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.chargeFiles()
	return e.mu.c.Monitor(e.now())
}

// acquireLoad takes a load token, waiting (and counting the wait) when
// MaxLoads are in progress, until ctx is done.
func (e *Engine) acquireLoad(ctx context.Context) error {
	select {
	case e.loads <- struct{}{}:
		return nil
	default:
	}
	e.counters.loadWaits.Add(1)
	select {
	case e.loads <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// LoadLimit is the most capacity-tier reads in progress at once
// (Options.MaxLoads): the edge sizes its upstream connection pool by it.
func (e *Engine) LoadLimit() int { return cap(e.loads) }

// ErrStopped is a capacity-tier read asked for after StopLoads.
var ErrStopped = errors.New("engine: stopping: no new capacity-tier reads")

func (e *Engine) beginLoad() bool {
	e.inflight.Lock()
	defer e.inflight.Unlock()
	if e.inflight.stopped {
		return false
	}
	e.inflight.wg.Add(1)
	return true
}

// StopLoads refuses new capacity-tier reads, cancels those in progress and
// waits up to wait for them to return; it reports whether they all did.
// A server calls it once its handlers are done, before closing what the
// loads read.
func (e *Engine) StopLoads(wait time.Duration) bool {
	e.inflight.Lock()
	e.inflight.stopped = true
	e.inflight.Unlock()
	e.inflight.cancel()
	done := make(chan struct{})
	go func() { e.inflight.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(wait):
		return false
	}
}

// Close stops the monitor and the feed, writes the ring's last segments to
// flash in whole blocks (the last one padded), and syncs the flash device.
// Calling it again returns the first call's result.
func (e *Engine) Close() error {
	if e.files != nil {
		e.closeFiles.Do(func() {
			if e.stop != nil {
				close(e.stop)
			}
			e.files.Close()
		})
	}
	if e.feed == nil {
		return nil
	}
	err := e.feed.Close()
	e.reads.close()
	return err
}

// Flash is the flash cache's executor, nil without a flash tier (for
// tools and tests: its writes must not overlap the feed's, which Close
// stops).
func (e *Engine) Flash() *store.Flash { return e.flash }

// FlashSegment reports where key lies on flash when it is not also in
// RAM.
func (e *Engine) FlashSegment(key string) (tier.Segment, bool) { return e.flashSegment(key) }

// flashSegment reports where key lies on flash when it is not also in RAM
// (for tests).
func (e *Engine) flashSegment(key string) (tier.Segment, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mu.c.InRAM(key) {
		return tier.Segment{}, false
	}
	return e.mu.c.FlashSegment(key)
}
