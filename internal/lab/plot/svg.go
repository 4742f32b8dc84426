package plot

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
)

// Typography and colors shared by all charts.
const (
	fontFamily = "DejaVu Sans, Helvetica, Arial, sans-serif"
	titleSize  = 15 // chart title
	labelSize  = 12 // axis titles
	tickSize   = 11 // tick labels and legend
	valueSize  = 10 // value labels on bars
	inkColor   = "#222"
	tickColor  = "#444"
	gridColor  = "#e3e3e3"
	minorColor = "#f2f2f2"
	frameColor = "#999"
)

// svgWriter builds an indented SVG document.
type svgWriter struct {
	buf   bytes.Buffer
	depth int
}

// line writes one indented line, formatted as by fmt.Sprintf except that
// float64 arguments are printed by num.
func (w *svgWriter) line(format string, args ...any) {
	for i, a := range args {
		if f, ok := a.(float64); ok {
			args[i] = num(f)
		}
	}
	w.buf.WriteString(strings.Repeat("  ", w.depth))
	fmt.Fprintf(&w.buf, format, args...)
	w.buf.WriteByte('\n')
}

// open writes a start tag line and indents what follows.
func (w *svgWriter) open(format string, args ...any) {
	w.line(format, args...)
	w.depth++
}

// close writes the end tag of the element opened last.
func (w *svgWriter) close(name string) {
	w.depth--
	w.line("</%s>", name)
}

// begin writes the XML declaration and the root element of a w×h image.
func (w *svgWriter) begin(width, height int, title string) {
	w.line(`<?xml version="1.0" encoding="UTF-8"?>`)
	w.open(`<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s">`,
		width, height, width, height, fontFamily)
	if title != "" {
		w.line(`<title>%s</title>`, esc(title))
	}
	w.line(`<rect width="%d" height="%d" fill="#fff"/>`, width, height)
}

// end closes the root element and returns the document.
func (w *svgWriter) end() []byte {
	w.close("svg")
	return w.buf.Bytes()
}

// text writes a text element at (x, y) with the given anchor (start,
// middle, end, or "" to inherit it) and extra attributes.
func (w *svgWriter) text(x, y float64, anchor, attrs, s string) {
	if anchor != "" {
		attrs = `text-anchor="` + anchor + `" ` + attrs
	}
	if attrs != "" {
		attrs = " " + strings.TrimSpace(attrs)
	}
	w.line(`<text x="%v" y="%v"%s>%s</text>`, x, y, attrs, esc(s))
}

// esc escapes s for XML character data and attribute values; characters
// XML cannot hold become U+FFFD.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s)) // never fails writing to a Builder
	return b.String()
}
