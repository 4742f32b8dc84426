// Package plot renders the charts of Strata's experiment reports as
// standalone, deterministic SVG 1.1 documents: the same input always gives
// byte-identical output, so reports diff cleanly.
//
// The package has no dependencies beyond the standard library and the SVG
// it writes uses no scripts, external fonts or stylesheets. Series are told
// apart by an Okabe-Ito color and, for grayscale prints, a marker shape and
// dash pattern (lines) or a hatch (bars).
package plot

import "math"

// Default chart size in pixels, used when Chart.Width or Chart.Height is 0.
const (
	defaultWidth  = 640
	defaultHeight = 400
)

// Size limits in pixels; sizes outside them are clamped.
const (
	minWidth  = 240
	minHeight = 160
	maxSize   = 8192
)

// limit is the largest magnitude plotted; larger values, like NaN and
// ±Inf, are treated as missing so that axis arithmetic stays finite.
const limit = 1e300

// Series is one line (or set of points) of an XY chart. X and Y pair up by
// index; the shorter slice sets the number of points. A point with a NaN or
// infinite coordinate, or a non-positive one on a log axis, is missing: it
// is not drawn and breaks the line.
type Series struct {
	Name string
	X, Y []float64
}

// Bar is one group of a grouped bar chart: a category label and one value
// per series, in the order of the series names. A NaN value draws no bar.
type Bar struct {
	Label  string
	Values []float64
}

// Chart describes what is common to every chart: titles, size and axes.
// The zero Chart is a valid 640×400 chart with linear axes.
type Chart struct {
	// Title is drawn centered above the plot; XLabel and YLabel name the
	// axes. Empty strings leave the space out.
	Title, XLabel, YLabel string
	// Width and Height are the image size in pixels (default 640×400).
	Width, Height int
	// XLog and YLog select log10 axes; only positive values are drawn.
	// XLog has no effect on bar charts.
	XLog, YLog bool
	// YMin and YMax fix an end of the y range (e.g. YMin: new(0.0)).
	// Nil, non-finite, or (on a log axis) non-positive values, and a
	// YMin not clearly below YMax, leave the range to fit the data.
	YMin, YMax *float64
}

// withDefaults returns c with its size defaulted and clamped.
func (c Chart) withDefaults() Chart {
	if c.Width == 0 {
		c.Width = defaultWidth
	}
	if c.Height == 0 {
		c.Height = defaultHeight
	}
	c.Width = min(max(c.Width, minWidth), maxSize)
	c.Height = min(max(c.Height, minHeight), maxSize)
	return c
}

// yBounds returns the usable fixed ends of the y range; ok reports whether
// each end is set.
func (c Chart) yBounds() (lo, hi float64, loOK, hiOK bool) {
	valid := func(p *float64) bool {
		return p != nil && usable(*p, c.YLog)
	}
	loOK, hiOK = valid(c.YMin), valid(c.YMax)
	if loOK {
		lo = *c.YMin
	}
	if hiOK {
		hi = *c.YMax
	}
	if loOK && hiOK && degenerate(lo, hi, c.YLog) {
		return 0, 0, false, false
	}
	return lo, hi, loOK, hiOK
}

// usable reports whether v can be plotted on a linear or log axis.
func usable(v float64, log bool) bool {
	a := math.Abs(v)
	if !(a <= limit) { // also false for NaN
		return false
	}
	return !log || v >= 1/limit
}
