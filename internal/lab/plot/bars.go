package plot

import "math"

// Bar geometry.
const (
	groupFill = 0.8 // share of a group's slot that its bars take
	slant     = 35  // degrees by which long category labels are turned
	maxSlant  = 160 // pixels: longest slanted category label
)

// labelMode is how the value labels of bars are drawn.
type labelMode int

const (
	labelsAcross labelMode = iota // horizontal, above the bar
	labelsAlong                   // turned to run up the bar
	labelsNone                    // bars too thin to label
)

// Bars renders a grouped bar chart: one group per element of groups,
// holding one bar per series, each labeled with its value, and a legend of
// seriesNames (empty names are left out of it). A group may have fewer
// values than there are series; bars without a value are not drawn. On a
// log y axis bars rise from the bottom of the axis.
func (c Chart) Bars(groups []Bar, seriesNames []string) []byte {
	c = c.withDefaults()
	ch := c.layoutBars(groups, seriesNames)
	var w svgWriter
	w.begin(c.Width, c.Height, c.Title)
	ch.draw(&w)
	return w.end()
}

// barChart is the layout of a bar chart.
type barChart struct {
	c        Chart
	groups   []Bar
	n        int // bars per group
	y        axis
	plot     box
	legend   legend
	noData   bool
	slanted  bool      // category labels are turned by slant degrees
	catSpace float64   // height of the category labels below the plot
	labels   labelMode // how value labels are drawn
}

// layoutBars places the plot, the y axis, the labels and the legend.
func (c Chart) layoutBars(groups []Bar, names []string) *barChart {
	ch := &barChart{c: c, groups: groups, n: len(names)}
	for _, g := range groups {
		ch.n = max(ch.n, len(g.Values))
	}
	width := float64(c.Width)
	ch.legend = newLegend(names, 12, width)
	ys := ch.scan()
	estLeft := c.plotLeft(&axis{ticks: []tick{{label: compact(ys.lo)}, {label: compact(ys.hi)}}})
	slot := (width - rightMargin - estLeft) / float64(max(len(groups), 1))
	ch.layoutCategories(slot)
	top, bottom := c.plotTop(), c.plotBottom(ch.catSpace, &ch.legend)
	if ch.noData = ys.n == 0; ch.noData {
		ch.plot = box{c.plotLeft(&axis{}), top, width - rightMargin, bottom}
		return ch
	}
	lo, hi := ch.valueRange(ys, slot*groupFill/float64(ch.n), bottom-top)
	ch.y = buildAxis(c.yAxisSpec(lo, hi, bottom-top))
	ch.plot = box{c.plotLeft(&ch.y), top, width - rightMargin, bottom}
	ch.y.p0, ch.y.p1 = ch.plot.y1, ch.plot.y0
	return ch
}

// scan returns the range of the plottable values.
func (ch *barChart) scan() span {
	var s span
	for _, g := range ch.groups {
		for _, v := range g.Values {
			s.add(v, ch.c.YLog)
		}
	}
	return s
}

// layoutCategories decides whether the category labels fit across a slot
// of the given width or must be slanted, and how much height they take.
func (ch *barChart) layoutCategories(slot float64) {
	widest := 0.0
	for _, g := range ch.groups {
		widest = max(widest, textWidth(g.Label, tickSize))
	}
	ch.catSpace = xTicksSpace
	if widest <= slot-6 {
		return
	}
	ch.slanted = true
	maxLen := min(widest, maxSlant, float64(ch.c.Height)/4/sinSlant)
	ch.catSpace = tickLen + 6 + maxLen*sinSlant + tickSize*cosSlant
}

// sinSlant and cosSlant are the sine and cosine of slant.
var sinSlant, cosSlant = math.Sincos(slant * math.Pi / 180)

// valueRange returns the y range to show: the values, the baseline, and
// room above (below) the bars for the value labels, given the bar width
// and plot height in pixels.
func (ch *barChart) valueRange(ys span, barWidth, height float64) (lo, hi float64) {
	if ch.c.YLog {
		lo, hi = ys.padded(true)
	} else if lo, hi = min(ys.lo, 0), max(ys.hi, 0); degenerate(lo, hi, false) {
		hi = lo + 1
	}
	room := ch.chooseLabels(barWidth)
	if room <= 0 {
		return lo, hi
	}
	share := min(room/max(height-room, 1), 1)
	if ch.c.YLog {
		return lo, min(hi*math.Pow(10, (math.Log10(hi)-math.Log10(lo))*share), limit)
	}
	ext := (hi - lo) * share
	if ys.hi > 0 {
		hi += ext
	}
	if ys.lo < 0 {
		lo -= ext
	}
	return lo, hi
}

// chooseLabels picks the value label mode for bars of the given width and
// returns the pixels the labels take beyond the bar ends.
func (ch *barChart) chooseLabels(barWidth float64) float64 {
	widest := 0.0
	for _, g := range ch.groups {
		for _, v := range g.Values {
			if usable(v, ch.c.YLog) {
				widest = max(widest, textWidth(compact(v), valueSize))
			}
		}
	}
	switch {
	case widest <= barWidth+1:
		ch.labels = labelsAcross
		return valueSize + 4
	case barWidth >= valueSize+1:
		ch.labels = labelsAlong
		return widest + 6
	}
	ch.labels = labelsNone
	return 0
}

// draw writes the chart.
func (ch *barChart) draw(w *svgWriter) {
	w.open("<defs>")
	w.clip(ch.plot)
	for i := range ch.n {
		w.pattern(i, seriesStyle(i))
	}
	w.close("defs")
	if !ch.noData {
		w.grid(nil, &ch.y, ch.plot)
	}
	w.border(ch.plot)
	if ch.noData {
		w.note(ch.plot, "no data")
	} else {
		ch.drawBars(w)
		ch.drawValues(w)
		w.yTicks(&ch.y, ch.plot)
	}
	ch.drawCategories(w)
	w.titles(ch.c, ch.plot, ch.catSpace)
	ch.legend.draw(w, ch.c.legendTop(ch.plot, ch.catSpace), func(i int, x, y float64) {
		w.line(`<rect x="%v" y="%v" width="12" height="12" fill="%s"/>`, x, y-6, seriesStyle(i).fill(i))
	})
}

// slot returns the width of a group's slot and the x of group g's left end.
func (ch *barChart) slot(g int) (width, x float64) {
	width = ch.plot.width() / float64(len(ch.groups))
	return width, ch.plot.x0 + float64(g)*width
}

// bar returns the left x and width of bar i of group g.
func (ch *barChart) bar(g, i int) (x, width float64) {
	sw, sx := ch.slot(g)
	width = sw * groupFill / float64(ch.n)
	return sx + sw*(1-groupFill)/2 + float64(i)*width, width
}

// value returns bar i of group g and whether it is drawn.
func (ch *barChart) value(g, i int) (float64, bool) {
	vs := ch.groups[g].Values
	if i >= len(vs) || !usable(vs[i], ch.c.YLog) {
		return 0, false
	}
	return vs[i], true
}

// base returns the pixel y that bars rise from: zero, or the bottom of a
// log axis.
func (ch *barChart) base() float64 {
	if ch.y.log {
		return ch.y.p0
	}
	return ch.y.pos(min(max(0, ch.y.lo), ch.y.hi))
}

// drawBars writes the bars, series by series.
func (ch *barChart) drawBars(w *svgWriter) {
	w.open(`<g clip-path="url(#plot)">`)
	base := ch.base()
	for i := range ch.n {
		w.open(`<g fill="%s">`, seriesStyle(i).fill(i))
		for g := range ch.groups {
			v, ok := ch.value(g, i)
			if !ok {
				continue
			}
			x, bw := ch.bar(g, i)
			y := ch.y.pos(v)
			gap := min(1, bw/10)
			w.line(`<rect x="%v" y="%v" width="%v" height="%v"/>`,
				x+gap/2, min(y, base), bw-gap, math.Abs(y-base))
		}
		w.close("g")
	}
	w.close("g")
}

// drawValues writes the value labels past the ends of the bars.
func (ch *barChart) drawValues(w *svgWriter) {
	if ch.labels == labelsNone {
		return
	}
	w.open(`<g font-size="%d" fill="%s">`, valueSize, inkColor)
	base := ch.base()
	for i := range ch.n {
		for g := range ch.groups {
			if v, ok := ch.value(g, i); ok {
				x, bw := ch.bar(g, i)
				ch.valueLabel(w, x+bw/2, ch.y.pos(v), ch.y.pos(v) > base, compact(v))
			}
		}
	}
	w.close("g")
}

// valueLabel writes the label s of a bar whose end is at (x, y); down
// says the bar hangs below its base. Labels stay inside the plot.
func (ch *barChart) valueLabel(w *svgWriter, x, y float64, down bool, s string) {
	b := ch.plot
	if ch.labels == labelsAcross {
		if down {
			w.text(x, min(y+valueSize+2, b.y1-2), "middle", "", s)
		} else {
			w.text(x, max(y-4, b.y0+valueSize), "middle", "", s)
		}
		return
	}
	ext := textWidth(s, valueSize)
	anchor, yy := "start", max(y-4, b.y0+ext+2)
	if down {
		anchor, yy = "end", min(y+4, b.y1-ext-2)
	}
	x += valueSize * 0.36
	w.text(x, yy, anchor, `transform="rotate(-90 `+num(x)+" "+num(yy)+`)"`, s)
}

// drawCategories writes the group labels below the plot.
func (ch *barChart) drawCategories(w *svgWriter) {
	if len(ch.groups) == 0 {
		return
	}
	anchor := "middle"
	if ch.slanted {
		anchor = "end"
	}
	w.open(`<g font-size="%d" fill="%s" text-anchor="%s">`, tickSize, inkColor, anchor)
	maxLen := (ch.catSpace - tickLen - 6 - tickSize*cosSlant) / sinSlant
	for g, bar := range ch.groups {
		sw, sx := ch.slot(g)
		x := sx + sw/2
		if !ch.slanted {
			w.text(x, ch.plot.y1+tickLen+3+tickSize*0.8, "", "", fitText(bar.Label, tickSize, sw-2))
			continue
		}
		x += tickSize * 0.3
		y := ch.plot.y1 + tickLen + 6
		s := fitText(bar.Label, tickSize, min(maxLen, (x-pad)/cosSlant))
		w.text(x, y, "", `transform="rotate(-`+num(slant)+" "+num(x)+" "+num(y)+`)"`, s)
	}
	w.close("g")
}
