package vodsim

import (
	"fmt"

	"github.com/strata-media/strata/internal/lab/plot"
)

func (r *Report) fig9(m *md, fs *figs) {
	m.H(2, "Fig. 9: interval caching with RAM")
	m.P("Rate 0.5 requests/s. Three readings: the paper's system (100 MB/s disk, Algorithm 1, so most requests are " +
		"rejected at this rate and intervals are between admitted streams only); the same without a disk limit (every " +
		"request admitted); and buffers given only at arrival (no preemption, no later allocation).")
	var rows [][]string
	for i, x := range r.Fig9 {
		rows = append(rows, []string{f(x.CacheGB, 2), f(x.Buffered, 1), f(x.CacheReadMBps, 1), pct(x.RejectProb),
			f(r.Fig9NoDisk[i].Buffered, 1), f(r.Fig9NoDisk[i].CacheReadMBps, 1), f(r.Fig9ArrivalOnly[i].Buffered, 1),
			f(perTitleStreams(r.Base, gbBytes(x.CacheGB)), 1)})
	}
	m.Table([]string{"RAM GB", "buffered streams", "RAM MB/s", "rejected", "no disk limit: streams", "MB/s", "at arrival only: streams", "one file per title (estimate)"}, rows)
	gb, buf, bw := func(x Result) float64 { return x.CacheGB }, func(x Result) float64 { return x.Buffered }, func(x Result) float64 { return x.CacheReadMBps }
	a := plot.Chart{Title: "Fig. 9(a): streams served from RAM (rate 0.5)", XLabel: "RAM (GB)", YLabel: "buffered streams", YMin: zero(), Width: 760}
	fs.add(m, "fig9a.svg", "buffered streams vs RAM", a.Lines([]plot.Series{
		series("100 MB/s disk (paper's system)", r.Fig9, gb, buf), series("no disk limit", r.Fig9NoDisk, gb, buf),
		series("buffers at arrival only", r.Fig9ArrivalOnly, gb, buf), r.perTitleSeries(),
		{Name: "paper (text): 89 at 4 GB", X: []float64{4}, Y: []float64{89}},
	}))
	b := plot.Chart{Title: "Fig. 9(b): RAM bandwidth used (available: 20 GB/s)", XLabel: "RAM (GB)", YLabel: "MB/s", YMin: zero(), Width: 760}
	fs.add(m, "fig9b.svg", "RAM bandwidth vs RAM", b.Lines([]plot.Series{
		series("100 MB/s disk", r.Fig9, gb, bw), series("no disk limit", r.Fig9NoDisk, gb, bw),
		{Name: "paper (text): 21 MB/s at 4 GB", X: []float64{4}, Y: []float64{21}},
	}))
	m.P("As in the paper, the RAM bandwidth used is tiny next to the 20 GB/s available: RAM capacity, not bandwidth, " +
		"limits interval caching. Unlike the paper, buffered streams do not grow linearly with RAM when the smallest " +
		"intervals are cached first: each extra gigabyte buys a longer interval than the last. The last column is an " +
		"estimate, not a simulation, of buffers that follow whole titles; it matches the paper's numbers (see the " +
		"last section).")
}

// perTitleSeries is the one-file-per-title estimate at Fig. 9's sizes.
func (r *Report) perTitleSeries() plot.Series {
	s := plot.Series{Name: "one file of RAM per title (estimate)"}
	for _, x := range r.Fig9 {
		s.X, s.Y = append(s.X, x.CacheGB), append(s.Y, perTitleStreams(r.Base, gbBytes(x.CacheGB)))
	}
	return s
}

func (r *Report) fig10(m *md, fs *figs) {
	m.H(2, "Fig. 10: file-level LFU with flash")
	m.P("Static top-N staging, rate 0.5. (a) flash capacity at 200 MB/s; (b) flash bandwidth at 64 GB.")
	var rows [][]string
	for _, x := range r.Fig10Capacity {
		held := gbBytes(x.CacheGB) / r.Base.FileSize()
		rows = append(rows, []string{f(x.CacheGB, 0), fmt.Sprint(held), f(x.Buffered, 1), f(x.CacheReadMBps, 1), f(x.HitRatio, 3), pct(x.RejectProb)})
	}
	m.Table([]string{"flash GB", "titles held", "buffered streams", "flash MB/s", "hit ratio", "rejected"}, rows)
	rows = nil
	for _, x := range r.Fig10Bandwidth {
		rows = append(rows, []string{f(x.CacheBW, 0), fmt.Sprint(int64(x.CacheBW*float64(mb)) / r.Base.Bitrate), f(x.Buffered, 1), f(x.HitRatio, 3), pct(x.RejectProb)})
	}
	m.Table([]string{"flash MB/s", "stream cap", "buffered streams", "hit ratio", "rejected"}, rows)
	buf := func(x Result) float64 { return x.Buffered }
	a := plot.Chart{Title: "Fig. 10(a): LFU, 200 MB/s flash (cap 835 streams)", XLabel: "flash (GB)", YLabel: "buffered streams", YMin: zero(), Width: 760}
	fs.add(m, "fig10a.svg", "buffered streams vs flash capacity", a.Lines([]plot.Series{
		series("strata sim", r.Fig10Capacity, cacheGB, buf), {Name: "paper (text): 800 from 120 GB", X: []float64{120, 256}, Y: []float64{800, 800}},
	}))
	b := plot.Chart{Title: "Fig. 10(b): LFU, 64 GB flash", XLabel: "flash bandwidth (MB/s)", YLabel: "buffered streams", YMin: zero(), Width: 760}
	fs.add(m, "fig10b.svg", "buffered streams vs flash bandwidth", b.Lines([]plot.Series{series("strata sim", r.Fig10Bandwidth, cacheBW, buf)}))
	m.P("Both limits appear as in the paper: with little capacity the flash holds too few titles to use its bandwidth; " +
		"with enough capacity, its bandwidth caps the streams it serves.")
}

func (r *Report) fig11(m *md, fs *figs) {
	m.H(2, "Fig. 11: 5.23 GB of RAM against 64 GB of flash (equal cost)")
	m.P("Interval caching with 5.23 GB of RAM (unlimited RAM bandwidth) and static LFU on 64 GB of flash at 155 MB/s, " +
		"both over the 100 MB/s disk. The Zipf and length sweeps run at rate 0.5 (assumed: the paper does not say; 0.5 " +
		"is §6.2's rate, and at it 64 GB of 60-minute titles is just at flash's 647-stream cap, which matches the " +
		"paper's remark that LFU's hit ratio falls beyond 60 minutes).")
	sweeps := []struct {
		name, x, file string
		s             Sweep
	}{
		{"arrival rate", "requests/s", "rate", r.Fig11Rate}, {"Zipf exponent s", "s", "zipf", r.Fig11Zipf},
		{"video length", "minutes", "length", r.Fig11Length},
	}
	for i, sw := range sweeps {
		r.fig11Sweep(m, fs, sw.name, sw.x, sw.file, sw.s, 'a'+rune(3*i))
	}
}

// fig11Sweep writes one row of Fig. 11: a table and three panels.
func (r *Report) fig11Sweep(m *md, fs *figs, name, xlabel, file string, s Sweep, panel rune) {
	m.H(3, "Against "+name)
	var rows [][]string
	for i, x := range s.X {
		ic, l := s.IC[i], s.LFU[i]
		rows = append(rows, []string{f(x, 3), f(ic.Buffered, 1), f(l.Buffered, 1), f(ic.HitRatio, 3), f(l.HitRatio, 3), pct(ic.RejectProb), pct(l.RejectProb)})
	}
	m.Table([]string{xlabel, "IC streams", "LFU streams", "IC hit", "LFU hit", "IC rejected", "LFU rejected"}, rows)
	metrics := []struct {
		title, y string
		get      func(Result) float64
	}{
		{"buffered streams", "streams", func(x Result) float64 { return x.Buffered }},
		{"hit ratio", "hit ratio", func(x Result) float64 { return x.HitRatio }},
		{"rejection probability", "rejected", func(x Result) float64 { return x.RejectProb }},
	}
	for j, mt := range metrics {
		ic, l := plot.Series{Name: "interval caching, 5.23 GB RAM"}, plot.Series{Name: "file-level LFU, 64 GB flash"}
		for i, x := range s.X {
			ic.X, ic.Y = append(ic.X, x), append(ic.Y, mt.get(s.IC[i]))
			l.X, l.Y = append(l.X, x), append(l.Y, mt.get(s.LFU[i]))
		}
		ch := plot.Chart{Title: fmt.Sprintf("Fig. 11(%c): %s vs %s", panel+rune(j), mt.title, name), XLabel: xlabel, YLabel: mt.y, YMin: zero()}
		fs.add(m, fmt.Sprintf("fig11%c.svg", panel+rune(j)), mt.title+" vs "+name, ch.Lines([]plot.Series{ic, l}))
	}
}

func (r *Report) onset(m *md) {
	o := r.Onset
	m.H(2, "§6.3: capacity added by each cache")
	m.P("The arrival rate is raised in steps of %s until a run rejects a request; the table gives the last rate "+
		"without rejection and the run there. The paper's 23%% and 59%% are 1/(1 - hit ratio) - 1 of its hit ratios "+
		"(1/0.81 = 1.23, 1/0.63 = 1.59): the load the disk is relieved of. Both measures are given.", f(r.onsetStep(), 3))
	row := func(name string, p onsetPoint, gain, formula float64, paper string) []string {
		return []string{name, f(p.Rate, 3), f(p.Result.HitRatio, 3), f(p.Result.Buffered, 0), f(p.Result.Streams, 0),
			fmt.Sprintf("%s (%s)", f(p.FirstReject, 3), pct(p.FirstRejectProb)), pct(gain), pct(formula), paper}
	}
	m.Table([]string{"system", "last rate, no rejection", "hit ratio", "cache streams", "all streams", "next rate (rejected)", "capacity added", "1/(1-h) - 1", "paper"}, [][]string{
		row("HDD only (417 streams)", o.HDD, 0, 0, "–"),
		row("interval caching, 5.23 GB RAM", o.IC, o.ICGain, o.ICFormulaGain, "0.08, h 0.19, +23%"),
		row("file-level LFU, 64 GB flash", o.LFU, o.LFUGain, o.LFUFormulaGain, "0.16, h 0.37, +59%"),
	})
}

func (r *Report) onsetStep() float64 {
	if sc, ok := scales[r.Scale]; ok {
		return sc.OnsetStep
	}
	return 0
}
