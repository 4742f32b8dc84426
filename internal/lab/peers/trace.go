package peers

import (
	"fmt"
	"math"
	"time"

	"github.com/strata-media/strata/internal/lab/wanorigin"
	"github.com/strata-media/strata/internal/tools/loadgen"
)

// A phase is one strata bench run of a server's turn in run.sh: its rate,
// length and seed.
type phase struct {
	Name     string
	Rate     float64 // requests/s
	Duration time.Duration
	Seed     uint64
}

// Requests is the number of requests strata bench issues in the phase:
// request k is due at k/Rate, for every due time before Duration.
func (p phase) Requests() int {
	n := 0
	for k := 0; ; k++ {
		if time.Duration(math.Round(float64(k)*float64(time.Second)/p.Rate)) >= p.Duration {
			return n
		}
		n++
	}
}

// runPhases are the phases of one server's turn in a full run.sh run up to
// the measured 80% run, whose origin counters give the hit ratios: the
// warm-up (20 req/s for 45 s, seed 1), the --find-max trials at the given
// rates (15 s each, a confirming run 30 s; seeds 100, 101, ...), then
// 30 s at rate80 (seed 7).
func runPhases(trials []trialRun, rate80 float64) []phase {
	ps := []phase{{Name: "warm", Rate: 20, Duration: 45 * time.Second, Seed: 1}}
	for i, t := range trials {
		name, d := fmt.Sprintf("trial %g", t.Rate), 15*time.Second
		if t.Confirm {
			name, d = fmt.Sprintf("confirming run %g", t.Rate), 30*time.Second
		}
		ps = append(ps, phase{Name: name, Rate: t.Rate, Duration: d, Seed: 100 + uint64(i)})
	}
	return append(ps, phase{Name: "at80", Rate: rate80, Duration: 30 * time.Second, Seed: 7})
}

// A trialRun is one find-max trial's rate, and whether it was a
// confirming run (strata bench --confirm).
type trialRun struct {
	Rate    float64
	Confirm bool
}

// runTrials returns the find-max trials and the 80% rate of a server's
// result (run.sh's OUT/<server>.json).
func runTrials(r Result) (trials []trialRun, rate80 float64) {
	for _, t := range r.Max.Trials {
		trials = append(trials, trialRun{t.RateRPS, t.Confirm})
	}
	return trials, max(r.Max.MaxRPS*0.8, 1)
}

// A trace is the sequence of segment requests of phases over run.sh's
// library, for offline replay: the distinct objects with their sizes, the
// requests as indices into them, and when each was due.
type trace struct {
	Keys  []string        // object paths, /videos/{title}/{rendition}/{n}.m4s
	Sizes []int64         // bytes, as the origin serves them
	Reqs  []int32         // object of each request
	Times []time.Duration // when each request was due, phases back to back
	// Counted is the index of the first request of the last phase, the
	// one whose hit ratios run.sh reports.
	Counted int
}

// defaultLibrary is run.sh's full-run library: 4 titles of each segment
// duration (2, 6, 10 s), at most an hour long, seed 1 (strata-lab origin
// --titles 4; 12 titles, 15.37 GiB).
func defaultLibrary() wanorigin.LibraryOptions {
	return wanorigin.LibraryOptions{TitlesPerDuration: 4, MaxLength: time.Hour, Seed: 1,
		SegmentDurations: []time.Duration{2 * time.Second, 6 * time.Second, 10 * time.Second}}
}

// buildTrace draws the requests strata bench makes in phases over the
// library lo (titles by Zipf s = 0.8, loadgen's default), in order.
func buildTrace(lo wanorigin.LibraryOptions, phases []phase) (*trace, error) {
	lib, err := wanorigin.NewLibrary(lo)
	if err != nil {
		return nil, err
	}
	t := &trace{}
	index := make(map[string]int32)
	var start time.Duration
	for i, ph := range phases {
		n := ph.Requests()
		objs, err := loadgen.Sequence(lib.Titles(), loadgen.Law{}, ph.Seed, n)
		if err != nil {
			return nil, err
		}
		if i == len(phases)-1 {
			t.Counted = len(t.Reqs)
		}
		for k, o := range objs {
			key := "/videos/" + o.Path()
			id, ok := index[key]
			if !ok {
				size, err := lib.Size(o)
				if err != nil {
					return nil, fmt.Errorf("peers: trace: %s: %w", key, err)
				}
				id = int32(len(t.Keys))
				index[key] = id
				t.Keys = append(t.Keys, key)
				t.Sizes = append(t.Sizes, size)
			}
			t.Reqs = append(t.Reqs, id)
			t.Times = append(t.Times, start+time.Duration(math.Round(float64(k)*float64(time.Second)/ph.Rate)))
		}
		start += ph.Duration
	}
	return t, nil
}
