package vodsim

import (
	"math/rand/v2"
	"time"

	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/workload"
)

// Shift changes popularity during a run: every Every, Count titles drawn
// at random from the less popular half of the ranking become the most
// popular ones and everything else moves down (new releases). Zero Every
// means a fixed popularity, as in the paper.
type Shift struct {
	Every time.Duration
	Count int
}

// arrivals generates Poisson arrivals of Zipf-distributed titles in a loop.
type arrivals struct {
	p       params
	zipf    *workload.Zipf
	rng     *rand.Rand // arrival times and titles
	shift   *rand.Rand // which titles rise, the same for every policy
	ranking []int      // rank -> title
}

func newArrivals(p params) (*arrivals, error) {
	z, err := workload.NewZipf(p.Titles, p.ZipfS)
	if err != nil {
		return nil, err
	}
	a := &arrivals{p: p, zipf: z, rng: rand.New(rand.NewPCG(p.Seed, 0x0a11)), shift: rand.New(rand.NewPCG(p.Seed, 0x5f17))}
	a.ranking = make([]int, p.Titles)
	for i := range a.ranking {
		a.ranking[i] = i
	}
	return a, nil
}

// start schedules the arrivals (fn gets each title) and the popularity
// shifts in l until the run's end.
func (a *arrivals) start(l *des.Loop, fn func(title int)) {
	if a.p.Rate <= 0 {
		return
	}
	var next func()
	next = func() {
		fn(a.ranking[a.zipf.Draw(a.rng)])
		a.schedule(l, next)
	}
	a.schedule(l, next)
	if a.p.Shift.Every > 0 {
		l.Every(a.p.Shift.Every, func() bool { return l.Now() < a.p.Duration }, a.rotate)
	}
}

func (a *arrivals) schedule(l *des.Loop, fn func()) {
	gap := time.Duration(a.rng.ExpFloat64() / a.p.Rate * float64(time.Second))
	if t := l.Now() + gap; t <= a.p.Duration {
		l.At(t, fn)
	}
}

// rotate moves Count titles from the lower half of the ranking to the top.
func (a *arrivals) rotate() {
	n := len(a.ranking)
	for i := range min(a.p.Shift.Count, n/2) {
		j := n/2 + a.shift.IntN(n-n/2)
		t := a.ranking[j]
		copy(a.ranking[i+1:j+1], a.ranking[i:j])
		a.ranking[i] = t
	}
}

// top returns the k most popular titles now.
func (a *arrivals) top(k int) []int { return append([]int(nil), a.ranking[:min(k, len(a.ranking))]...) }
