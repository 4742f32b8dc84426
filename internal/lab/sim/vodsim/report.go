package vodsim

import (
	"fmt"
	"math"

	"github.com/strata-media/strata/internal/lab/plot"
	"github.com/strata-media/strata/internal/lab/report"
	"github.com/strata-media/strata/internal/lab/sim/des"
)

// md builds Markdown.
type md = report.Markdown

// figs collects a report's figures.
type figs []des.Figure

// add renders a chart into the report and keeps its SVG.
func (fs *figs) add(m *md, file, alt string, svg []byte) {
	m.P("![%s](%s)", alt, file)
	*fs = append(*fs, des.Figure{File: file, SVG: svg})
}

// f formats a float compactly; NaN and infinities as a dash or "never".
func f(v float64, prec int) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsInf(v, 1):
		return "never"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

// series builds a plot series from results.
func series(name string, rs []Result, x func(Result) float64, y func(Result) float64) plot.Series {
	s := plot.Series{Name: name}
	for _, r := range rs {
		s.X, s.Y = append(s.X, x(r)), append(s.Y, y(r))
	}
	return s
}

func zero() *float64 { v := 0.0; return &v }

// Markdown renders the report; the figures are the SVGs it links to.
func (r *Report) Markdown(command string) (string, []des.Figure) {
	var m md
	var fs figs
	m.H(1, "The VoD paper reproduced with strata-lab sim vod")
	m.P("Command: `%s`. Scale **%s**: %s runs, seed %d; %.0f s of wall time on this machine. The paper is "+
		"the VoD paper (Ryu, Kim and Ramachandran, MMSys 2011; see docs/design.md); section and figure numbers are its.",
		command, r.Scale, hoursText(r.Base.Duration.Hours()), r.Seed, r.Seconds)
	r.summary(&m)
	r.setup(&m)
	r.probe(&m)
	r.fig9(&m, &fs)
	r.fig10(&m, &fs)
	r.fig11(&m, &fs)
	r.onset(&m)
	r.cost(&m, &fs)
	r.lifetime(&m)
	r.device(&m, &fs)
	r.dynamic(&m, &fs)
	r.differences(&m)
	return m.String(), fs
}

func hoursText(h float64) string { return fmt.Sprintf("%g-hour", h) }
