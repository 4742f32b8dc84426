package policysim

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/plot"
	"github.com/strata-media/strata/internal/lab/report"
)

// beladyNames are libCacheSim's offline policies, not online contenders.
var beladyNames = map[string]bool{"Belady": true, "BeladySize": true}

// bestOnline is libCacheSim's online policy of the highest hit ratio.
func (y *Yardstick) bestOnline() (string, float64) {
	best, hr := "", -1.0
	for _, n := range y.names() {
		if r := y.Policies[n]; !beladyNames[n] && r.HitRatio > hr {
			best, hr = n, r.HitRatio
		}
	}
	return best, hr
}

// names are the policies in a stable order.
func (y *Yardstick) names() []string {
	var ns []string
	for n := range y.Policies {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// result returns the named policy's result.
func (w *Workload) result(p tier.BlockPolicy) Result {
	i := slices.IndexFunc(w.Results, func(r Result) bool { return r.Policy == p.String() })
	return w.Results[i]
}

// best is the core policy of the highest hit ratio.
func (w *Workload) best() Result {
	b := w.Results[0]
	for _, r := range w.Results[1:] {
		if r.HitRatio > b.HitRatio {
			b = r
		}
	}
	return b
}

// Markdown renders the report and its figures; command is the command
// line that produced it.
func (r *Report) Markdown(command string) (string, []report.Figure) {
	var m report.Markdown
	sc := r.Scale
	m.H(1, "Flash block policies against the offline optimum and libCacheSim")
	m.P("Command: `%s` (seed %d). Every workload is one trace of %s at %.0f requests/s (%d requests), the first %.0f%% "+
		"uncounted warm-up, replayed through the tier core at %s of RAM and %s of flash in %s blocks, total cache %s. "+
		"Every flash write is a whole aligned block; the feed writes whatever the core plans (no utilization admission), "+
		"so the policies differ only in what they cache and evict.",
		command, r.Seed, sc.Duration, sc.Rate, int(sc.Duration.Seconds()*sc.Rate), sc.WarmShare*100,
		bytesize.Format(sc.RAM), bytesize.Format(sc.SSD), bytesize.Format(sc.Block), bytesize.Format(sc.capacity()))
	var rows [][]string
	for _, n := range workloadNames {
		if w := r.workload(n); w != nil {
			rows = append(rows, []string{n, workloadDoc[n], fmt.Sprint(w.Objects)})
		}
	}
	m.Table([]string{"workload", "what", "segments requested"}, rows)
	r.resultsTable(&m)
	r.yardstickTable(&m)
	r.verdicts(&m)
	figs := r.figures(&m)
	return m.String(), figs
}

func (r *Report) workload(name string) *Workload {
	for _, w := range r.Workloads {
		if w.Name == name {
			return w
		}
	}
	return nil
}

func (r *Report) resultsTable(m *report.Markdown) {
	m.H(2, "Hit ratios and flash writes")
	m.P("Hit ratio: requests served from RAM or flash. Of Belady: the hit ratio over our offline Belady's " +
		"(farthest next request, variable sizes, at the total cache size, on the same requests). Static oracle: " +
		"the segments of highest true request probability per byte (the workload's law known), cached once and " +
		"for all at the total cache size, without blocks, a segment's first request counted as a hit (which no cache " +
		"can have). Online oracle: the same knowledge, online: it holds the segments of highest true probability per " +
		"byte among those requested so far, so a first request is a miss; when requests are independent draws from " +
		"a fixed law (flashstream) no online policy that caches only what was requested does better on average; on " +
		"vod and binge, whose sessions draw titles and renditions from a fixed law, it knows the law but not the " +
		"sessions, which Belady's order exploits.")
	var rows [][]string
	for _, w := range r.Workloads {
		for _, x := range w.Results {
			rows = append(rows, []string{w.Name, x.Policy, f3(x.HitRatio), f3(x.ByteHitRatio), f3(x.SSDHitRatio),
				pct(x.HitRatio / w.Belady), fmt.Sprintf("%.1f", x.FlashGBPerHour)})
		}
		rows = append(rows, []string{w.Name, "Belady (ours, offline)", f3(w.Belady), "", "", "100%", ""})
		if w.StaticOracle > 0 {
			rows = append(rows, []string{w.Name, "static oracle (true law known)", f3(w.StaticOracle), "", "",
				pct(w.StaticOracle / w.Belady), ""})
		}
		if w.OnlineOracle > 0 {
			rows = append(rows, []string{w.Name, "online oracle (true law known, first requests missed)", f3(w.OnlineOracle), "", "",
				pct(w.OnlineOracle / w.Belady), ""})
		}
	}
	m.Table([]string{"workload", "policy", "hit ratio", "byte hit ratio", "flash hit ratio", "of Belady", "flash GB written/h"}, rows)
}

func (r *Report) yardstickTable(m *report.Markdown) {
	var rows [][]string
	for _, w := range r.Workloads {
		y := w.Yardstick
		if y == nil {
			continue
		}
		for _, n := range y.names() {
			p := y.Policies[n]
			rows = append(rows, []string{w.Name, n, f3(p.HitRatio), f3(p.ByteHitRatio)})
		}
	}
	if len(rows) == 0 {
		m.P("No libCacheSim figures: pass --yardstick FILE (scripts/policies-libcachesim.py --json FILE) or make " +
			"python with libcachesim available.")
		return
	}
	m.H(2, "libCacheSim on the same traces")
	m.P("scripts/policies-libcachesim.py: object-level policies (no blocks) at the same total cache size, warm-up replayed uncounted.")
	m.Table([]string{"workload", "libCacheSim policy", "hit ratio", "byte hit ratio"}, rows)
}

// verdicts states, from the numbers, how the best block policy compares
// with the offline bounds, libCacheSim's best online policy and LRU's
// flash writes.
func (r *Report) verdicts(m *report.Markdown) {
	m.H(2, "Verdicts")
	var rows [][]string
	wins := 0
	for _, w := range r.Workloads {
		b, lru, def := w.best(), w.result(tier.BlockLRU), w.result(defaultPolicy())
		row := []string{w.Name, b.Policy, f3(b.HitRatio), pct(b.HitRatio / w.Belady)}
		if y := w.Yardstick; y != nil {
			bs, ok := y.Policies["BeladySize"]
			row = append(row, pctIf(b.HitRatio, bs.HitRatio, ok))
			name, hr := y.bestOnline()
			row = append(row, fmt.Sprintf("%s %s", name, f3(hr)), signed(b.HitRatio-hr))
		} else {
			row = append(row, "-", "-", "-")
		}
		row = append(row, pct(b.FlashGBPerHour/lru.FlashGBPerHour), f3(def.HitRatio))
		rows = append(rows, row)
		if b.Policy == defaultPolicy().String() && b.FlashGBPerHour <= lru.FlashGBPerHour {
			wins++
		}
	}
	m.Table([]string{"workload", "best block policy", "hit ratio", "of our Belady", "of BeladySize",
		"libCacheSim best online", "best block - it", "flash writes vs LRU", "default (" + defaultPolicy().String() + ")"}, rows)
	m.P("%s (the default) has the best hit ratio, writing no more flash than LRU, on %d of %d workloads.", defaultPolicy(), wins, len(r.Workloads))
	r.targets(m)
}

// targets states the policy's hit ratio targets on the FlashStream workload
// (at least 90% of BeladySize's, and at least libCacheSim's best online
// policy's) as met or not, when libCacheSim's figures are at hand.
func (r *Report) targets(m *report.Markdown) {
	w := r.workload("flashstream")
	if w == nil || w.Yardstick == nil {
		return
	}
	b := w.best()
	bs, ok := w.Yardstick.Policies["BeladySize"]
	name, hr := w.Yardstick.bestOnline()
	if !ok || bs.HitRatio == 0 {
		return
	}
	m.P("The policy's targets on the FlashStream workload: at least 90%% of BeladySize's hit ratio: %s (%s reaches %s); "+
		"at least libCacheSim's best online policy's: %s (%s %s against %s %s).",
		yesNo(b.HitRatio >= 0.9*bs.HitRatio), b.Policy, pct(b.HitRatio/bs.HitRatio),
		yesNo(b.HitRatio >= hr), b.Policy, f3(b.HitRatio), name, f3(hr))
}

func yesNo(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// defaultPolicy is the block policy the core runs when none is named: the
// one the live engine and every default simulator run.
func defaultPolicy() tier.BlockPolicy {
	var o tier.Options
	return o.EnsureDefaults().BlockPolicy
}

func (r *Report) figures(m *report.Markdown) []report.Figure {
	names := make([]string, 0, len(policies)+2)
	if len(r.Workloads) > 0 {
		for _, x := range r.Workloads[0].Results {
			names = append(names, x.Policy)
		}
	}
	hit, bytes, writes := []plot.Bar{}, []plot.Bar{}, []plot.Bar{}
	for _, w := range r.Workloads {
		h, b, wr := plot.Bar{Label: w.Name}, plot.Bar{Label: w.Name}, plot.Bar{Label: w.Name}
		for _, x := range w.Results {
			h.Values = append(h.Values, x.HitRatio)
			b.Values = append(b.Values, x.ByteHitRatio)
			wr.Values = append(wr.Values, x.FlashGBPerHour)
		}
		h.Values = append(h.Values, w.Belady)
		hit, bytes, writes = append(hit, h), append(bytes, b), append(writes, wr)
	}
	zero, one := 0.0, 1.0
	figs := []report.Figure{
		{File: "hit-ratio.svg", SVG: plot.Chart{Title: "Hit ratio (RAM + flash)", YLabel: "hit ratio", YMin: &zero, YMax: &one, Width: 820}.
			Bars(hit, append(slices.Clone(names), "Belady"))},
		{File: "byte-hit-ratio.svg", SVG: plot.Chart{Title: "Byte hit ratio (RAM + flash)", YLabel: "byte hit ratio", YMin: &zero, YMax: &one, Width: 820}.
			Bars(bytes, names)},
		{File: "flash-writes.svg", SVG: plot.Chart{Title: "Flash written", YLabel: "GB per hour", YMin: &zero, Width: 820}.
			Bars(writes, names)},
	}
	if f, ok := r.yardstickFigure(); ok {
		figs = append(figs, f)
	}
	m.H(2, "Figures")
	for _, f := range figs {
		m.Img(f.File, strings.TrimSuffix(f.File, ".svg"))
	}
	return figs
}

// yardstickFigure sets the best block policy beside libCacheSim's
// policies, per workload.
func (r *Report) yardstickFigure() (report.Figure, bool) {
	var names []string
	for _, w := range r.Workloads {
		if w.Yardstick != nil {
			names = w.Yardstick.names()
			break
		}
	}
	if names == nil {
		return report.Figure{}, false
	}
	var groups []plot.Bar
	for _, w := range r.Workloads {
		g := plot.Bar{Label: w.Name, Values: []float64{w.best().HitRatio, w.Belady}}
		for _, n := range names {
			v, ok := 0.0, false
			if w.Yardstick != nil {
				var p yardstickResult
				p, ok = w.Yardstick.Policies[n]
				v = p.HitRatio
			}
			if !ok {
				v = math.NaN()
			}
			g.Values = append(g.Values, v)
		}
		groups = append(groups, g)
	}
	zero, one := 0.0, 1.0
	series := append([]string{"best block policy", "Belady (ours)"}, names...)
	ch := plot.Chart{Title: "Hit ratio: whole blocks vs libCacheSim's object-level policies", YLabel: "hit ratio", YMin: &zero, YMax: &one, Width: 900}
	return report.Figure{File: "libcachesim.svg", SVG: ch.Bars(groups, series)}, true
}

func f3(v float64) string { return fmt.Sprintf("%.3f", v) }

func pct(v float64) string { return fmt.Sprintf("%.0f%%", v*100) }

func pctIf(a, b float64, ok bool) string {
	if !ok || b == 0 {
		return "-"
	}
	return pct(a / b)
}

func signed(v float64) string { return fmt.Sprintf("%+.3f", v) }
