package loadgen

import (
	"math/rand/v2"

	"github.com/strata-media/strata/internal/storage/origin"
)

// viewers draws segment requests from concurrent viewers that each watch
// one title from its first segment to its last (Config.Viewers): a title
// by the run's popularity law, one of its renditions uniformly, its
// segments in order. Each request is the next segment of a viewer chosen
// at random, so the viewers advance at the same mean pace, interleaved
// as real players are; a viewer past its last segment starts another
// title. It is the whole-title session workload of strata-lab sim
// policies (vod), sent to a live server.
type viewers struct {
	plan   *plan
	active []viewer
}

// A viewer is one session: the title's rank, its rendition, the next
// segment number and the number after its last.
type viewer struct {
	rank      int
	rd        *origin.Rendition
	next, end int
}

// newViewers starts n viewers, drawn with rng after released releases.
func newViewers(p *plan, n int, rng *rand.Rand, released int) *viewers {
	v := &viewers{plan: p, active: make([]viewer, n)}
	for i := range v.active {
		v.start(i, rng, released)
	}
	return v
}

// start begins a new session in slot i.
func (v *viewers) start(i int, rng *rand.Rand, released int) {
	rank, rd, _ := v.plan.draw(rng, released)
	v.active[i] = viewer{rank: rank, rd: rd, next: rd.StartNumber, end: rd.StartNumber + rd.Segments}
}

// pick draws the next request: a viewer at random, its next segment.
func (v *viewers) pick(rng *rand.Rand, released int) request {
	i := rng.IntN(len(v.active))
	w := &v.active[i]
	t := &v.plan.targets[w.rank]
	q := request{rank: w.rank, url: v.plan.segmentURL(t.id, w.rd.ID, w.next), deadline: t.deadline}
	w.next++
	if w.next >= w.end {
		v.start(i, rng, released)
	}
	return q
}
