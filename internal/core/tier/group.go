package tier

import "strings"

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
	group      func(key string) string // Options.Group, or groupOf
}

const groupMax = 1<<16 - 1

// DefaultGroupShrink is BlockReinsert's default weight of the group in a
// segment's score: mostly the group, which strata sim policies measured
// best at small scale (0.5 to 1 within half a point of each other on
// every workload), some of the segment's own count for keys whose
// directory is not one title (images, whole files).
const DefaultGroupShrink = 0.8

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

// add counts a request in key's group; first reports that the segment
// had no recent request before it.
func (g *groupSketch) add(key string, first bool) {
	h := hashKey(g.group(key))
	inc := func(rows *[sketchRows][]uint16) {
		m := uint16(groupMax)
		for i := range rows {
			m = min(m, rows[i][g.slot(h, i)])
		}
		if m == groupMax {
			return
		}
		for i := range rows {
			if c := &rows[i][g.slot(h, i)]; *c == m {
				*c++
			}
		}
	}
	inc(&g.reqs)
	if first {
		inc(&g.segs)
	}
}

// rate is the estimated recent requests per distinct segment of key's
// group.
func (g *groupSketch) rate(key string) float64 {
	h := hashKey(g.group(key))
	r, s := uint16(groupMax), uint16(groupMax)
	for i := range g.reqs {
		r = min(r, g.reqs[i][g.slot(h, i)])
		s = min(s, g.segs[i][g.slot(h, i)])
	}
	if s == 0 {
		return float64(r)
	}
	return float64(r) / float64(s)
}

func (g *groupSketch) halve() {
	for i := range g.reqs {
		for j := range g.reqs[i] {
			g.reqs[i][j] >>= 1
			g.segs[i][j] >>= 1
		}
	}
}
