package flashstream

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/quantile"
	"github.com/strata-media/strata/internal/workload"
)

// A system is a storage stack under test: it serves segment requests from
// its caches and devices in the loop's virtual time.
type system interface {
	// Name identifies the configuration, e.g. "FlashStream(LRU)".
	Name() string
	// Start schedules the system's periodic work (monitor, feed, epochs).
	Start()
	// Serve handles a request for segment seg and calls done when the
	// response is complete, with the slowest tier that served part of it
	// (tier.Miss for the disk).
	Serve(seg int, done func(from tier.Tier))
	// Counters are the system's cumulative counters.
	Counters() counters
	// SSD is the flash device, nil when there is none.
	SSD() *des.Disk
	// HDD is the capacity device.
	HDD() *des.Disk
}

// counters are cumulative counts of what served the requests. Hit ratios
// use each system's own unit, as the paper's measurements did: segments for
// FlashStream, 128 KiB records for ZFS, 4 KiB blocks for flashcache.
type counters struct {
	Requests                     int64
	RAMBytes, SSDBytes, HDDBytes int64 // bytes served from each tier
	Units, SSDUnits, RAMUnits    int64 // lookups and hits in the system's unit
	SSDCachedBytes               int64 // data bytes cached on flash now
	SSDCapacity                  int64 // bytes of flash the cache may fill
	// SSDFilled is the share of the cache's flash space in use: blocks
	// holding data (FlashStream, ZFS), occupied slots (flashcache).
	SSDFilled float64
}

func (c counters) sub(o counters) counters {
	return counters{
		Requests: c.Requests - o.Requests,
		RAMBytes: c.RAMBytes - o.RAMBytes, SSDBytes: c.SSDBytes - o.SSDBytes, HDDBytes: c.HDDBytes - o.HDDBytes,
		Units: c.Units - o.Units, SSDUnits: c.SSDUnits - o.SSDUnits, RAMUnits: c.RAMUnits - o.RAMUnits,
		SSDCachedBytes: c.SSDCachedBytes, SSDCapacity: c.SSDCapacity, SSDFilled: c.SSDFilled,
	}
}

// Workload is FlashStream §5.1's request generator: every 1/Rate seconds a
// title by a Zipf-like law and one of its segments uniformly.
type Workload struct {
	Rate     float64
	Duration time.Duration
	Zipf     *workload.Zipf
	Seed     uint64
	// MaxOutstanding, if positive, bounds the requests in flight: a request
	// arriving beyond it is not sent and counts as a miss, so a collapsed
	// system is not offered an unbounded queue.
	MaxOutstanding int
	// Stop, if set, is asked before each arrival and ends the run early.
	Stop func() bool
}

// Result is what one run at a fixed rate measured.
type Result struct {
	System    string  `json:"system"`
	Rate      float64 `json:"rate"`
	Seconds   float64 `json:"seconds"`
	Requests  int64   `json:"requests"`
	Misses    int64   `json:"misses"`
	MissRatio float64 `json:"miss_ratio"`
	// SSDHitRatio is the fraction of lookups (in the system's unit) that
	// hit flash; SSDByteRatio the fraction of requested bytes served from
	// flash; RAMHitRatio likewise for RAM.
	SSDHitRatio  float64 `json:"ssd_hit_ratio"`
	SSDByteRatio float64 `json:"ssd_byte_ratio"`
	RAMHitRatio  float64 `json:"ram_hit_ratio"`
	SSDUtil      float64 `json:"ssd_util"`
	HDDUtil      float64 `json:"hdd_util"`
	SSDWriteMBps float64 `json:"ssd_write_mbps"`
	SSDFill      float64 `json:"ssd_fill"`
	// SSDLateRatio is the fraction of requests served from flash that
	// missed their deadline (FlashStream §5.3 reports 3% with 4 KiB blocks).
	SSDLateRatio float64 `json:"ssd_late_ratio"`
	P50Ms        float64 `json:"p50_ms"`
	P99Ms        float64 `json:"p99_ms"`
	MaxMs        float64 `json:"max_ms"`
}

// runner drives requests into a system.
type runner struct {
	loop *des.Loop
	sys  system
	cat  *des.Catalog
	rng  *rand.Rand
}

// Run offers w to sys from now and returns what it measured. Requests not
// complete one deadline after the last arrival count as misses.
func Run(l *des.Loop, sys system, cat *des.Catalog, w Workload) Result {
	r := &runner{loop: l, sys: sys, cat: cat, rng: rand.New(rand.NewPCG(w.Seed, uint64(w.Rate*1000)))}
	st := &runState{start: l.Now(), before: sys.Counters(), busy0: r.busy(l.Now())}
	if s := sys.SSD(); s != nil {
		st.written0 = s.BytesWritten
	}
	st.n = int64(w.Duration.Seconds() * w.Rate)
	r.arrive(w, st, 0)
	end := st.start + w.Duration
	for l.Now() < end && !st.stopped {
		l.RunUntil(min(l.Now()+time.Minute, end))
	}
	l.RunUntil(l.Now() + cat.Duration)
	st.misses += st.sent - int64(len(st.lat)) - st.dropped // still outstanding after their deadline
	return r.result(w, st)
}

// runState is one run's bookkeeping.
type runState struct {
	start           time.Duration
	before          counters
	busy0           [2]time.Duration
	written0        int64
	n, sent         int64
	outstanding     int
	misses, dropped int64
	lat             []float64
	stopped         bool
	served, late    [3]int64 // by tier.Tier
}

// arrive sends request i and schedules the next one, so the event queue
// holds one pending arrival rather than the whole run.
func (r *runner) arrive(w Workload, st *runState, i int64) {
	if i >= st.n {
		return
	}
	at := st.start + time.Duration(float64(i)/w.Rate*float64(time.Second))
	r.loop.At(at, func() {
		if w.Stop != nil && w.Stop() {
			st.n, st.stopped = i, true
			return
		}
		st.sent++
		r.send(w, st, at)
		r.arrive(w, st, i+1)
	})
}

func (r *runner) send(w Workload, st *runState, at time.Duration) {
	if w.MaxOutstanding > 0 && st.outstanding >= w.MaxOutstanding {
		st.misses++
		st.dropped++
		return
	}
	st.outstanding++
	seg := r.cat.Pick(w.Zipf.Draw(r.rng), r.rng)
	r.sys.Serve(seg, func(from tier.Tier) {
		st.outstanding--
		d := r.loop.Now() - at
		st.lat = append(st.lat, float64(d)/1e6)
		st.served[from]++
		if d > r.cat.Duration {
			st.misses++
			st.late[from]++
		}
	})
}

func (r *runner) busy(t time.Duration) [2]time.Duration {
	var b [2]time.Duration
	if s := r.sys.SSD(); s != nil {
		b[0] = s.Model().Busy(t)
	}
	b[1] = r.sys.HDD().Model().Busy(t)
	return b
}

func (r *runner) result(w Workload, st *runState) Result {
	now := r.loop.Now()
	c := r.sys.Counters().sub(st.before)
	span := float64(now - st.start)
	b := r.busy(now)
	res := Result{
		System: r.sys.Name(), Rate: w.Rate, Seconds: float64(now-st.start-r.cat.Duration) / 1e9,
		Requests: st.sent, Misses: st.misses, MissRatio: ratio(st.misses, st.sent),
		SSDHitRatio: ratio(c.SSDUnits, c.Units), RAMHitRatio: ratio(c.RAMUnits, c.Units),
		SSDByteRatio: ratio(c.SSDBytes, c.RAMBytes+c.SSDBytes+c.HDDBytes),
		SSDUtil:      float64(b[0]-st.busy0[0]) / span, HDDUtil: float64(b[1]-st.busy0[1]) / span,
		SSDFill: c.SSDFilled,
	}
	if s := r.sys.SSD(); s != nil {
		res.SSDWriteMBps = float64(s.BytesWritten-st.written0) / 1e6 / (span / 1e9)
	}
	res.SSDLateRatio = ratio(st.late[tier.SSD], st.served[tier.SSD])
	res.P50Ms, res.P99Ms, res.MaxMs = percentiles(st.lat)
	return res
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// percentiles sorts lat and returns its median, 99th percentile and
// largest sample by the nearest-rank rule.
func percentiles(lat []float64) (p50, p99, maxv float64) {
	slices.Sort(lat)
	return quantile.NearestRank(lat, 0.50), quantile.NearestRank(lat, 0.99), quantile.NearestRank(lat, 1)
}

// drain lets the system finish outstanding I/O (and its periodic work run)
// for up to limit, so the next run starts from a quiet system.
func drain(l *des.Loop, sys system, limit time.Duration) {
	end := l.Now() + limit
	for l.Now() < end {
		l.RunUntil(l.Now() + time.Second)
		if !sys.HDD().Outstanding() && (sys.SSD() == nil || !sys.SSD().Outstanding()) {
			return
		}
	}
}
