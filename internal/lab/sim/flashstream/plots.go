package flashstream

import (
	"math"

	"github.com/strata-media/strata/internal/lab/plot"
	"github.com/strata-media/strata/internal/lab/report"
)

// paperFig7RPS are the paper's Fig. 7(a) values the text states: ZFS 26,
// flashcache under 1 (drawn as 0.5), FlashStream about twice ZFS.
var paperFig7RPS = map[string]float64{"FlashStream(LRU)": 52, "ZFS": 26, "Flashcache": 0.5}

func (r *Report) fig7Plots(m *md) []report.Figure {
	var rps, hits []plot.Bar
	for _, x := range r.Fig7 {
		p, ok := paperFig7RPS[x.System]
		if !ok {
			p = math.NaN()
		}
		rps = append(rps, plot.Bar{Label: x.System, Values: []float64{x.MaxRPS, p}})
		hits = append(hits, plot.Bar{Label: x.System, Values: []float64{x.AtMax.SSDHitRatio, x.AtMax.RAMHitRatio}})
	}
	zero := 0.0
	a := plot.Chart{Title: "Fig. 7(a): max request rate at 0% segment misses", YLabel: "requests/s", Width: 760, YMin: &zero}
	b := plot.Chart{Title: "Fig. 7(b): hit ratios at the max rate", YLabel: "hit ratio", Width: 760, YMin: &zero}
	m.Img("fig7a.svg", "max request rate")
	m.Img("fig7b.svg", "hit ratios")
	return []report.Figure{
		{File: "fig7a.svg", SVG: a.Bars(rps, []string{"strata sim", "paper (text)"})},
		{File: "fig7b.svg", SVG: b.Bars(hits, []string{"SSD", "RAM"})},
	}
}

func (r *Report) fillPlots(m *md) []report.Figure {
	var series []plot.Series
	for _, c := range r.Fill {
		if len(c.Minutes) > 0 {
			series = append(series, plot.Series{Name: c.System, X: c.Minutes, Y: c.Fill})
		}
	}
	zero, one := 0.0, 1.0
	ch := plot.Chart{Title: "§5.2: SSD cache fill during warm-up", XLabel: "minutes", YLabel: "share of the cache in use", YMin: &zero, YMax: &one, Width: 760}
	m.Img("fill.svg", "fill curves")
	return []report.Figure{{File: "fill.svg", SVG: ch.Lines(series)}}
}

func (r *Report) blockPlots(m *md) []report.Figure {
	var groups []plot.Bar
	for _, b := range r.BlockSize {
		groups = append(groups, plot.Bar{Label: blockName(b.BlockSize), Values: []float64{b.FilledPercent, 100 * b.Result.SSDHitRatio}})
	}
	zero := 0.0
	ch := plot.Chart{Title: "§5.3: one cold hour, random free blocks", YLabel: "percent", YMin: &zero}
	m.Img("blocksize.svg", "block size")
	return []report.Figure{{File: "blocksize.svg", SVG: ch.Bars(groups, []string{"SSD written", "SSD hit ratio"})}}
}

func (r *Report) energyPlots(m *md) []report.Figure {
	var groups []plot.Bar
	paper := map[string]float64{"FlashStream": 2.91, "Traditional A": 0.57, "Traditional B": 1.50}
	for _, e := range r.Energy {
		groups = append(groups, plot.Bar{Label: e.System, Values: []float64{e.RequestsPerJoule, paper[e.System]}})
	}
	zero := 0.0
	ch := plot.Chart{Title: "Table 5: requests per joule", YLabel: "requests/J", YMin: &zero}
	m.Img("energy.svg", "energy efficiency")
	return []report.Figure{{File: "energy.svg", SVG: ch.Bars(groups, []string{"strata sim", "paper"})}}
}
