package vodsim

import (
	"fmt"
	"math"
	"time"

	"github.com/strata-media/strata/internal/core/vod"
	"github.com/strata-media/strata/internal/lab/sim/des"
)

// lfuMode is how the flash cache's content is chosen.
type lfuMode uint8

// The modes.
const (
	// Static stages the top N titles before the run and never changes
	// (VoD §6.1: "the most popular N video files are already staged").
	Static lfuMode = iota
	// Dynamic is Strata's LFU: decaying counts, copies when a title
	// out-counts the least frequent cached one and the budget allows.
	Dynamic
	// Oracle re-stages the true top N instantly and for free at every
	// popularity shift: an upper bound, not a policy.
	Oracle
)

var modeNames = [...]string{"static top-N", "dynamic LFU", "oracle top-N"}

// String names the mode.
func (m lfuMode) String() string { return modeNames[m] }

// lfuConfig is file-level LFU with flash (VoD §5-6: Algorithm 2 admission).
type lfuConfig struct {
	Mode lfuMode
	// Flash is the cache size, bytes; FlashBW its stream bandwidth, bytes/s.
	Flash, FlashBW int64
	// HalfLife, Budget and CopyRate configure Dynamic: counts' half-life,
	// the flash write budget, and the fastest a copy runs, bytes/s (it
	// gets only what streams leave of both devices).
	HalfLife time.Duration
	Budget   vod.WriteBudget
	CopyRate int64
	// CopyFloor is disk and flash bandwidth, bytes/s, held back from
	// stream admission for copies, so that a saturated disk still lets
	// the cache adapt; 0 (default) gives copies only what streams leave.
	CopyFloor int64
	// Margin, Confidence and Reserve are vod.LFUOptions'.
	Margin, Confidence float64
	Reserve            int64
	// Window, if set, records the hit ratio per window.
	Window time.Duration
}

// lfuStream is an admitted stream: where it reads, and for a flash reader
// the cache it pinned (the oracle replaces its cache at every shift).
type lfuStream struct {
	title int
	src   vod.Source
	cache *vod.LFU[int]
}

// lfuRun is one file-level LFU simulation.
type lfuRun struct {
	p     params
	c     lfuConfig
	loop  *des.Loop
	arr   *arrivals
	lfu   *vod.LFU[int]
	adm   vod.Admission
	m     *meter
	cp    copier
	err   error
	size  int64
	stats vod.LFUStats // of caches the oracle replaced
}

// runLFU simulates file-level LFU with flash over p.
func runLFU(p params, c lfuConfig) (Result, error) {
	a, err := newArrivals(p)
	if err != nil {
		return Result{}, err
	}
	r := &lfuRun{p: p, c: c, loop: &des.Loop{}, arr: a, m: newMeter(c.Window), size: p.FileSize(),
		adm: vod.Admission{Flash: vod.Ledger{Capacity: c.FlashBW - c.CopyFloor}, Disk: vod.Ledger{Capacity: p.Disk - c.CopyFloor}}}
	if r.lfu, err = r.newCache(); err != nil {
		return Result{}, err
	}
	r.cp = copier{r: r}
	a.start(r.loop, r.arrive)
	if c.Mode == Oracle && p.Shift.Every > 0 {
		r.loop.Every(p.Shift.Every, func() bool { return r.loop.Now() < p.Duration }, r.restage)
	}
	r.loop.RunUntil(p.Duration)
	if r.err != nil {
		return Result{}, r.err
	}
	return r.result(), nil
}

// newCache builds an LFU with the current top N titles staged.
func (r *lfuRun) newCache() (*vod.LFU[int], error) {
	c, err := vod.NewLFU[int](vod.LFUOptions{Capacity: r.c.Flash, HalfLife: r.c.HalfLife, Budget: r.c.Budget,
		Margin: r.c.Margin, Confidence: r.c.Confidence, Reserve: r.c.Reserve})
	if err != nil {
		return nil, fmt.Errorf("vodsim: lfu: %w", err)
	}
	if r.c.Mode == Dynamic {
		r.prime(c)
	}
	for _, t := range r.arr.top(int((r.c.Flash - r.c.Reserve) / r.size)) {
		if err := c.Stage(t, r.size); err != nil {
			return nil, fmt.Errorf("vodsim: stage: %w", err)
		}
	}
	return c, nil
}

// prime gives the dynamic LFU the history a running server would have:
// every title's expected count under the popularity at the start, the
// same knowledge the static policy stages its top N with. Without it the
// staged titles start at zero and are the first evicted.
func (r *lfuRun) prime(c *vod.LFU[int]) {
	window := r.c.HalfLife.Seconds() / math.Ln2 // the mean weight of past requests
	if r.c.HalfLife <= 0 {
		window = time.Hour.Seconds()
	}
	for rank, t := range r.arr.top(r.p.Titles) {
		c.Record(0, t, r.size, r.p.Rate*r.arr.zipf.P(rank)*window)
	}
}

// restage is the oracle's shift: a fresh cache of the new top N. Streams
// reading the old one finish on it (they hold their flash bandwidth).
func (r *lfuRun) restage() {
	c, err := r.newCache()
	r.fail(err)
	if err == nil {
		r.lfu = c
	}
}

func (r *lfuRun) result() Result {
	res := Result{
		Policy: "file-level LFU (" + r.c.Mode.String() + ")", Rate: r.p.Rate, ZipfS: r.p.ZipfS, LengthM: r.p.Length.Minutes(),
		CacheGB: gbOf(r.c.Flash), CacheBW: mbps(float64(r.c.FlashBW)), DiskBW: diskMBps(r.p.Disk),
		Rejected: r.adm.Refused, Copies: r.lfu.Stats().Installed,
	}
	res.Arrivals = r.adm.Admitted[vod.FromFlash] + r.adm.Admitted[vod.FromDisk] + r.adm.Refused
	res.RejectProb = ratio(res.Rejected, res.Arrivals)
	r.m.fill(&res, r.p.Duration, r.p.Bitrate)
	return res
}

// arrive counts the request, admits it by Algorithm 2, and for the dynamic
// policy considers copying the title.
func (r *lfuRun) arrive(title int) {
	now, rate := r.loop.Now(), r.p.Bitrate
	onFlash := r.lfu.Request(now, title, r.size)
	src := r.adm.Admit(onFlash, rate)
	if src == vod.Rejected {
		r.planCopy()
		return
	}
	s := &lfuStream{title: title, src: src}
	if src == vod.FromFlash {
		if !r.lfu.Acquire(title) {
			r.fail(fmt.Errorf("vodsim: title %d resident but not acquired", title))
		}
		s.cache = r.lfu
		r.m.add(now, 1, 1)
	} else {
		r.m.add(now, 0, 1)
	}
	r.planCopy()
	r.cp.update()
	r.loop.At(now+r.p.Length, func() { r.end(s) })
}

// planCopy asks the dynamic LFU, after every request, whether to copy a
// title now.
func (r *lfuRun) planCopy() {
	if r.c.Mode != Dynamic {
		return
	}
	if _, ok := r.lfu.Plan(r.loop.Now()); ok {
		r.cp.kick()
	}
}

// end finishes a stream and releases what it held.
func (r *lfuRun) end(s *lfuStream) {
	now := r.loop.Now()
	r.adm.Release(s.src, r.p.Bitrate)
	if s.src == vod.FromFlash {
		r.m.add(now, -1, -1)
		_, err := s.cache.Release(s.title)
		r.fail(err)
	} else {
		r.m.add(now, 0, -1)
	}
	r.cp.kick()
	r.cp.update()
}

func (r *lfuRun) fail(err error) {
	if err != nil && r.err == nil {
		r.err = err
	}
}
