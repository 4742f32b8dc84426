package mrissim

import (
	"github.com/strata-media/strata/internal/lab/plot"
)

// figures renders the report's SVG charts by file name.
func (rep *Report) figures() map[string][]byte {
	out := map[string][]byte{
		"reads-ops.svg": rep.readChart("Reads: operations per second (MRIS Fig. 10)", "ops/s", func(r Result) float64 { return r.OpsPerS }),
		"reads-mb.svg":  rep.readChart("Reads: MB per second (MRIS Fig. 12)", "MB/s", func(r Result) float64 { return r.MBPerS }),
		"model-ops.svg": rep.modelChart(false),
		"model-mb.svg":  rep.modelChart(true),
		"speedup.svg":   rep.speedupChart(),
		"writes.svg":    rep.writeChart(),
	}
	return out
}

func ratioAxis(title, ylabel string) plot.Chart {
	return plot.Chart{Title: title, XLabel: "small reads per large read (ratio)", YLabel: ylabel, XLog: true, YLog: true}
}

func (rep *Report) readChart(title, ylabel string, val func(Result) float64) []byte {
	var series []plot.Series
	for _, s := range setups {
		sr := plot.Series{Name: s.Name}
		for _, ratio := range rep.Config.Ratios {
			r, _ := rep.read(s.Name, ratio)
			sr.X, sr.Y = append(sr.X, float64(ratio)), append(sr.Y, val(r))
		}
		series = append(series, sr)
	}
	return ratioAxis(title, ylabel).Lines(series)
}

// modelChart is measured against modelled throughput (MRIS Figs. 11, 13):
// SSD and HDD from their own fitted lines, Hybrid from equation 3 or 5.
func (rep *Report) modelChart(mb bool) []byte {
	c, co := rep.Config, rep.Costs
	lines := map[string][2]float64{"SSD": {co.SmallFlash, co.LargeFlash}, "Hybrid": {co.SmallFlash, co.LargeHDD}, "HDD": {co.SmallHDD, co.LargeHDD}}
	var series []plot.Series
	for _, s := range setups {
		meas, mod := plot.Series{Name: s.Name + " measured"}, plot.Series{Name: s.Name + " model"}
		for _, ratio := range c.Ratios {
			r, _ := rep.read(s.Name, ratio)
			l := lines[s.Name]
			x := float64(ratio)
			if mb {
				meas.Y, mod.Y = append(meas.Y, r.MBPerS), append(mod.Y, co.mb(l[0], l[1], ratio, c.SmallSize, c.LargeSize))
			} else {
				meas.Y, mod.Y = append(meas.Y, r.OpsPerS), append(mod.Y, co.ops(l[0], l[1], ratio))
			}
			meas.X, mod.X = append(meas.X, x), append(mod.X, x)
		}
		series = append(series, meas, mod)
	}
	if mb {
		return ratioAxis("Measured and modelled MB/s (MRIS Fig. 13, eq. 5)", "MB/s").Lines(series)
	}
	return ratioAxis("Measured and modelled ops/s (MRIS Fig. 11, eq. 1-3)", "ops/s").Lines(series)
}

func (rep *Report) speedupChart() []byte {
	ours := map[string]*plot.Series{"SSD": {Name: "SSD (ours)"}, "Hybrid": {Name: "Hybrid (ours)"}}
	for _, ratio := range rep.Config.Ratios {
		hdd, _ := rep.read("HDD", ratio)
		for name, s := range ours {
			r, _ := rep.read(name, ratio)
			s.X, s.Y = append(s.X, float64(ratio)), append(s.Y, r.MBPerS/hdd.MBPerS)
		}
	}
	series := []plot.Series{*ours["SSD"], *ours["Hybrid"]}
	if len(rep.Calibrated) > 0 {
		cal := plot.Series{Name: "Hybrid (ours, paper's software)"}
		for _, ratio := range rep.Config.Ratios {
			_, h := speedup(rep.Calibrated, ratio)
			cal.X, cal.Y = append(cal.X, float64(ratio)), append(cal.Y, h)
		}
		series = append(series, cal)
	}
	for _, name := range []string{"SSD", "Hybrid"} {
		s := plot.Series{Name: name + " (paper Table 4)"}
		for i, r := range paperRatios {
			s.X, s.Y = append(s.X, float64(r)), append(s.Y, paperMBSpeedup[name][i])
		}
		series = append(series, s)
	}
	return ratioAxis("Read speedup over HDD in MB/s (MRIS Table 4)", "speedup").Lines(series)
}

func (rep *Report) writeChart() []byte {
	var groups []plot.Bar
	for _, s := range setups {
		b := plot.Bar{Label: s.Name}
		for _, w := range rep.Writes {
			if w.Setup == s.Name {
				b.Values = append(b.Values, w.MBPerS)
			}
		}
		groups = append(groups, b)
	}
	return plot.Chart{Title: "Writes: MB per second (MRIS Fig. 9b)", YLabel: "MB/s"}.Bars(groups, []string{"sequential keys", "random keys"})
}
