package plot

import (
	"fmt"
	"math"
)

// Frame geometry in pixels.
const (
	pad         = 10 // around the image
	tickLen     = 4  // tick marks, outside the plot
	rightMargin = 24 // room for the half of the last x label
	clipSlack   = 6  // markers on the plot's edge are drawn whole
	xTicksSpace = tickLen + 4 + tickSize
)

// box is a rectangle in pixels.
type box struct{ x0, y0, x1, y1 float64 }

func (b box) width() float64  { return b.x1 - b.x0 }
func (b box) height() float64 { return b.y1 - b.y0 }

// plotTop returns the y of the plot's top edge: below the title, if any.
func (c Chart) plotTop() float64 {
	if c.Title != "" {
		return pad + titleSize + 14
	}
	return pad + tickSize/2 + 4
}

// plotBottom returns the y of the plot's bottom edge, in whole pixels,
// leaving below it ticksSpace for the x tick labels, then the x axis title
// and the legend.
func (c Chart) plotBottom(ticksSpace float64, lg *legend) float64 {
	b := float64(c.Height) - pad - lg.space() - ticksSpace
	if c.XLabel != "" {
		b -= labelSize + 8
	}
	return math.Round(max(b, c.plotTop()+20))
}

// plotLeft returns the x of the plot's left edge, in whole pixels,
// leaving room for the y axis title and the tick labels of a.
func (c Chart) plotLeft(a *axis) float64 {
	widest := 0.0
	for _, t := range a.ticks {
		widest = max(widest, textWidth(t.label, tickSize))
	}
	l := pad + widest + tickLen + 4
	if c.YLabel != "" {
		l += labelSize + 8
	}
	return math.Round(min(l, float64(c.Width)/2))
}

// yAxisSpec returns the spec of the y axis for data in [lo, hi] (already
// padded if empty) on a plot of the given height, applying YMin and YMax.
func (c Chart) yAxisSpec(lo, hi, height float64) axisSpec {
	s := axisSpec{lo: lo, hi: hi, log: c.YLog, length: height, vertical: true}
	flo, fhi, loOK, hiOK := c.yBounds()
	if loOK {
		s.lo, s.fixedLo = flo, true
	}
	if hiOK {
		s.hi, s.fixedHi = fhi, true
	}
	if degenerate(s.lo, s.hi, c.YLog) { // one fixed end at or beyond all the data
		s.lo, s.hi = widen(s.lo, s.hi, c.YLog, s.fixedLo)
	}
	return s
}

// degenerate reports whether lo..hi is too narrow to divide into ticks:
// reversed, empty, or narrower than rounding error (or on a linear axis
// than 10^-290).
func degenerate(lo, hi float64, log bool) bool {
	if log {
		return !(hi > lo*(1+1e-9))
	}
	d := hi - lo
	return !(d > 1e-9*max(math.Abs(lo), math.Abs(hi))) || d < 1e-290
}

// widen returns a usable range around lo..hi, a degenerate range; keepLo
// says which end must stay.
func widen(lo, hi float64, log, keepLo bool) (float64, float64) {
	if keepLo {
		if log {
			return lo, lo * 10
		}
		return lo, lo + max(math.Abs(lo), 1)
	}
	if log {
		return hi / 10, hi
	}
	return hi - max(math.Abs(hi), 1), hi
}

// span accumulates the range of the plottable values.
type span struct {
	lo, hi float64
	n      int
}

// add extends s by v if v is plottable.
func (s *span) add(v float64, log bool) {
	if !usable(v, log) {
		return
	}
	if s.n == 0 || v < s.lo {
		s.lo = v
	}
	if s.n == 0 || v > s.hi {
		s.hi = v
	}
	s.n++
}

// padded returns the range of s, widened when it is (nearly) one value.
func (s *span) padded(log bool) (float64, float64) {
	lo, hi := s.lo, s.hi
	if !degenerate(lo, hi, log) {
		return lo, hi
	}
	mid := (lo + hi) / 2
	switch {
	case log:
		return mid / 2, mid * 2
	case math.Abs(mid) < 1e-290:
		return -1, 1
	}
	d := math.Abs(mid) / 10
	return mid - d, mid + d
}

// grid writes the grid lines at the ticks of x (nil on bar charts) and y,
// and a darker line at zero on a linear y axis that spans it.
func (w *svgWriter) grid(x, y *axis, b box) {
	w.open(`<g fill="none" stroke-width="1">`)
	for _, major := range []bool{false, true} {
		var d []byte
		if x != nil {
			d = x.gridPath(d, major, func(p float64) string {
				return "M" + num(snap(p)) + "," + num(b.y0) + "V" + num(b.y1)
			})
		}
		d = y.gridPath(d, major, func(p float64) string {
			return "M" + num(b.x0) + "," + num(snap(p)) + "H" + num(b.x1)
		})
		color := minorColor
		if major {
			color = gridColor
		}
		if len(d) > 0 {
			w.line(`<path stroke="%s" d="%s"/>`, color, d)
		}
	}
	if !y.log && y.lo < 0 && y.hi > 0 {
		p := snap(y.pos(0))
		w.line(`<path stroke="%s" d="M%v,%vH%v"/>`, frameColor, b.x0, p, b.x1)
	}
	w.close("g")
}

// gridPath appends to d the grid segments, made by seg from a pixel, of
// the labeled (major) or unlabeled ticks of a.
func (a *axis) gridPath(d []byte, major bool, seg func(p float64) string) []byte {
	for _, t := range a.ticks {
		if (t.label != "") == major {
			d = append(d, seg(a.pos(t.v))...)
		}
	}
	return d
}

// snap moves a 1-pixel line onto the pixel grid so it renders crisp.
func snap(p float64) float64 {
	return math.Floor(p) + 0.5
}

// border writes the outline of the plot box.
func (w *svgWriter) border(b box) {
	w.line(`<rect x="%v" y="%v" width="%v" height="%v" fill="none" stroke="%s"/>`,
		snap(b.x0), snap(b.y0), math.Round(b.width()), math.Round(b.height()), frameColor)
}

// xTicks writes the tick marks and labels of a below b.
func (w *svgWriter) xTicks(a *axis, b box) {
	w.open(`<g font-size="%d" fill="%s" text-anchor="middle">`, tickSize, inkColor)
	var d []byte
	for _, t := range a.ticks {
		if t.label == "" {
			continue
		}
		p := a.pos(t.v)
		d = append(d, "M"+num(snap(p))+","+num(b.y1)+"v"+num(tickLen)...)
		w.text(p, b.y1+tickLen+3+tickSize*0.8, "", "", t.label)
	}
	w.line(`<path stroke="%s" d="%s"/>`, tickColor, d)
	w.close("g")
}

// yTicks writes the tick marks and labels of a left of b.
func (w *svgWriter) yTicks(a *axis, b box) {
	w.open(`<g font-size="%d" fill="%s" text-anchor="end">`, tickSize, inkColor)
	var d []byte
	for _, t := range a.ticks {
		if t.label == "" {
			continue
		}
		p := a.pos(t.v)
		d = append(d, "M"+num(b.x0)+","+num(snap(p))+"h"+num(-tickLen)...)
		w.text(b.x0-tickLen-3, p+tickSize*0.36, "", "", t.label)
	}
	w.line(`<path stroke="%s" d="%s"/>`, tickColor, d)
	w.close("g")
}

// axisTitleAttrs are the attributes of the axis titles.
var axisTitleAttrs = fmt.Sprintf(`font-size="%d" fill="%s"`, labelSize, inkColor)

// titles writes the chart title and the axis titles around b; ticksSpace
// is the height of the x tick labels.
func (w *svgWriter) titles(c Chart, b box, ticksSpace float64) {
	width := float64(c.Width)
	if c.Title != "" {
		s := fitText(c.Title, titleSize*1.05, width-2*pad)
		w.text(width/2, pad+titleSize, "middle", fmt.Sprintf(`font-size="%d" font-weight="bold" fill="#111"`, titleSize), s)
	}
	if c.XLabel != "" {
		s := fitText(c.XLabel, labelSize, width-2*pad)
		x := min(max((b.x0+b.x1)/2, pad+textWidth(s, labelSize)/2), width-pad-textWidth(s, labelSize)/2)
		w.text(x, b.y1+ticksSpace+labelSize+4, "middle", axisTitleAttrs, s)
	}
	if c.YLabel != "" {
		s := fitText(c.YLabel, labelSize, b.height()+40)
		x, y := pad+labelSize*0.8, (b.y0+b.y1)/2
		w.text(x, y, "middle", axisTitleAttrs+` transform="rotate(-90 `+num(x)+" "+num(y)+`)"`, s)
	}
}

// legendTop returns the y of the legend's top below the plot box b.
func (c Chart) legendTop(b box, ticksSpace float64) float64 {
	y := b.y1 + ticksSpace + 8
	if c.XLabel != "" {
		y += labelSize + 8
	}
	return y
}

// note writes a message in the middle of b, e.g. "no data".
func (w *svgWriter) note(b box, s string) {
	w.text((b.x0+b.x1)/2, (b.y0+b.y1)/2, "middle", `font-size="13" font-style="italic" fill="#777"`, s)
}

// clip writes the clip paths of the plot box: "plot" for lines and bars,
// and "markers", a little larger, so markers on its edge show whole.
func (w *svgWriter) clip(b box) {
	w.open(`<clipPath id="plot">`)
	w.line(`<rect x="%v" y="%v" width="%v" height="%v"/>`, b.x0, b.y0, b.width(), b.height())
	w.close("clipPath")
	w.open(`<clipPath id="markers">`)
	w.line(`<rect x="%v" y="%v" width="%v" height="%v"/>`,
		b.x0-clipSlack, b.y0-clipSlack, b.width()+2*clipSlack, b.height()+2*clipSlack)
	w.close("clipPath")
}
