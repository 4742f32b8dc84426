package plot

import "math"

// Tick spacing and label sizes.
const (
	xTickSpacing = 80 // pixels between x ticks to aim for
	yTickSpacing = 45 // pixels between y ticks to aim for
	labelGap     = 8  // minimum pixels between two x tick labels
	maxTicks     = 200
	minorRoom    = 30 // pixels per decade needed to draw minor log ticks
)

// tick is one position on an axis. Unlabeled ticks are minor: they draw a
// faint grid line only.
type tick struct {
	v     float64
	label string
	level int // log axes: 0 decade, 1 at 2 and 5, 2 at 3, 4, 6..9
}

// axis maps a range of data values onto pixels.
type axis struct {
	lo, hi float64 // range shown
	log    bool
	p0, p1 float64 // pixels of lo and hi
	ticks  []tick
}

// frac returns where v lies in the range: 0 at lo, 1 at hi. It is clamped
// far outside [0, 1] so that pixel coordinates stay short.
func (a *axis) frac(v float64) float64 {
	var f float64
	if a.log {
		l := math.Log10(a.lo) // quotients like hi/lo may overflow
		f = (math.Log10(v) - l) / (math.Log10(a.hi) - l)
	} else {
		f = (v - a.lo) / (a.hi - a.lo)
	}
	return min(max(f, -100), 101)
}

// pos returns the pixel of v. The conversion forbids fusing the multiply
// and add, which Go allows on some CPUs, so output is the same everywhere.
func (a *axis) pos(v float64) float64 {
	return a.p0 + float64(a.frac(v)*(a.p1-a.p0))
}

// axisSpec says what an axis must show and how much room it has.
type axisSpec struct {
	lo, hi           float64 // data range: lo < hi, both positive if log
	fixedLo, fixedHi bool    // keep an end as is instead of rounding it out
	log              bool
	length           float64 // pixels
	vertical         bool    // labels stack vertically (a y axis)
}

// buildAxis picks the range and ticks of an axis: as many 1-2-5 ticks
// (or decades) as fit without their labels overlapping.
func buildAxis(s axisSpec) axis {
	if s.log {
		return logAxis(s)
	}
	spacing := float64(xTickSpacing)
	if s.vertical {
		spacing = yTickSpacing
	}
	var a axis
	for n := max(3, int(s.length/spacing)); n >= 1; n-- {
		a = linearTicks(s, n)
		if labelsFit(&a, s) {
			break
		}
	}
	return a
}

// niceStep returns the smallest 1, 2 or 5 × 10^k not below raw.
func niceStep(raw float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// linearTicks places ticks at multiples of a 1-2-5 step giving about n
// intervals, and rounds the free ends of the range out to ticks.
func linearTicks(s axisSpec, n int) axis {
	step := niceStep((s.hi - s.lo) / float64(n))
	a := axis{lo: s.lo, hi: s.hi}
	if !s.fixedLo {
		a.lo = math.Floor(s.lo/step+1e-9) * step
	}
	if !s.fixedHi {
		a.hi = math.Ceil(s.hi/step-1e-9) * step
	}
	k0, k1 := math.Ceil(a.lo/step-1e-9), math.Floor(a.hi/step+1e-9)
	f := newTickFormat(step, max(math.Abs(k0*step), math.Abs(k1*step)))
	for k := k0; k <= k1 && len(a.ticks) < maxTicks; k++ {
		a.ticks = append(a.ticks, tick{v: k * step, label: f.label(k * step)})
	}
	return a
}

// labelsFit reports whether the labels of a do not overlap.
func labelsFit(a *axis, s axisSpec) bool {
	gap := float64(labelGap)
	if s.vertical {
		gap = 4
	}
	prev, prevExt := math.Inf(-1), 0.0
	for _, t := range a.ticks {
		if t.label == "" {
			continue
		}
		p, ext := a.frac(t.v)*s.length, labelExtent(t.label, s.vertical)
		if p-prev < (ext+prevExt)/2+gap {
			return false
		}
		prev, prevExt = p, ext
	}
	return true
}

// labelExtent is the room a tick label takes along its axis.
func labelExtent(label string, vertical bool) float64 {
	if vertical {
		return tickSize
	}
	return textWidth(label, tickSize)
}

// logAxis rounds the free ends of the range out to 1, 2 or 5 × 10^k and
// labels the finest set of ticks whose labels fit (see logRules).
func logAxis(s axisSpec) axis {
	a := axis{lo: s.lo, hi: s.hi, log: true}
	if !s.fixedLo {
		a.lo = niceFloor(s.lo)
	}
	if !s.fixedHi {
		a.hi = niceStep(s.hi)
	}
	decades := math.Log10(a.hi) - math.Log10(a.lo)
	cands := logCandidates(a.lo, a.hi)
	a.ticks = chooseLogLabels(cands, logRules(decades), a, s)
	a.ticks = pruneMinor(a.ticks, s.length/decades)
	return a
}

// niceFloor returns the largest 1, 2 or 5 × 10^k not above v > 0.
func niceFloor(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)+1e-9))
	for _, m := range []float64{5, 2} {
		if m*p <= v*(1+1e-9) {
			return m * p
		}
	}
	return p
}

// logCandidates returns every 1..9 × 10^k in [lo, hi], unlabeled.
func logCandidates(lo, hi float64) []tick {
	var ts []tick
	for d := math.Floor(math.Log10(lo)); d <= math.Ceil(math.Log10(hi)); d++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow(10, d)
			if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				ts = append(ts, tick{v: v, level: logLevel(m)})
			}
		}
	}
	return ts
}

// logLevel ranks the multiples of a decade: 1 first, then 2 and 5.
func logLevel(m int) int {
	switch m {
	case 1:
		return 0
	case 2, 5:
		return 1
	}
	return 2
}

// logRule selects the labeled ticks of a log axis: those up to level, and
// of the decades only every stride-th.
type logRule struct{ level, stride int }

// logRules lists the label sets to try, finest first: every digit (when
// the range is about a decade), 1-2-5, decades, then every 2nd, 3rd, 5th,
// 10th... decade.
func logRules(decades float64) []logRule {
	var rs []logRule
	if decades <= 1.5 {
		rs = append(rs, logRule{2, 1})
	}
	rs = append(rs, logRule{1, 1})
	for i := 0; i < 16; i++ { // up to 5000: a float64 spans 632 decades
		st := []int{1, 2, 3, 5}[i%4] * int(math.Pow(10, float64(i/4)))
		rs = append(rs, logRule{0, st})
		if float64(st) >= decades {
			break
		}
	}
	return rs
}

// chooseLogLabels labels cands by the first rule giving at least two
// labels that fit, else the first that fits, else the coarsest.
func chooseLogLabels(cands []tick, rules []logRule, a axis, s axisSpec) []tick {
	var fallback []tick
	for _, r := range rules {
		a.ticks = applyLogRule(cands, r)
		if !labelsFit(&a, s) {
			continue
		}
		if countLabels(a.ticks) >= 2 {
			return a.ticks
		}
		if fallback == nil {
			fallback = a.ticks
		}
	}
	if fallback == nil {
		fallback = a.ticks
	}
	return fallback
}

// applyLogRule returns a copy of cands labeled by r.
func applyLogRule(cands []tick, r logRule) []tick {
	ts := make([]tick, len(cands))
	for i, t := range cands {
		ts[i] = tick{v: t.v, level: t.level}
		d := int(math.Floor(math.Log10(t.v) + 1e-9))
		if t.level <= r.level && (t.level > 0 || d%r.stride == 0) {
			ts[i].label = compact(t.v)
		}
	}
	return ts
}

// countLabels returns how many ticks are labeled.
func countLabels(ts []tick) int {
	n := 0
	for _, t := range ts {
		if t.label != "" {
			n++
		}
	}
	return n
}

// pruneMinor drops unlabeled ticks that would crowd the axis: minor
// multiples below minorRoom pixels per decade, decades below 6.
func pruneMinor(ts []tick, perDecade float64) []tick {
	out := ts[:0]
	for _, t := range ts {
		crowded := (t.level > 0 && perDecade < minorRoom) || perDecade < 6
		if t.label != "" || !crowded {
			out = append(out, t)
		}
	}
	return out
}
