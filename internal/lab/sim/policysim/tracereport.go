package policysim

import (
	"fmt"
	"math"
	"strings"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/plot"
	"github.com/strata-media/strata/internal/lab/report"
)

func bytesLabel(n int64) string { return bytesize.Compact(n) }

// best is the block policy of the highest hit ratio at this size.
func (r *TraceRun) best() Result {
	b := r.Results[0]
	for _, x := range r.Results[1:] {
		if x.HitRatio > b.HitRatio {
			b = x
		}
	}
	return b
}

func (r *TraceRun) result(p tier.BlockPolicy) Result {
	for i, q := range policies {
		if q == p {
			return r.Results[i]
		}
	}
	return Result{}
}

// Markdown renders the trace report and its figures; command is the
// command line that produced it.
func (r *TraceReport) Markdown(command string) (string, []report.Figure) {
	var m report.Markdown
	rt := r.Trace
	m.H(1, "Flash block policies on a trace")
	var dur string
	if n := len(rt.Times); n > 0 {
		dur = rt.Times[n-1].String()
	}
	m.P("Command: `%s`. Trace `%s` (%s format): %d records, %d requests of %d objects, footprint %s, spanning %s.",
		command, rt.File, rt.Format, rt.Records, len(rt.Reqs), len(rt.Cat.Sizes), bytesize.Format(rt.Footprint()), dur)
	timing := "Requests are replayed at the trace's own times"
	if r.Rate > 0 {
		timing = fmt.Sprintf("Requests are replayed at %g per second, not at the trace's times", r.Rate)
	} else if r.Spread > 0 {
		timing += fmt.Sprintf(", the %d that share a timestamp with the one before spread evenly up to the next", r.Spread)
	}
	m.P("%s; %d requests counted after %d of uncounted warm-up. Each total cache size is split into RAM and flash in "+
		"whole aligned blocks; the feed writes whatever the core plans, so the policies differ only in what they cache and "+
		"evict. %s is the tier core with the whole size as its RAM pool: an object-level LRU, libCacheSim's LRU's "+
		"counterpart. Our Belady evicts the object requested farthest ahead, variable sizes, at the total size.",
		timing, r.Requests, r.Warm, objectLRU)
	if len(rt.Skipped) > 0 || rt.Resized > 0 || rt.Reordered > 0 {
		var rows [][]string
		for _, k := range rt.skippedReasons() {
			rows = append(rows, []string{"skipped: " + k, fmt.Sprint(rt.Skipped[k])})
		}
		if rt.Resized > 0 {
			rows = append(rows, []string{"objects seen with more than one size (given their largest)", fmt.Sprint(rt.Resized)})
		}
		if rt.Reordered > 0 {
			rows = append(rows, []string{"requests stamped before the one above (moved to its time)", fmt.Sprint(rt.Reordered)})
		}
		m.Table([]string{"record", "count"}, rows)
	}
	r.sizesTable(&m)
	r.policyTable(&m)
	r.libCacheSimTable(&m)
	r.traceVerdicts(&m)
	figs := []report.Figure{r.missRatioCurve()}
	m.H(2, "Figures")
	for _, f := range figs {
		m.Img(f.File, strings.TrimSuffix(f.File, ".svg"))
	}
	return m.String(), figs
}

func (r *TraceReport) sizesTable(m *report.Markdown) {
	var rows [][]string
	for _, s := range r.Sizes {
		rows = append(rows, []string{bytesize.Format(s.Capacity), bytesize.Format(s.RAM), bytesize.Format(s.Flash),
			bytesize.Format(s.Block), pct(float64(s.Capacity) / float64(max(r.Trace.Footprint(), 1)))})
	}
	m.Table([]string{"total cache", "RAM", "flash (data blocks)", "block", "of footprint"}, rows)
}

func (r *TraceReport) policyTable(m *report.Markdown) {
	m.H(2, "Hit ratios and flash writes")
	var rows [][]string
	for _, s := range r.Sizes {
		c := bytesize.Format(s.Capacity)
		for _, x := range append(append([]Result(nil), s.Results...), s.ObjectLRU) {
			rows = append(rows, []string{c, x.Policy, f3(x.HitRatio), f3(x.ByteHitRatio), f3(1 - x.HitRatio),
				pctIf(x.HitRatio, s.Belady, true), fmt.Sprintf("%.2f", x.FlashGBPerHour)})
		}
		rows = append(rows, []string{c, "Belady (ours, offline)", f3(s.Belady), "", f3(1 - s.Belady), "100%", ""})
	}
	m.Table([]string{"total cache", "policy", "hit ratio", "byte hit ratio", "miss ratio", "of Belady", "flash GB written/h"}, rows)
}

func (r *TraceReport) libCacheSimTable(m *report.Markdown) {
	if r.LibCacheSim != "" {
		m.P("No libCacheSim figures: %s.", r.LibCacheSim)
		return
	}
	var rows [][]string
	for _, s := range r.Sizes {
		if s.Yardstick == nil {
			continue
		}
		for _, n := range s.Yardstick.names() {
			p := s.Yardstick.Policies[n]
			rows = append(rows, []string{bytesize.Format(s.Capacity), n, f3(p.HitRatio), f3(p.ByteHitRatio), f3(1 - p.HitRatio)})
		}
	}
	m.H(2, "libCacheSim on the same trace")
	m.P("%s on the trace exported in oracleGeneral (the same requests and object sizes): object-level policies at the same "+
		"total cache size, the warm-up replayed uncounted.", Script)
	m.Table([]string{"total cache", "libCacheSim policy", "hit ratio", "byte hit ratio", "miss ratio"}, rows)
}

// traceVerdicts sets, per size, the best block policy and the default
// beside BeladySize and libCacheSim's best online policy, and our object
// LRU beside libCacheSim's LRU (the check that both read the same trace
// alike).
func (r *TraceReport) traceVerdicts(m *report.Markdown) {
	m.H(2, "Verdicts")
	var rows [][]string
	for _, s := range r.Sizes {
		b, def := s.best(), s.result(defaultPolicy())
		row := []string{bytesize.Format(s.Capacity), fmt.Sprintf("%s %s", b.Policy, f3(b.HitRatio)), f3(def.HitRatio), pct(def.HitRatio / s.Belady)}
		if y := s.Yardstick; y != nil {
			bs, ok := y.Policies["BeladySize"]
			name, hr := y.bestOnline()
			lru, lok := y.Policies["LRU"]
			row = append(row, pctIf(def.HitRatio, bs.HitRatio, ok), fmt.Sprintf("%s %s", name, f3(hr)), signed(def.HitRatio-hr))
			if lok {
				row = append(row, fmt.Sprintf("%s vs %s (%+.1f points)", f3(s.ObjectLRU.HitRatio), f3(lru.HitRatio),
					100*(s.ObjectLRU.HitRatio-lru.HitRatio)))
			} else {
				row = append(row, "-")
			}
		} else {
			row = append(row, "-", "-", "-", "-")
		}
		rows = append(rows, row)
	}
	d := defaultPolicy().String()
	m.Table([]string{"total cache", "best block policy", "default (" + d + ")", "of our Belady", "of BeladySize",
		"libCacheSim best online", "default - it", "object LRU vs libCacheSim LRU"}, rows)
}

// missRatioCurve plots each policy's miss ratio over the sizes.
func (r *TraceReport) missRatioCurve() report.Figure {
	var series []plot.Series
	add := func(name string, y func(*TraceRun) (float64, bool)) {
		s := plot.Series{Name: name}
		for _, run := range r.Sizes {
			if v, ok := y(run); ok {
				s.X = append(s.X, float64(run.Capacity)/(1<<20))
				s.Y = append(s.Y, v)
			}
		}
		if len(s.X) > 0 {
			series = append(series, s)
		}
	}
	for i, n := range policyNames() {
		add(n, func(run *TraceRun) (float64, bool) { return 1 - run.Results[i].HitRatio, true })
	}
	add(objectLRU, func(run *TraceRun) (float64, bool) { return 1 - run.ObjectLRU.HitRatio, true })
	add("Belady (ours)", func(run *TraceRun) (float64, bool) { return 1 - run.Belady, true })
	var lcs []string
	for _, run := range r.Sizes {
		if run.Yardstick != nil {
			lcs = run.Yardstick.names()
			break
		}
	}
	for _, n := range lcs {
		add("libCacheSim "+n, func(run *TraceRun) (float64, bool) {
			if run.Yardstick == nil {
				return math.NaN(), false
			}
			p, ok := run.Yardstick.Policies[n]
			return 1 - p.HitRatio, ok
		})
	}
	zero, one := 0.0, 1.0
	ch := plot.Chart{Title: "Miss-ratio curve", XLabel: "total cache size (MiB)", YLabel: "miss ratio",
		XLog: len(r.Sizes) > 2, YMin: &zero, YMax: &one, Width: 900, Height: 560}
	return report.Figure{File: "miss-ratio-curve.svg", SVG: ch.Lines(series)}
}
