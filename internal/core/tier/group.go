package tier

import (
	"math"
	"strings"
)

// groupSketch lets BlockReinsert score a segment by its group as well as
// by itself. A segment's own count over the sketch's window is a few
// requests at most, too few to tell a segment requested once by chance
// from one of a popular title; but the segments of one rendition (the key
// up to its last '/': a title's rendition directory) share its popularity
// when viewers pick segments within it, so the group's requests per
// distinct segment is a far less noisy estimate of each one's rate. The
// score shrinks the segment's own estimate toward its group's mean
// (empirical Bayes in its simplest form). Counters are 16-bit, so that a
// popular group does not saturate; they age with the segment sketch.
type groupSketch struct {
	reqs, segs [sketchRows][]uint16 // group requests; of them, first requests of a segment in the window
	mask       uint64
	nmax       uint16                  // the most distinct segments counted in one group
	capture    bool                    // rate by capture-recapture (Options.GroupRatio false)
	group      func(key string) string // Options.Group, or groupOf
}

const groupMax = 1<<16 - 1

// DefaultGroupShrink is BlockReinsert's default weight of the group in a
// segment's score: mostly the group, which strata-lab sim policies measured
// best at small scale, some of the segment's own count for keys whose
// directory is not one title (images, whole files). 0.8 with requests
// per distinct segment (GroupRatio; 0.5 to 1 within half a point of each
// other on every workload), 0.95 with capture-recapture (0.8: half a
// point lower on flashstream).
const (
	DefaultGroupShrink      = 0.95
	DefaultGroupShrinkRatio = 0.8
)

func newGroupSketch(width int) *groupSketch {
	w := 1
	for w < width {
		w <<= 1
	}
	g := &groupSketch{mask: uint64(w - 1), group: groupOf}
	for i := range g.reqs {
		g.reqs[i] = make([]uint16, w)
		g.segs[i] = make([]uint16, w)
	}
	return g
}

// groupOf is the group of key: up to and including its last '/', or the
// key itself.
func groupOf(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i+1]
	}
	return key
}

func (g *groupSketch) slot(h uint64, i int) uint64 {
	lo, hi := h&0xffffffff, h>>32|1
	return (lo + uint64(i)*hi + uint64(i*i)) & g.mask
}

// add counts a request in the group of hash h; first reports that the
// segment had no recent request before it.
func (g *groupSketch) add(h uint64, first bool) {
	inc := func(rows *[sketchRows][]uint16) uint16 {
		m := uint16(groupMax)
		for i := range rows {
			m = min(m, rows[i][g.slot(h, i)])
		}
		if m == groupMax {
			return m
		}
		for i := range rows {
			if c := &rows[i][g.slot(h, i)]; *c == m {
				*c++
			}
		}
		return m + 1
	}
	inc(&g.reqs)
	if first {
		g.nmax = max(g.nmax, inc(&g.segs))
	}
}

// rate is the estimated recent requests per segment of key's group.
func (g *groupSketch) rate(key string) float64 { return g.rateHash(hashKey(g.group(key))) }

// rateHash is rate for a group's hash: R requests that found D distinct
// segments. Requests per distinct segment, R/D, is what the group's
// segments that were requested had; it counts every group whose
// segments were each requested once at 1, however large the group. With
// capture on (the default), the group's size N is estimated from how
// often its requests found a segment already counted (capture-recapture:
// uniform requests over N segments find D = N(1 - e^(-R/N)) distinct
// ones) and the rate is R/N, so that a title requested three times in
// three different segments scores far below one whose three requests
// fell on one. No repeat at all says only that N is large: the estimate
// is then floored at R over the most distinct segments any group
// counted, so that a title read through by one viewer, each segment
// once, is not taken for one never read.
func (g *groupSketch) rateHash(h uint64) float64 { return g.rateHashRatio(h, !g.capture) }

// rateHashRatio is rateHash, by requests per distinct segment if ratio.
func (g *groupSketch) rateHashRatio(h uint64, ratio bool) float64 {
	r, s := uint16(groupMax), uint16(groupMax)
	for i := range g.reqs {
		r = min(r, g.reqs[i][g.slot(h, i)])
		s = min(s, g.segs[i][g.slot(h, i)])
	}
	if s == 0 {
		return float64(r)
	}
	if ratio {
		return float64(r) / float64(s)
	}
	x := perSegment(float64(s) / float64(r))
	if g.nmax > 0 {
		x = max(x, float64(r)/float64(g.nmax))
	}
	return x
}

// perSegment solves (1 - e^-x) / x = q for x: with requests spread
// uniformly over a group of N segments, R requests find D distinct ones,
// D/R = q, and x = R/N is the requests per segment. It interpolates a
// table of the solution (bisection, once).
func perSegment(q float64) float64 {
	switch {
	case q >= 1:
		return 0
	case q <= captureMinQ:
		return 1 / q
	}
	f := (q - captureMinQ) / (1 - captureMinQ) * captureSteps
	i := int(f)
	if i >= captureSteps {
		return 0
	}
	return captureTable[i] + (f-float64(i))*(captureTable[i+1]-captureTable[i])
}

const (
	captureMinQ  = 1.0 / 32 // below, x = 1/q within 1e-13
	captureSteps = 1024
)

var captureTable = func() (t [captureSteps + 1]float64) {
	for i := range t {
		q := captureMinQ + (1-captureMinQ)*float64(i)/captureSteps
		lo, hi := 0.0, 40.0
		for range 50 {
			x := (lo + hi) / 2
			if (1-math.Exp(-x))/x > q {
				lo = x
			} else {
				hi = x
			}
		}
		t[i] = (lo + hi) / 2
	}
	return t
}()

func (g *groupSketch) halve() {
	for i := range g.reqs {
		for j := range g.reqs[i] {
			g.reqs[i][j] >>= 1
			g.segs[i][j] >>= 1
		}
	}
}
