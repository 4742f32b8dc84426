package plot

import "strings"

// maxMarkers is the most points a line may have and still get a marker at
// each; denser lines are told apart by their dash pattern alone.
const maxMarkers = 40

// mode is how an XY chart draws its series.
type mode int

const (
	modeLines   mode = iota // points joined by straight lines
	modeScatter             // unjoined points
	modeStep                // each y holds until the next x
)

// Lines renders series as a line chart with a legend. Points are joined in
// the order given; a missing point breaks the line. Series of up to 40
// points get a marker at each point.
func (c Chart) Lines(series []Series) []byte { return c.xy(series, modeLines) }

// Scatter renders series as unjoined markers with a legend.
func (c Chart) Scatter(series []Series) []byte { return c.xy(series, modeScatter) }

// Step renders series as step functions with a legend: each point's y
// holds until the next point's x, as in a CDF or a counter over time.
func (c Chart) Step(series []Series) []byte { return c.xy(series, modeStep) }

// xyChart is the layout of an XY chart.
type xyChart struct {
	c       Chart
	mode    mode
	series  []Series
	counts  []int // plottable points per series
	x, y    axis
	plot    box
	legend  legend
	noData  bool
	markers []bool // whether each series shows markers
}

// xy renders an XY chart.
func (c Chart) xy(series []Series, m mode) []byte {
	c = c.withDefaults()
	ch := c.layoutXY(series, m)
	var w svgWriter
	w.begin(c.Width, c.Height, c.Title)
	ch.draw(&w)
	return w.end()
}

// layoutXY places the plot, the axes and the legend.
func (c Chart) layoutXY(series []Series, m mode) *xyChart {
	ch := &xyChart{c: c, mode: m, series: series}
	xs, ys := ch.scan()
	width := float64(c.Width)
	ch.legend = newLegend(ch.legendNames(), swatchWidth(m), width)
	top, bottom := c.plotTop(), c.plotBottom(xTicksSpace, &ch.legend)
	if ch.noData = xs.n == 0; ch.noData {
		ch.plot = box{c.plotLeft(&axis{}), top, width - rightMargin, bottom}
		return ch
	}
	ylo, yhi := ys.padded(c.YLog)
	ch.y = buildAxis(c.yAxisSpec(ylo, yhi, bottom-top))
	ch.plot = box{c.plotLeft(&ch.y), top, width - rightMargin, bottom}
	xlo, xhi := xs.padded(c.XLog)
	ch.x = buildAxis(axisSpec{lo: xlo, hi: xhi, log: c.XLog, length: ch.plot.width()})
	ch.x.p0, ch.x.p1 = ch.plot.x0, ch.plot.x1
	ch.y.p0, ch.y.p1 = ch.plot.y1, ch.plot.y0
	return ch
}

// scan counts the plottable points of each series and returns their range.
func (ch *xyChart) scan() (xs, ys span) {
	ch.counts = make([]int, len(ch.series))
	ch.markers = make([]bool, len(ch.series))
	for i, s := range ch.series {
		for j := range min(len(s.X), len(s.Y)) {
			if ch.ok(s.X[j], s.Y[j]) {
				xs.add(s.X[j], ch.c.XLog)
				ys.add(s.Y[j], ch.c.YLog)
				ch.counts[i]++
			}
		}
		ch.markers[i] = ch.mode == modeScatter || ch.counts[i] <= maxMarkers
	}
	return xs, ys
}

// ok reports whether the point (x, y) can be plotted.
func (ch *xyChart) ok(x, y float64) bool {
	return usable(x, ch.c.XLog) && usable(y, ch.c.YLog)
}

// legendNames returns the series names, marking those without data.
func (ch *xyChart) legendNames() []string {
	names := make([]string, len(ch.series))
	for i, s := range ch.series {
		names[i] = s.Name
		if s.Name != "" && ch.counts[i] == 0 {
			names[i] += " (no data)"
		}
	}
	return names
}

// swatchWidth is the width of the legend swatch of a mode.
func swatchWidth(m mode) float64 {
	if m == modeScatter {
		return 2 * markerSize * 1.3
	}
	return 28
}

// draw writes the chart.
func (ch *xyChart) draw(w *svgWriter) {
	w.open("<defs>")
	w.clip(ch.plot)
	w.close("defs")
	if !ch.noData {
		w.grid(&ch.x, &ch.y, ch.plot)
	}
	w.border(ch.plot)
	if ch.noData {
		w.note(ch.plot, "no data")
	} else {
		for i := range ch.series {
			ch.drawSeries(w, i)
		}
		w.xTicks(&ch.x, ch.plot)
		w.yTicks(&ch.y, ch.plot)
	}
	w.titles(ch.c, ch.plot, xTicksSpace)
	ch.legend.draw(w, ch.c.legendTop(ch.plot, xTicksSpace), func(i int, x, y float64) {
		ch.swatch(w, i, x, y)
	})
}

// drawSeries writes series i: its line, then its markers.
func (ch *xyChart) drawSeries(w *svgWriter, i int) {
	s, st := ch.series[i], seriesStyle(i)
	if ch.counts[i] == 0 {
		return
	}
	runs := ch.runs(s)
	w.open("<g>")
	if s.Name != "" {
		w.line("<title>%s</title>", esc(s.Name))
	}
	if ch.mode != modeScatter {
		if d := ch.path(runs); d != "" {
			w.line(`<path d="%s" %s clip-path="url(#plot)"/>`, d, lineAttrs(st))
		}
	}
	ch.drawMarkers(w, i, runs)
	w.close("g")
}

// drawMarkers writes the markers of series i: at every point if it has
// them, else at the isolated points, which its line does not show.
func (ch *xyChart) drawMarkers(w *svgWriter, i int, runs [][][2]float64) {
	var pts [][2]float64
	for _, run := range runs {
		if ch.markers[i] || len(run) == 1 {
			pts = append(pts, run...)
		}
	}
	if len(pts) == 0 {
		return
	}
	st := seriesStyle(i)
	w.open(`<g fill="%s" stroke="#fff" stroke-width="1" clip-path="url(#markers)">`, st.color)
	for _, p := range pts {
		w.marker(st.marker, p[0], p[1])
	}
	w.close("g")
}

// lineAttrs are the attributes of a line in style st.
func lineAttrs(st style) string {
	a := `fill="none" stroke="` + st.color + `" stroke-width="2" stroke-linejoin="round"`
	if st.dash != "" {
		a += ` stroke-dasharray="` + st.dash + `"`
	}
	return a
}

// runs returns the pixel coordinates of the points of s, split where a
// point is missing.
func (ch *xyChart) runs(s Series) [][][2]float64 {
	var runs [][][2]float64
	var run [][2]float64
	for j := range min(len(s.X), len(s.Y)) {
		if !ch.ok(s.X[j], s.Y[j]) {
			if len(run) > 0 {
				runs, run = append(runs, run), nil
			}
			continue
		}
		run = append(run, [2]float64{ch.x.pos(s.X[j]), ch.y.pos(s.Y[j])})
	}
	if len(run) > 0 {
		runs = append(runs, run)
	}
	return runs
}

// path returns the path data joining the points of each run, straight or
// in steps.
func (ch *xyChart) path(runs [][][2]float64) string {
	var d strings.Builder
	for _, run := range runs {
		if len(run) < 2 {
			continue
		}
		for j, p := range run {
			switch {
			case j == 0:
				d.WriteString("M" + num(p[0]) + "," + num(p[1]))
			case ch.mode == modeStep:
				d.WriteString("H" + num(p[0]) + "V" + num(p[1]))
			default:
				d.WriteString("L" + num(p[0]) + "," + num(p[1]))
			}
		}
	}
	return d.String()
}

// swatch writes the legend swatch of series i: a line sample and, when
// the series has them, its marker.
func (ch *xyChart) swatch(w *svgWriter, i int, x, y float64) {
	st, sw := seriesStyle(i), swatchWidth(ch.mode)
	if ch.mode != modeScatter {
		w.line(`<path d="M%v,%vh%v" %s/>`, x, y, sw, lineAttrs(st))
	}
	if ch.markers[i] {
		w.open(`<g fill="%s" stroke="#fff" stroke-width="1">`, st.color)
		w.marker(st.marker, x+sw/2, y)
		w.close("g")
	}
}
