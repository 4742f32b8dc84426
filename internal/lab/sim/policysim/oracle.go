package policysim

import (
	"container/heap"
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
// vod, whose sessions draw titles and renditions from a fixed law, and
// binge, a mixture of the two); ok is false for shifting. It counts a
// segment's first request as a hit, which no cache can: onlineOracle is
// the reachable yardstick. On vod it knows the law, not the sessions:
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
// over every segment. Binge mixes the two: 70% of its requests are
// flashstream's, 30% from sessions whose titles are drawn uniformly.
func trueProbs(t *Trace, sc Scale) ([]float64, bool) {
	switch t.Workload {
	case "flashstream":
		return lawProbs(t, sc, 0.8, false)
	case "vod":
		return lawProbs(t, sc, 0.271, true)
	case "binge":
		fs, ok := lawProbs(t, sc, 0.8, false)
		if !ok {
			return nil, false
		}
		ss, ok := lawProbs(t, sc, 0, true) // s = 0: uniform titles
		if !ok {
			return nil, false
		}
		for i := range fs {
			fs[i] = 0.7*fs[i] + 0.3*ss[i]
		}
		return fs, true
	}
	return nil, false
}

// lawProbs is trueProbs for titles drawn by Zipf s, each request a
// segment of the title drawn uniformly (Pick) or, with sessions, each
// session a rendition read whole.
func lawProbs(t *Trace, sc Scale, s float64, sessions bool) ([]float64, bool) {
	z, err := workload.NewZipf(sc.Titles, s)
	if err != nil {
		return nil, false
	}
	prob := make([]float64, len(t.Cat.Sizes))
	var sum float64
	for title := range sc.Titles {
		first, ps := t.Cat.PickProbs(title)
		for i, p := range ps {
			if sessions && p > 0 {
				p *= float64(renditionLen(ps, i)) // 1/renditions, not 1/renditions/segments
			}
			prob[first+i] = z.P(title) * p
			sum += prob[first+i]
		}
	}
	if sessions {
		for i := range prob {
			prob[i] /= sum
		}
	}
	return prob, true
}

// onlineOracle is the yardstick an online cache that knows the law can
// reach: the static oracle without its one impossibility, a hit on a
// segment never requested before. It holds, at each moment, the segments
// of highest true probability per byte among those requested so far (a
// segment requested is admitted if, to make room, it evicts only segments
// of lower probability per byte), and counts a hit when the request finds
// its segment held. When requests are independent draws from a fixed law
// (flashstream), what a segment was requested before says nothing more
// about its next request than its probability does, so no online policy
// that caches only what was requested does better on average; where
// requests follow sessions (vod, binge) a policy that follows the viewers
// may, and Belady, who knows which segment comes back when, does.
func onlineOracle(t *Trace, sc Scale, capacity int64, prob []float64) float64 {
	density := func(i int32) float64 { return prob[i] / float64(max(t.Cat.Sizes[i], 1)) }
	held := make([]bool, len(prob))
	h := &densityHeap{d: density}
	var used int64
	warm := sc.warm(len(t.Reqs))
	hits := 0
	var out []int32
	for k, seg := range t.Reqs {
		if held[seg] {
			if k >= warm {
				hits++
			}
			continue
		}
		size := t.Cat.Sizes[seg]
		if size > capacity {
			continue
		}
		d := density(seg)
		out = out[:0]
		for used+size > capacity && h.Len() > 0 && density(h.ids[0]) < d {
			v := heap.Pop(h).(int32)
			out = append(out, v)
			used -= t.Cat.Sizes[v]
		}
		if used+size > capacity { // not worth its room: put back what left
			for _, v := range out {
				heap.Push(h, v)
				used += t.Cat.Sizes[v]
			}
			continue
		}
		for _, v := range out {
			held[v] = false
		}
		heap.Push(h, seg)
		held[seg] = true
		used += size
	}
	return float64(hits) / float64(len(t.Reqs)-warm)
}

// densityHeap is a min-heap of segments by probability per byte.
type densityHeap struct {
	ids []int32
	d   func(int32) float64
}

func (h *densityHeap) Len() int           { return len(h.ids) }
func (h *densityHeap) Less(i, j int) bool { return h.d(h.ids[i]) < h.d(h.ids[j]) }
func (h *densityHeap) Swap(i, j int)      { h.ids[i], h.ids[j] = h.ids[j], h.ids[i] }
func (h *densityHeap) Push(x any)         { h.ids = append(h.ids, x.(int32)) }
func (h *densityHeap) Pop() any {
	v := h.ids[len(h.ids)-1]
	h.ids = h.ids[:len(h.ids)-1]
	return v
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
