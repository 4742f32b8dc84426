package policysim

import (
	"slices"

	"github.com/strata-media/strata/internal/workload"
)

// staticOracle is a yardstick an online policy cannot beat on average
// when requests are independent draws from a law it has learnt perfectly:
// knowing every segment's true request probability (the workload's Zipf
// law and Pick's uniform choice of rendition and segment), it caches, once
// and for all, the segments of highest probability per byte until the
// total cache size is full, and the trace is replayed against that fixed
// set. It is defined for the workloads whose law is fixed (flashstream,
// and vod, whose sessions draw titles and renditions from a fixed law);
// ok is false for the others. On vod it knows the law, not the sessions:
// a policy that follows viewers in order may beat it, Belady does.
func staticOracle(t *Trace, sc Scale, capacity int64) (hitRatio float64, ok bool) {
	prob, ok := trueProbs(t, sc)
	if !ok {
		return 0, false
	}
	order := make([]int32, len(prob))
	for i := range order {
		order[i] = int32(i)
	}
	density := func(i int32) float64 { return prob[i] / float64(max(t.Cat.Sizes[i], 1)) }
	slices.SortFunc(order, func(a, b int32) int {
		da, db := density(a), density(b)
		switch {
		case da > db:
			return -1
		case da < db:
			return 1
		}
		return int(a - b)
	})
	cached := make([]bool, len(prob))
	var used int64
	for _, i := range order {
		if prob[i] == 0 {
			break
		}
		if s := t.Cat.Sizes[i]; used+s <= capacity {
			cached[i] = true
			used += s
		}
	}
	warm := sc.warm(len(t.Reqs))
	hits := 0
	for _, seg := range t.Reqs[warm:] {
		if cached[seg] {
			hits++
		}
	}
	return float64(hits) / float64(len(t.Reqs)-warm), true
}

// trueProbs is every segment's probability of being the next request,
// for a workload whose law is fixed.
// For vod, a session reads a whole rendition, one request a segment, so a
// segment's share of the requests is its rendition's share of the
// sessions (the title's Zipf probability over its renditions), normalized
// over every segment.
func trueProbs(t *Trace, sc Scale) ([]float64, bool) {
	s := 0.8
	switch t.Workload {
	case "flashstream":
	case "vod":
		s = 0.271
	default:
		return nil, false
	}
	z, err := workload.NewZipf(sc.Titles, s)
	if err != nil {
		return nil, false
	}
	prob := make([]float64, len(t.Cat.Sizes))
	var sum float64
	for title := range sc.Titles {
		first, ps := t.Cat.PickProbs(title)
		for i, p := range ps {
			if t.Workload == "vod" && p > 0 {
				p *= float64(renditionLen(ps, i)) // 1/renditions, not 1/renditions/segments
			}
			prob[first+i] = z.P(title) * p
			sum += prob[first+i]
		}
	}
	if t.Workload == "vod" {
		for i := range prob {
			prob[i] /= sum
		}
	}
	return prob, true
}

// renditionLen is the number of segments of the rendition of segment i
// among a title's PickProbs: the run of equal probabilities around i.
func renditionLen(ps []float64, i int) int {
	lo, hi := i, i+1
	for lo > 0 && ps[lo-1] == ps[i] {
		lo--
	}
	for hi < len(ps) && ps[hi] == ps[i] {
		hi++
	}
	return hi - lo
}
