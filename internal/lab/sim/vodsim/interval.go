package vodsim

import (
	"fmt"
	"time"

	"github.com/strata-media/strata/internal/core/vod"
	"github.com/strata-media/strata/internal/lab/sim/des"
)

// icConfig is interval caching in RAM (VoD §6: Algorithm 1 admission,
// 1 MB blocks).
type icConfig struct {
	// RAM is the buffer, bytes.
	RAM int64
	// ArrivalOnly allocates buffers only at arrival (vod.IntervalOptions).
	ArrivalOnly bool
	// Window, if set, records the hit ratio per window.
	Window time.Duration
}

// icRun is one interval-caching simulation.
type icRun struct {
	p    params
	loop *des.Loop
	ic   *vod.IntervalCache[int]
	adm  vod.Admission
	m    *meter
	next vod.StreamID
	err  error
}

// runInterval simulates interval caching with RAM over p.
func runInterval(p params, c icConfig) (Result, error) {
	ic, err := vod.NewIntervalCache[int](vod.IntervalOptions{Capacity: c.RAM, BlockSize: mb, ArrivalOnly: c.ArrivalOnly})
	if err != nil {
		return Result{}, err
	}
	a, err := newArrivals(p)
	if err != nil {
		return Result{}, err
	}
	r := &icRun{p: p, loop: &des.Loop{}, ic: ic, adm: vod.Admission{Disk: vod.Ledger{Capacity: p.Disk}}, m: newMeter(c.Window)}
	a.start(r.loop, r.arrive)
	r.loop.RunUntil(p.Duration)
	if r.err != nil {
		return Result{}, r.err
	}
	res := r.result(c)
	r.m.fill(&res, p.Duration, p.Bitrate)
	return res, nil
}

func (r *icRun) result(c icConfig) Result {
	return Result{
		Policy: icName(c), Rate: r.p.Rate, ZipfS: r.p.ZipfS, LengthM: r.p.Length.Minutes(),
		CacheGB: gbOf(c.RAM), DiskBW: diskMBps(r.p.Disk),
		Arrivals: r.adm.Admitted[vod.FromDisk] + r.adm.Refused, Rejected: r.adm.Refused,
		RejectProb: ratio(r.adm.Refused, r.adm.Admitted[vod.FromDisk]+r.adm.Refused),
	}
}

func icName(c icConfig) string {
	switch {
	case c.RAM == 0:
		return "HDD only"
	case c.ArrivalOnly:
		return "interval caching (RAM, at arrival only)"
	}
	return "interval caching (RAM)"
}

func diskMBps(b int64) float64 {
	if b == vod.Unlimited {
		return 0
	}
	return mbps(float64(b))
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// arrive admits a stream on disk (Algorithm 1) and registers it with the
// interval cache.
func (r *icRun) arrive(title int) {
	now, rate := r.loop.Now(), r.p.Bitrate
	if r.adm.AdmitDisk(rate) == vod.Rejected {
		return
	}
	r.next++
	id := r.next
	ch, err := r.ic.Arrive(now, id, title, rate, int(min(r.adm.Disk.Free()/rate, 1<<30)))
	r.fail(err)
	r.m.add(now, 0, 1)
	r.apply(ch)
	r.loop.At(now+r.p.Length, func() { r.end(id) })
}

// apply carries out an interval cache's changes: followers sent back to
// disk take disk bandwidth again; new buffers schedule their switches.
func (r *icRun) apply(ch vod.Changes) {
	now := r.loop.Now()
	for range ch.ToDisk {
		if !r.adm.Disk.Reserve(r.p.Bitrate) {
			r.fail(fmt.Errorf("vodsim: preempted stream found no disk bandwidth"))
		}
		r.m.add(now, -1, 0)
	}
	for _, s := range ch.Cached {
		r.loop.At(s.At, func() { r.switchToRAM(s.Stream) })
	}
	r.m.setWrite(now, float64(r.ic.WriteRate()))
}

// switchToRAM moves a follower to its buffer and frees its disk bandwidth.
func (r *icRun) switchToRAM(id vod.StreamID) {
	if r.ic.Switch(r.loop.Now(), id) {
		r.adm.Disk.Release(r.p.Bitrate)
		r.m.add(r.loop.Now(), 1, 0)
	}
}

// end finishes a stream that played its whole title.
func (r *icRun) end(id vod.StreamID) {
	now := r.loop.Now()
	if r.ic.OnRAM(id) {
		r.m.add(now, -1, -1)
	} else {
		r.adm.Disk.Release(r.p.Bitrate)
		r.m.add(now, 0, -1)
	}
	ch, err := r.ic.End(now, id)
	r.fail(err)
	r.apply(ch)
}

func (r *icRun) fail(err error) {
	if err != nil && r.err == nil {
		r.err = err
	}
}
