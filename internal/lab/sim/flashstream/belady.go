package flashstream

import (
	"container/heap"
	"math"
	"math/rand/v2"

	"github.com/strata-media/strata/internal/lab/sim/des"
)

// Bound is the offline limit on the same workload: the hit ratio of
// Belady's rule (evict the segment whose next request is farthest in the
// future) with the RAM and flash capacity together, against what
// FlashStream(LRU) achieved at its maximum rate.
type Bound struct {
	// OPTHitRatio is Belady's combined hit ratio for RAM + flash.
	OPTHitRatio float64 `json:"opt_hit_ratio"`
	// OPTSSDHitRatio is Belady's hit ratio for the flash capacity alone.
	OPTSSDHitRatio float64 `json:"opt_ssd_hit_ratio"`
	// Systems' combined RAM + flash hit ratios at their maximum rates.
	Achieved map[string]float64 `json:"achieved"`
	Requests int                `json:"requests"`
	Method   string             `json:"method"`
}

// beladyMethod documents the approximation.
const beladyMethod = "Belady's farthest-next-request eviction over segments of variable size, " +
	"with bypass (a segment whose next request is farthest is not admitted). For variable sizes the exact " +
	"optimum is NP-hard; this rule is the standard offline reference, not a strict bound: a size-aware " +
	"optimum could do a little better."

// bound computes Belady's hit ratio on a trace of the §5.1 workload as long
// as a warm-up plus one trial at FlashStream(LRU)'s maximum rate.
func (s *Setup) bound(rep *Report) Bound {
	b := Bound{Achieved: map[string]float64{}, Method: beladyMethod}
	rate := 20.0
	for _, m := range rep.Fig7 {
		b.Achieved[m.System] = m.AtMax.RAMHitRatio + m.AtMax.SSDHitRatio
		if m.System == "FlashStream(LRU)" && m.MaxRPS > 0 {
			rate = m.MaxRPS
		}
	}
	cat := des.NewCatalog(s.Dataset, 550e9)
	warm := int(float64(s.Scale.SSD+s.Scale.RAM) / float64(cat.TotalBytes()) * float64(cat.Segments()) * 3)
	n := warm + int(rate*s.Scale.Trial.Seconds())
	trace := s.trace(cat, n)
	b.Requests = n - warm
	b.OPTHitRatio = BeladyHitRatio(trace, cat.Sizes, s.Scale.RAM+s.Scale.SSD, warm)
	b.OPTSSDHitRatio = BeladyHitRatio(trace, cat.Sizes, s.Scale.SSD, warm)
	return b
}

// trace draws n requests of the workload.
func (s *Setup) trace(cat *des.Catalog, n int) []int32 {
	r := rand.New(rand.NewPCG(s.Seed, 0xbe1ad7))
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(cat.Pick(s.Zipf.Draw(r), r))
	}
	return out
}

// BeladyHitRatio replays trace (indexes into sizes) through a cache of
// capacity bytes with Belady's rule and returns the hit ratio over
// requests from index warm on. It is the offline reference of every
// segment-cache experiment (strata-lab sim flashstream, strata-lab sim policies).
func BeladyHitRatio(trace []int32, sizes []int64, capacity int64, warm int) float64 {
	next := nextUses(trace)
	cached := map[int32]int{} // segment -> its next request
	h := &farthest{}
	var used int64
	hits := 0
	for i, seg := range trace {
		if _, ok := cached[seg]; ok {
			if i >= warm {
				hits++
			}
		} else {
			used += sizes[seg]
		}
		cached[seg] = next[i]
		heap.Push(h, useEntry{next: next[i], seg: seg})
		for used > capacity {
			e := heap.Pop(h).(useEntry)
			if cached[e.seg] != e.next {
				continue // stale entry
			}
			delete(cached, e.seg)
			used -= sizes[e.seg]
		}
	}
	if len(trace) <= warm {
		return 0
	}
	return float64(hits) / float64(len(trace)-warm)
}

// nextUses gives, for each request, the index of the next request of the
// same segment (MaxInt if none).
func nextUses(trace []int32) []int {
	next := make([]int, len(trace))
	last := map[int32]int{}
	for i := len(trace) - 1; i >= 0; i-- {
		if j, ok := last[trace[i]]; ok {
			next[i] = j
		} else {
			next[i] = math.MaxInt
		}
		last[trace[i]] = i
	}
	return next
}

type useEntry struct {
	next int
	seg  int32
}

// farthest is a max-heap of next-request times.
type farthest []useEntry

func (h farthest) Len() int           { return len(h) }
func (h farthest) Less(i, j int) bool { return h[i].next > h[j].next }
func (h farthest) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *farthest) Push(x any)        { *h = append(*h, x.(useEntry)) }
func (h *farthest) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
