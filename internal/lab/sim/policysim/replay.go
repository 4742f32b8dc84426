package policysim

import (
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/sim/des"
)

// flashWriteBps is the flash write bandwidth of the replay: a block write
// completes BlockSize/flashWriteBps after it is issued. Device timing is
// strata-lab sim flashstream's subject; here every block the core plans is
// written (admission always allows), so the policies differ only in what
// they cache and evict, and the capacity tier answers at once.
const flashWriteBps = 250e6

// replayer drives one tier core through a trace in the des loop's virtual
// time, with the live engine's monitor and feed periods.
type replayer struct {
	loop    *des.Loop
	core    *tier.Cache
	t       *Trace
	writing bool
	wtime   time.Duration
	tick    func(done int) // progress, or nil
}

// replay runs t through a core with block policy p and returns what it
// measured after the warm-up.
func replay(t *Trace, sc Scale, p tier.BlockPolicy) (Result, error) {
	return replayOpts(t, sc, tier.Options{RAMBytes: sc.RAM, BlockSize: sc.Block, DeviceSize: sc.SSD,
		BlockPolicy: p, Admission: tier.Threshold{Max: 2}})
}

// ReplayWith replays t through a core with opts (RAM, block and device
// sizes included) at sc's rate, or t's own times, and returns what it
// measured after sc's warm-up: for traces not drawn here (strata-lab sim
// peers), and policy options beyond the block policy.
func ReplayWith(t *Trace, sc Scale, opts tier.Options) (Result, error) {
	res, err := replayOpts(t, sc, opts)
	res.Policy = opts.BlockPolicy.String() + "/" + opts.Objective.String()
	return res, err
}

// replayOpts is replay with the core's options spelled out.
func replayOpts(t *Trace, sc Scale, opts tier.Options) (Result, error) {
	return replayCore(t, sc, opts, nil)
}

// replayCore is replayOpts that hands the core to seen, if set, before
// the run, for a caller that inspects its state after.
func replayCore(t *Trace, sc Scale, opts tier.Options, seen func(*tier.Cache)) (Result, error) {
	return replayTicking(t, sc, opts, seen, nil)
}

// tickEvery is how many requests apart replayTicking's tick is called.
const tickEvery = 1 << 20

// replayTicking is replayCore that calls tick, if set, every tickEvery
// requests with the number replayed: progress on long traces.
func replayTicking(t *Trace, sc Scale, opts tier.Options, seen func(*tier.Cache), tick func(int)) (Result, error) {
	p := opts.BlockPolicy
	core, _, err := tier.New(opts, 1)
	if err != nil {
		return Result{}, err
	}
	if seen != nil {
		seen(core)
	}
	r := &replayer{loop: &des.Loop{}, core: core, t: t, tick: tick,
		wtime: time.Duration(float64(sc.Block) / flashWriteBps * float64(time.Second))}
	on := func() bool { return true }
	r.loop.Every(tier.DefaultMonitorPeriod, on, func() {
		r.core.Monitor(r.loop.Now())
		r.feed()
	})
	r.loop.Every(tier.DefaultFeedPeriod, on, r.feed)
	return r.run(sc, p), nil
}

// run sends the requests at the scale's rate and counts from the warm-up
// on.
func (r *replayer) run(sc Scale, p tier.BlockPolicy) Result {
	warm := sc.warm(len(r.t.Reqs))
	res := Result{Workload: r.t.Workload, Policy: p.String()}
	var hits, hitBytes, bytes, ssd int64
	var written0 uint64
	var start time.Duration
	interval := time.Duration(float64(time.Second) / sc.Rate)
	for i, seg := range r.t.Reqs {
		if r.tick != nil && i > 0 && i%tickEvery == 0 {
			r.tick(i)
		}
		at := r.t.at(i, sc.Rate)
		r.loop.RunUntil(at)
		if i == warm {
			written0, start = r.core.Stats().BytesWritten, at
		}
		from := r.serve(seg)
		if i < warm {
			continue
		}
		size := r.t.Cat.Sizes[seg]
		bytes += size
		if from != tier.Miss {
			hits++
			hitBytes += size
		}
		if from == tier.SSD {
			ssd++
		}
	}
	n := int64(len(r.t.Reqs) - warm)
	hours := (r.loop.Now() + interval - start).Hours()
	res.Requests = n
	res.HitRatio, res.ByteHitRatio, res.SSDHitRatio = ratio(hits, n), ratio(hitBytes, bytes), ratio(ssd, n)
	res.FlashGBPerHour = float64(r.core.Stats().BytesWritten-written0) / 1e9 / hours
	res.Filtered = r.core.FlashFiltered()
	return res
}

// serve looks seg up and, on a miss, inserts it as read from the capacity
// tier.
func (r *replayer) serve(seg int32) tier.Tier {
	key, now := r.t.Cat.Keys[seg], r.loop.Now()
	l := r.core.Lookup(key, now)
	if l.Tier == tier.Miss {
		r.core.Insert(key, r.t.Cat.Sizes[seg], nil, l.Token, now)
	}
	return l.Tier
}

// feed issues the block the core has ready, one write at a time.
func (r *replayer) feed() {
	if r.writing {
		return
	}
	now := r.loop.Now()
	w := r.core.Feed(now, tier.Signals{Now: now})
	if w == nil {
		return
	}
	// Reinsertion: the segments to rescue are read from the victim before
	// it is overwritten (no device timing here: the capacity tier and
	// flash answer at once; the bytes are nil in the simulator).
	for _, s := range w.Rescue {
		r.core.Rescued(s.Key, nil, true)
	}
	r.writing = true
	r.loop.After(r.wtime, func() {
		r.core.WriteDone(w, nil, r.loop.Now())
		r.writing = false
		r.feed()
	})
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
