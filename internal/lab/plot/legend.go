package plot

// Legend geometry in pixels.
const (
	legendRow   = 18 // row height
	legendSpace = 20 // between entries of a row
	swatchGap   = 6  // between a swatch and its name
)

// legendEntry is one item of a legend.
type legendEntry struct {
	series int     // index of the series, for its style
	name   string  // shortened to fit the chart width
	x, y   float64 // left of the swatch and middle of the row, from the legend's top
}

// legend lays out the names of the series in centered rows, below the
// plot so it never covers data.
type legend struct {
	entries []legendEntry
	height  float64
	swatch  float64 // width of a swatch
}

// newLegend lays out the non-empty names for a chart of the given width.
func newLegend(names []string, swatch, width float64) legend {
	lg := legend{swatch: swatch}
	room := width - 2*pad
	var row []legendEntry
	rowWidth := 0.0
	for i, name := range names {
		if name == "" {
			continue
		}
		e := legendEntry{series: i, name: fitText(name, tickSize, room-swatch-swatchGap)}
		w := lg.entryWidth(e)
		if len(row) > 0 && rowWidth+legendSpace+w > room {
			lg.addRow(row, rowWidth, width)
			row, rowWidth = nil, 0
		}
		if len(row) > 0 {
			rowWidth += legendSpace
		}
		row, rowWidth = append(row, e), rowWidth+w
	}
	if len(row) > 0 {
		lg.addRow(row, rowWidth, width)
	}
	return lg
}

// entryWidth is the width of e's swatch and name.
func (lg *legend) entryWidth(e legendEntry) float64 {
	return lg.swatch + swatchGap + textWidth(e.name, tickSize)
}

// addRow appends a row of entries, centered in the chart width.
func (lg *legend) addRow(row []legendEntry, rowWidth, width float64) {
	x := (width - rowWidth) / 2
	for _, e := range row {
		e.x, e.y = x, lg.height+legendRow/2
		lg.entries = append(lg.entries, e)
		x += lg.entryWidth(e) + legendSpace
	}
	lg.height += legendRow
}

// space is the height the legend takes below the plot, with its margin.
func (lg *legend) space() float64 {
	if lg.height == 0 {
		return 0
	}
	return lg.height + 8
}

// draw writes the legend with its top at y; swatch draws the swatch of a
// series with its left end at x, centered on y.
func (lg *legend) draw(w *svgWriter, top float64, swatch func(series int, x, y float64)) {
	if len(lg.entries) == 0 {
		return
	}
	w.open(`<g font-size="%d" fill="%s">`, tickSize, inkColor)
	for _, e := range lg.entries {
		swatch(e.series, e.x, top+e.y)
		w.text(e.x+lg.swatch+swatchGap, top+e.y+tickSize*0.36, "start", "", e.name)
	}
	w.close("g")
}
