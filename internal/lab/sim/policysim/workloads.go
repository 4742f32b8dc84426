package policysim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/workload"
)

// A Trace is a workload drawn ahead of the run: segment requests at a
// fixed rate over a catalogue, replayed alike through every policy, our
// Belady and libCacheSim.
type Trace struct {
	Workload string
	Cat      *des.Catalog
	Reqs     []int32 // segment index of each request, in arrival order
	// Times, when set, is when each request arrives; nil: at the
	// scale's rate.
	Times []time.Duration
}

// at is when request i arrives: Times[i], or i requests at rate.
func (t *Trace) at(i int, rate float64) time.Duration {
	if t.Times != nil {
		return t.Times[i]
	}
	return time.Duration(float64(i) * float64(time.Second) / rate)
}

// workloadNames are the workloads in report order.
var workloadNames = []string{"flashstream", "vod", "shifting", "binge"}

// workloadDoc says what each workload is, for the report.
var workloadDoc = map[string]string{
	"flashstream": "FlashStream §5.1: a title by a Zipf-like law, s = 0.8 (theta 0.2), and one of its segments uniformly",
	"vod":         "the VoD paper's whole files: sessions each read a title from its first segment to its last, titles by Zipf s = 0.271",
	"shifting":    "a shifting catalogue: every hour new titles enter at random ranks among the top tenth, pushing older ones down and, past the catalogue's size, out; s = 0.8",
	"binge":       "scan-heavy: 70% FlashStream requests, 30% from binge viewers reading whole titles in order, titles uniformly at random",
}

// sessions draws requests from concurrent viewers that each read one
// title's rendition from its first segment to its last; next picks the
// title of a new session.
type sessions struct {
	cat    *des.Catalog
	rng    *rand.Rand
	active [][2]int32 // next segment, end
	next   func() int
}

func newSessions(cat *des.Catalog, rng *rand.Rand, n int, next func() int) *sessions {
	s := &sessions{cat: cat, rng: rng, next: next, active: make([][2]int32, n)}
	for i := range s.active {
		s.start(i)
	}
	return s
}

// start begins a session in slot i: a rendition of a title, read whole.
func (s *sessions) start(i int) {
	lo, hi := s.cat.Rendition(s.next(), s.rng)
	s.active[i] = [2]int32{int32(lo), int32(hi)}
}

// draw returns the next request of a session chosen at random.
func (s *sessions) draw() int32 {
	i := s.rng.IntN(len(s.active))
	seg := s.active[i][0]
	s.active[i][0]++
	if s.active[i][0] >= s.active[i][1] {
		s.start(i)
	}
	return seg
}

// makeTrace draws workload name's n requests at rate per second.
func makeTrace(name string, sc Scale, seed uint64) (*Trace, error) {
	rng := rand.New(rand.NewPCG(seed, 0x9011c7))
	n := int(sc.Duration.Seconds() * sc.Rate)
	titles := sc.Titles
	hours := int(sc.Duration.Hours()) + 1
	newPerHour := max(sc.Titles/40, 1)
	if name == "shifting" {
		titles += newPerHour * hours
	}
	ds := workload.NewDataset(workload.DatasetOptions{Titles: titles, Seed: seed})
	cat := des.NewCatalog(ds, 550e9)
	t := &Trace{Workload: name, Cat: cat, Reqs: make([]int32, n)}
	switch name {
	case "flashstream":
		z, err := workload.NewZipf(sc.Titles, 0.8)
		if err != nil {
			return nil, err
		}
		for i := range t.Reqs {
			t.Reqs[i] = int32(cat.Pick(z.Draw(rng), rng))
		}
	case "vod":
		z, err := workload.NewZipf(sc.Titles, 0.271)
		if err != nil {
			return nil, err
		}
		s := newSessions(cat, rng, sc.Sessions, func() int { return z.Draw(rng) })
		for i := range t.Reqs {
			t.Reqs[i] = s.draw()
		}
	case "shifting":
		return t, shifting(t, sc, rng, newPerHour)
	case "binge":
		z, err := workload.NewZipf(sc.Titles, 0.8)
		if err != nil {
			return nil, err
		}
		s := newSessions(cat, rng, max(sc.Sessions/4, 1), func() int { return rng.IntN(sc.Titles) })
		for i := range t.Reqs {
			if rng.Float64() < 0.3 {
				t.Reqs[i] = s.draw()
			} else {
				t.Reqs[i] = int32(cat.Pick(z.Draw(rng), rng))
			}
		}
	default:
		return nil, fmt.Errorf("policysim: unknown workload %q", name)
	}
	return t, nil
}

// shifting fills t with the shifting catalogue: ranks drawn by Zipf over
// the first sc.Titles entries of a ranking that, every hour, takes
// newPerHour unseen titles at random ranks among its top tenth.
func shifting(t *Trace, sc Scale, rng *rand.Rand, newPerHour int) error {
	z, err := workload.NewZipf(sc.Titles, 0.8)
	if err != nil {
		return err
	}
	rank := make([]int, sc.Titles)
	for i := range rank {
		rank[i] = i
	}
	unseen := sc.Titles
	perHour := int(sc.Rate * 3600)
	for i := range t.Reqs {
		if i > 0 && i%perHour == 0 {
			for range newPerHour {
				at := rng.IntN(max(sc.Titles/10, 1))
				rank = slices.Insert(rank, at, unseen)
				unseen++
			}
		}
		t.Reqs[i] = int32(t.Cat.Pick(rank[z.Draw(rng)], rng))
	}
	return nil
}
