package plot

import (
	"math"
	"strconv"
	"strings"
)

// palette is the Okabe-Ito colorblind-safe palette (Okabe & Ito, "Color
// Universal Design", 2008), reordered so that the first colors contrast
// best with each other and with white; the pale yellow comes last.
var palette = []string{
	"#0072B2", // blue
	"#D55E00", // vermillion
	"#009E73", // bluish green
	"#CC79A7", // reddish purple
	"#E69F00", // orange
	"#56B4E9", // sky blue
	"#000000", // black
	"#F0E442", // yellow
}

// dashes are the stroke-dasharray values of lines, solid first.
var dashes = []string{"", "7 3", "2 2.5", "9 3 2 3", "14 4", "4 2 1 2 1 2"}

// style is how series i is drawn. Colors, markers, dashes and hatches
// cycle with different periods, so combinations repeat only after 168
// series.
type style struct {
	color  string
	marker int // index into markers
	dash   string
	hatch  int // index into hatches
}

// seriesStyle returns the style of series i.
func seriesStyle(i int) style {
	return style{
		color:  palette[i%len(palette)],
		marker: i % len(markers),
		dash:   dashes[i%len(dashes)],
		hatch:  i % len(hatches),
	}
}

// markerSize is the radius in pixels of the circle marker; the other
// shapes are scaled to about the same area.
const markerSize = 3.6

// markers are the marker outlines as polygons in units of markerSize
// around (0, 0), y down; nil is a circle.
var markers = [][][2]float64{
	nil, // circle
	{{-0.9, -0.9}, {0.9, -0.9}, {0.9, 0.9}, {-0.9, 0.9}}, // square
	{{0, -1.25}, {1.1, 0.65}, {-1.1, 0.65}},              // triangle
	{{0, -1.3}, {1.1, 0}, {0, 1.3}, {-1.1, 0}},           // diamond
	{{0, 1.25}, {1.1, -0.65}, {-1.1, -0.65}},             // triangle down
	cross(0.42, 1.25, 0),                                 // plus
	cross(0.42, 1.25, math.Pi/4),                         // x
}

// cross returns a plus-shaped polygon with arms of half-width hw and
// length l, rotated by angle radians.
func cross(hw, l, angle float64) [][2]float64 {
	arm := [][2]float64{{hw, -hw}, {l, -hw}, {l, hw}}
	var pts [][2]float64
	for q := range 4 {
		a := angle + float64(q)*math.Pi/2
		sin, cos := math.Sincos(a)
		for _, p := range arm {
			pts = append(pts, [2]float64{p[0]*cos - p[1]*sin, p[0]*sin + p[1]*cos})
		}
	}
	return pts
}

// marker writes marker m centered at (x, y); fill and stroke come from
// the enclosing group.
func (w *svgWriter) marker(m int, x, y float64) {
	shape := markers[m]
	if shape == nil {
		w.line(`<circle cx="%v" cy="%v" r="%v"/>`, x, y, markerSize)
		return
	}
	var d strings.Builder
	for i, p := range shape {
		if i == 0 {
			d.WriteByte('M')
		} else {
			d.WriteByte('L')
		}
		d.WriteString(num(x+p[0]*markerSize) + "," + num(y+p[1]*markerSize))
	}
	w.line(`<path d="%sZ"/>`, d.String())
}

// hatches are the path data of the bar fill patterns on an 8×8 tile,
// plain first, so bars are told apart without color.
var hatches = []string{
	"",
	"M-2,2 L2,-2 M0,8 L8,0 M6,10 L10,6", // diagonal /
	"M0,4 H8",                           // horizontal
	"M-2,6 L2,10 M0,0 L8,8 M6,-2 L10,2", // diagonal \
	"M4,0 V8",                           // vertical
	"M0,4 H8 M4,0 V8",                   // grid
	"M-2,2 L2,-2 M0,8 L8,0 M6,10 L10,6 M-2,6 L2,10 M0,0 L8,8 M6,-2 L10,2", // crosshatch
}

// fill returns the fill attribute value of bars of style s in series i.
func (s style) fill(i int) string {
	if hatches[s.hatch] == "" {
		return s.color
	}
	return "url(#fill" + strconv.Itoa(i) + ")"
}

// pattern writes the fill pattern of series i, if its style is hatched:
// the series color overlaid with lines that contrast with it.
func (w *svgWriter) pattern(i int, s style) {
	if hatches[s.hatch] == "" {
		return
	}
	ink := "#fff"
	if luminance(s.color) > 0.4 {
		ink = "#000"
	}
	w.open(`<pattern id="fill%d" patternUnits="userSpaceOnUse" width="8" height="8">`, i)
	w.line(`<rect width="8" height="8" fill="%s"/>`, s.color)
	w.line(`<path d="%s" stroke="%s" stroke-opacity="0.55" stroke-width="1.6"/>`, hatches[s.hatch], ink)
	w.close("pattern")
}

// luminance returns the relative luminance (WCAG 2) of a #rrggbb color.
func luminance(hex string) float64 {
	l := 0.0
	for i, weight := range []float64{0.2126, 0.7152, 0.0722} {
		c, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		v := float64(c) / 255
		if v <= 0.03928 {
			v /= 12.92
		} else {
			v = math.Pow((v+0.055)/1.055, 2.4)
		}
		l += weight * v
	}
	return l
}
