package vodsim

import (
	"fmt"
	"time"

	"github.com/strata-media/strata/internal/lab/plot"
)

func (r *Report) device(m *md, fs *figs) {
	d := r.Device
	m.H(2, "§4: low-end against high-end SSD under reads and writes (Figs. 7-8)")
	size := "full size"
	if d.Capacity > 0 {
		size = fmt.Sprintf("scaled to %.0f GB (same geometry and over-provisioning, background-GC target scaled with the spare)", gbOf(d.Capacity))
	}
	m.P("`vod-low-end` (SSD A: coarse log-block mapping, no background GC) and `vod-high-end` (SSD C, the Intel "+
		"X25-M: page-mapped, greedy GC, background GC after 10 ms idle), %s. Both are first filled and then "+
		"rewritten once at random in 1 MB pieces (the same used state for both; the paper's drives had run its "+
		"random-write tests). Then 1 MB random reads and 1 MB sequential writes run together: *closed loop* as xdd "+
		"ran them (4 reads and 1 write outstanding), and *paced* as a VoD server loads a drive (%.0f MB/s of "+
		"stream reads, %.0f MB/s of copy writes, arriving at their rates).", size, d.PacedRead, d.PacedWrite)
	head := []string{"drive", "mapping", "reads MB/s mean", "std (per second)", "writes MB/s", "read p99 ms", "read max ms", "WAF", "GC page copies"}
	m.H(3, "Closed loop (the paper's measurement)")
	m.Table(head, devRows(d.Closed))
	m.H(3, "Paced (a VoD server's load)")
	m.Table(head, devRows(d.Paced))
	var ss []plot.Series
	for _, x := range d.Closed {
		ss = append(ss, perSecond(x.Device+" reads", x.ReadMBps), perSecond(x.Device+" writes", x.WriteMBps))
	}
	ch := plot.Chart{Title: "Fig. 7: throughput per second, 1 MB random reads + sequential writes", XLabel: "seconds", YLabel: "MB/s", YMin: zero(), Width: 900}
	fs.add(m, "fig7.svg", "read and write throughput over time", ch.Lines(ss))
	var bars []plot.Bar
	for _, x := range d.Closed {
		bars = append(bars, plot.Bar{Label: x.Device, Values: []float64{x.ReadMean, x.ReadStd}})
	}
	b := plot.Chart{Title: "Fig. 8: random-read throughput during writes", YLabel: "MB/s", YMin: zero()}
	fs.add(m, "fig8.svg", "mean and deviation of read throughput", b.Bars(bars, []string{"mean", "standard deviation"}))
	r.deviceText(m)
}

func devRows(xs []deviceResult) [][]string {
	var rows [][]string
	for _, x := range xs {
		rows = append(rows, []string{x.Device, x.Mapping, f(x.ReadMean, 1), f(x.ReadStd, 2), f(x.WriteMean, 1),
			f(x.ReadP99ms, 1), f(x.ReadMaxMs, 1), f(x.WAF, 2), fmt.Sprint(x.GCCopies)})
	}
	return rows
}

func perSecond(name string, ys []float64) plot.Series {
	s := plot.Series{Name: name, Y: ys}
	for i := range ys {
		s.X = append(s.X, float64(i))
	}
	return s
}

func (r *Report) deviceText(m *md) {
	d := r.Device
	if len(d.Closed) < 2 || len(d.Paced) < 2 {
		return
	}
	lo, hi := d.Closed[0], d.Closed[1]
	agree := map[bool]string{true: "as the paper found", false: "unlike the paper"}
	m.P("Deviation: the high-end model's read throughput varies %s times as much as the low-end one's (%s against %s "+
		"MB/s per second), %s; its garbage collection copied %d pages to absorb the sequential writes (WAF %s), while "+
		"the low-end drive switches whole units in (WAF %s).",
		f(hi.ReadStd/lo.ReadStd, 1), f(hi.ReadStd, 2), f(lo.ReadStd, 2), agree[hi.ReadStd > lo.ReadStd], hi.GCCopies, f(hi.WAF, 2), f(lo.WAF, 2))
	if hi.ReadMean >= lo.ReadMean {
		m.P("Mean: in the paper the high-end drive also read slowest; the model's does not (%s against %s MB/s). It keeps "+
			"the X25-M's 250 MB/s host interface against the RiData's 160 MB/s, and with the link shared by reads and "+
			"writes that outweighs its collection stalls. The paper could only guess at the cause (background GC, "+
			"§4.2); the FTL models reproduce the variance it predicts, not the loss of mean.", f(hi.ReadMean, 1), f(lo.ReadMean, 1))
	}
	pl, ph := d.Paced[0], d.Paced[1]
	m.P("Paced, both drives deliver the offered reads, and what differs is latency: 99th percentile %s ms on the "+
		"high-end model against %s ms on the low-end one, worst %s against %s ms. The high-end drive collects "+
		"garbage in the gaps between requests and a read that arrives meanwhile waits behind it; the low-end drive "+
		"has no background work, and its rare long reads queue behind a write that completes a 16 MB unit.",
		f(ph.ReadP99ms, 1), f(pl.ReadP99ms, 1), f(ph.ReadMaxMs, 0), f(pl.ReadMaxMs, 0))
}

func (r *Report) dynamic(m *md, fs *figs) {
	d := r.Dynamic
	m.H(2, "Beyond the paper: dynamic LFU when popularity shifts")
	m.P("The paper staged the top N titles and never changed them. Strata's LFU (`vod.LFU`) follows popularity: "+
		"request counts decay with a half-life (%s); it copies the most frequent title not on flash when its count "+
		"beats the least frequent resident title's by %g standard deviations (Poisson) and a write budget allows "+
		"(%s MB/s: 64 GB of MLC lasts 5 years at it by the paper's formula); a copy reads the disk and writes flash "+
		"with only the bandwidth streams leave free (up to %s MB/s); a victim still being read drains. The dynamic "+
		"LFU starts from the same knowledge the static one stages with (every title's expected count). Shifting "+
		"popularity: every %s, %d titles from the less popular half become the most popular. *Oracle* re-stages "+
		"the true top N at every shift, instantly and for free.",
		durText(d.HalfLife), d.Confidence, f(d.BudgetMBps, 1), f(d.CopyMBps, 0), durText(d.Shift.Every), d.Shift.Count)
	var rows [][]string
	for _, x := range d.Rows {
		pop := "fixed"
		if x.Shifting {
			pop = "shifting"
		}
		rows = append(rows, []string{f(x.ZipfS, 3), f(x.Rate, 2), pop, hitRej(x.Static), hitRej(x.Dynamic), hitRej(x.Oracle),
			fmt.Sprint(x.Dynamic.Copies), f(x.Dynamic.CacheWriteMBps, 2), lifeText(hours(paperFlash, mlcCycles, x.Dynamic.CacheWriteMBps))})
	}
	m.Table([]string{"s", "rate", "popularity", "static: hit, rejected", "dynamic", "oracle", "copies", "writes MB/s", "flash lifetime"}, rows)
	r.dynamicPlots(m, fs)
	r.dynamicTuning(m)
	r.dynamicFloors(m)
	r.dynamicText(m)
}

// dynamicText draws the conclusions from the rows at the first rate.
func (r *Report) dynamicText(m *md) {
	get := func(s float64, shifting bool) (dynRow, bool) {
		for _, x := range r.Dynamic.Rows {
			if x.ZipfS == s && x.Shifting == shifting && x.Rate == r.dynRate() {
				return x, true
			}
		}
		return dynRow{}, false
	}
	lo, ok1 := get(dynSkews[0], true)
	hi, ok2 := get(dynSkews[1], true)
	fix, ok3 := get(dynSkews[0], false)
	if !ok1 || !ok2 || !ok3 {
		return
	}
	gap := func(x dynRow) string {
		return pct((x.Dynamic.HitRatio - x.Static.HitRatio) / (x.Oracle.HitRatio - x.Static.HitRatio))
	}
	m.P("At rate %g, when popularity shifts, the dynamic LFU closes %s of the hit-ratio gap between static staging "+
		"and the oracle at the paper's s = %g, and %s at s = %g (rejections %s against static's %s). At s = %g the "+
		"signal is weak: each title gets a few requests an hour and the titles around the cache's boundary are "+
		"almost equally popular, so counts separate the new favourites from the rest only slowly; a stricter "+
		"test (confidence 2) copies less and recovers less. Under fixed popularity it costs %s of hit ratio against "+
		"static staging (which is handed the true ranking) and writes %s MB/s, a flash lifetime of %s by the "+
		"paper's formula. When the disk is saturated, reads first starves the copies; a small copy floor helps "+
		"where popularity is skewed and hurts where it is flat, so it is off by default.",
		r.dynRate(), gap(lo), dynSkews[0], gap(hi), dynSkews[1], pct(hi.Dynamic.RejectProb), pct(hi.Static.RejectProb),
		dynSkews[0], f(fix.Static.HitRatio-fix.Dynamic.HitRatio, 3), f(fix.Dynamic.CacheWriteMBps, 2),
		lifeText(hours(paperFlash, mlcCycles, fix.Dynamic.CacheWriteMBps)))
}

// durText writes a duration in hours or minutes.
func durText(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%d h", d/time.Hour)
	}
	return fmt.Sprintf("%.0f min", d.Minutes())
}

func hitRej(x Result) string { return fmt.Sprintf("%s, %s", f(x.HitRatio, 3), pct(x.RejectProb)) }

func (r *Report) dynamicPlots(m *md, fs *figs) {
	for _, x := range r.Dynamic.Rows {
		if !x.Shifting || x.Rate != r.Dynamic.Rows[0].Rate {
			continue
		}
		win := dynWindow.Hours()
		mk := func(name string, res Result) plot.Series {
			s := plot.Series{Name: name, Y: res.Windows}
			for i := range res.Windows {
				s.X = append(s.X, win*float64(i+1))
			}
			return s
		}
		ch := plot.Chart{Title: fmt.Sprintf("Hit ratio per %s, shifting popularity, s = %g, rate %g", durText(dynWindow), x.ZipfS, x.Rate),
			XLabel: "hours", YLabel: "hit ratio", YMin: zero(), Width: 760}
		file := fmt.Sprintf("dynamic-s%g.svg", x.ZipfS)
		fs.add(m, file, "hit ratio over time", ch.Lines([]plot.Series{mk("static top-N", x.Static), mk("dynamic LFU", x.Dynamic), mk("oracle", x.Oracle)}))
	}
}

func (r *Report) dynamicTuning(m *md) {
	m.P("Half-life and confidence, at rate %g (hit ratio and rejection under shifting, then fixed popularity; copies):", r.dynRate())
	var rows [][]string
	for _, t := range r.Dynamic.Tuning {
		h := "no decay"
		if t.HalfLife > 0 {
			h = durText(t.HalfLife)
		}
		rows = append(rows, []string{f(t.ZipfS, 3), h, f(t.Confidence, 0), hitRej(t.Shifting), fmt.Sprint(t.Shifting.Copies), hitRej(t.Fixed), fmt.Sprint(t.Fixed.Copies)})
	}
	m.Table([]string{"s", "half-life", "confidence (sd)", "shifting: hit, rejected", "copies", "fixed: hit, rejected", "copies"}, rows)
}

func (r *Report) dynRate() float64 {
	if len(r.Dynamic.Rows) == 0 {
		return 0
	}
	return r.Dynamic.Rows[0].Rate
}

func (r *Report) dynamicFloors(m *md) {
	m.P("Reads first leaves copies nothing when the disk is saturated, which is exactly when the cache should adapt. "+
		"Holding a little bandwidth back from admission for copies, at rate %g with shifting popularity:", floorRate)
	var rows [][]string
	for _, x := range r.Dynamic.Floors {
		rows = append(rows, []string{f(x.ZipfS, 3), f(x.MBps, 0), hitRej(x.Result), fmt.Sprint(x.Result.Copies)})
	}
	m.Table([]string{"s", "copy floor MB/s", "hit, rejected", "copies"}, rows)
}
