package streamsim

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/strata-media/strata/internal/lab/plot"
	"github.com/strata-media/strata/internal/lab/report"
	"github.com/strata-media/strata/internal/storage/model"
)

// Report is the outcome of Run.
type Report struct {
	Scale       string        `json:"scale"`
	Seed        uint64        `json:"seed"`
	Seconds     float64       `json:"seconds"`
	Experiments []*experiment `json:"experiments"`
}

// Experiment returns the named experiment, or nil.
func (r *Report) Experiment(name string) *experiment {
	for _, e := range r.Experiments {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// Run returns the run of mapping with trim, or nil.
func (e *experiment) Run(m MappingName, trim bool) *RunResult {
	for _, r := range e.Runs {
		if r != nil && r.Mapping == m && r.Trim == trim {
			return r
		}
	}
	return nil
}

// Paper figures the report compares with (MS §4.2).
const (
	paperNormalLoss   = 0.53 // Normal drops from the peak by up to 53%
	paperMultiData    = 0.90 // Multi-Data holds about 90% of the peak
	paperGain         = 0.56 // worst-case update throughput +56%
	paperP999         = -0.54
	paperP9999        = -0.61
	paperLifetime     = 0.23
	paperNoTrim       = 0.20 // Normal without TRIM: 20% of the peak
	paperSequential   = 0.71 // data the detector found sequential
	cachelibFDP       = 1.03 // CacheLib on FDP SSDs, full utilization
	cachelibNoFDP     = 3.22
	paperMultiLogLow  = 0.65
	paperMultiLogHigh = 0.85
)

func f0(v float64) string { return fmt.Sprintf("%.0f", v) }
func f1(v float64) string { return fmt.Sprintf("%.1f", v) }

// orDash formats v, or "-" when it is zero (not measured).
func orDash(v float64, f func(float64) string) string {
	if v == 0 {
		return "-"
	}
	return f(v)
}
func f2(v float64) string  { return fmt.Sprintf("%.2f", v) }
func f3(v float64) string  { return fmt.Sprintf("%.3f", v) }
func pct(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }
func signed(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%+.0f%%", 100*v)
}

// ratio is a/b - 1, NaN when b is zero.
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a/b - 1
}

// Markdown renders the report; figs are the SVGs it links to.
func (r *Report) Markdown(command string) (string, []report.Figure) {
	var m report.Markdown
	m.H(1, "The multi-streamed SSD (Kang et al., HotStorage'14, §4) with strata-lab sim streams")
	m.P("Command: `%s`. Scale **%s**, seed %d, %.0f s of wall time.", command, r.Scale, r.Seed, r.Seconds)
	r.setup(&m)
	var figs []report.Figure
	for _, e := range r.Experiments {
		figs = append(figs, e.section(&m)...)
	}
	r.caches(&m)
	r.verdict(&m)
	r.notes(&m)
	return m.String(), figs
}

func (r *Report) setup(m *report.Markdown) {
	m.H(2, "Setup")
	d := r.Experiments[0].Drive
	m.P("Drive: `%s`, the page-mapped multi-streamed SSD model of `internal/storage/model` (Samsung 840 Pro-like: 8 KiB pages, "+
		"256-page blocks, 2 planes, tPROG 1.3 ms, greedy paced GC, 5 streams as MS §3.2's prototype), %d dies, %.0f GB, "+
		"over-provisioning %.1f%% (256 GiB of flash per 256 GB). Small scale is a 1/16 slice of the 256 GB drive (2 of its 32 "+
		"dies, same blocks per die) with every size and rate of the workloads scaled alike, so it ages in the same virtual time.",
		d.Name, d.Dies, d.CapacityGB, 100*d.OverProvision)
	m.Table([]string{"what", "how", "source"}, [][]string{
		{"replay", "each workload thread keeps its queue of requests in flight and issues the next when one completes: the drive sets the pace (closed loop)", "MS §4: throughput tracks GC"},
		{"filled", "every logical page written once (SNIA preconditioning); with TRIM the file system's mkfs then discards it all", "SNIA SSS PTS"},
		{"aged", "the workload runs itself into steady state; summaries cover its later part (LSMs and caches: the second half, e.g. minutes 20-40 of 40; the 4 KiB cache: the last third)", "MS Fig. 3"},
		{"mappings", "Normal 0; Single: application 1, system 0; Multi-Log: logs 1, data 2; Multi-Data: short 1, medium 2, long 3, extreme 4", "MS Table 1"},
		{"Auto-detect", "the drive follows up to 4 sequential write patterns (a write starting where one ended), LRU replacement; others stream 0", "MS §4.2"},
		{"fresh", "the same workload on a drive with enough spare flash to take the whole run without reusing a block, so it never copies: a fresh drive at every point of the workload; throughput is normalized to its aged mean", "-"},
		{"worst window", "the lowest mean of 4 successive aged windows (LSMs: 30 s windows, so 2 min; caches and traces: a 40th of the run each): single windows swing with the workload's own phases", "-"},
		{"lifetime", fmt.Sprintf("VoD T = C x 1024 x N / (W x 3600) h, N = %d cycles, W = the Normal mapping's aged host rate x (erased pages / host pages); host TBW = C x N / that ratio", endurance), "VoD §5"},
		{"latency", "per write: an application's own writes (commit log, WAL, cache blocks) from when their queue place freed, so stalls count; flush and compaction writes from submission. \"log\" is the commit log / WAL, what an update waits for", "MS Fig. 4"},
	})
}

// section renders one experiment.
func (e *experiment) section(m *report.Markdown) []report.Figure {
	m.H(2, e.Title)
	m.P("`%s` on %s (%d dies, %.1f GB, unit %.0f MiB); throughput in %s, normalized to the ideal drive's %.1f.",
		e.Name, e.Drive.Name, e.Drive.Dies, e.Drive.CapacityGB, e.Drive.UnitMiB, e.WorkUnit, e.Ideal.Aged.Throughput)
	m.Table([]string{"mapping", "TRIM", "WAF", "GC copies", "erases", "throughput", "worst window", "p99.9 ms", "p99.99 ms",
		"log p99.9 ms", "lifetime h", "host TBW"}, e.rows())
	e.mix(m)
	e.streams(m)
	var figs []report.Figure
	if len(e.Runs[0].Windows) > 1 {
		figs = append(figs, e.throughputFig(m), e.gcFig(m))
	}
	figs = append(figs, e.latencyFig(m))
	return figs
}

func (e *experiment) rows() [][]string {
	var rows [][]string
	for _, r := range append(e.Runs, e.Ideal) {
		if r == nil {
			continue
		}
		a := r.Aged
		name := string(r.Mapping)
		if r.Ideal {
			name = "ideal (never copies)"
		}
		rows = append(rows, []string{name, yesNo(r.Trim), f3(a.WAF), fmt.Sprint(a.GCCopies), fmt.Sprint(a.Erases),
			f2(a.Norm), f2(a.MinNorm), f1(a.P999ms), f1(a.P9999ms), orDash(a.LogP999ms, f1), orDash(a.LifetimeHours, f0), f1(a.HostTBW)})
	}
	return rows
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// mix shows the share of host bytes per class (MS Table 1's last row).
func (e *experiment) mix(m *report.Markdown) {
	r := e.Runs[0]
	var total int64
	for _, b := range r.ClassBytes {
		total += b
	}
	if total == 0 {
		return
	}
	var cells []string
	for _, c := range slices.Sorted(maps.Keys(r.ClassBytes)) {
		cells = append(cells, fmt.Sprintf("%s %.1f%%", c, 100*float64(r.ClassBytes[c])/float64(total)))
	}
	m.P("Written data by class (%s run): %s.", r.Mapping, strings.Join(cells, ", "))
	if s, ok := e.Run(Auto, true).notesValue("sequential_share"); ok {
		m.P("Auto-detect put %.0f%% of the written bytes in a sequential pattern (MS §4.2: 71%% of Cassandra's).", 100*s)
	} else if s, ok := e.Run(Auto, false).notesValue("sequential_share"); ok {
		m.P("Auto-detect put %.0f%% of the written bytes in a sequential pattern.", 100*s)
	}
}

// streams shows, for runs that used several streams, each stream's share
// of the host pages and its GC copies per host page.
func (e *experiment) streams(m *report.Markdown) {
	var rows [][]string
	for _, r := range e.Runs {
		if r == nil || usedStreams(r) < 2 {
			continue
		}
		row := []string{string(r.Mapping), yesNo(r.Trim)}
		var host int64
		for _, s := range r.Streams {
			host += s.HostWrites
		}
		for _, s := range r.Streams {
			switch {
			case s.HostWrites == 0 && s.GCCopies == 0:
				row = append(row, "-")
				continue
			case s.HostWrites == 0:
				row = append(row, fmt.Sprintf("0%% / %d copies", s.GCCopies))
				continue
			}
			row = append(row, fmt.Sprintf("%s / %.2f", pct(float64(s.HostWrites)/float64(host)), float64(s.GCCopies)/float64(max(s.HostWrites, 1))))
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return
	}
	m.P("Per stream over the aged part: share of the host pages / GC copies per host page of the stream (copies are " +
		"counted to the stream of the block collected):")
	m.Table([]string{"mapping", "TRIM", "stream 0", "stream 1", "stream 2", "stream 3", "stream 4"}, rows)
}

func usedStreams(r *RunResult) int {
	n := 0
	for _, s := range r.Streams {
		if s.HostWrites > 0 {
			n++
		}
	}
	return n
}

func (r *RunResult) notesValue(k string) (float64, bool) {
	if r == nil {
		return 0, false
	}
	v, ok := r.Notes[k]
	return v, ok
}

func (e *experiment) series(pick func(point) float64, trimOnly bool) []plot.Series {
	var out []plot.Series
	for _, r := range e.Runs {
		if r == nil || (trimOnly && !r.Trim && r.Mapping != Normal) {
			continue
		}
		s := plot.Series{Name: runLabel(r)}
		for i, w := range r.Windows {
			if i == len(r.Windows)-1 && len(r.Windows) > 2 {
				break // partial
			}
			s.X, s.Y = append(s.X, w.Minutes), append(s.Y, pick(w))
		}
		out = append(out, s)
	}
	return out
}

func runLabel(r *RunResult) string {
	if r.Trim {
		return string(r.Mapping)
	}
	return string(r.Mapping) + " (no TRIM)"
}

// fileName is name made safe for a file name.
func fileName(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, name)
}

func (e *experiment) throughputFig(m *report.Markdown) report.Figure {
	file := fileName(e.Name) + "-throughput.svg"
	svg := plot.Chart{Title: e.Name + ": throughput normalized to a fresh drive (MS Fig. 3a)", XLabel: "minutes",
		YLabel: "normalized throughput", YMin: new(0.0)}.Lines(e.series(func(p point) float64 { return p.Norm }, true))
	m.P("![throughput over time](%s)", file)
	return report.Figure{File: file, SVG: svg}
}

func (e *experiment) gcFig(m *report.Markdown) report.Figure {
	file := fileName(e.Name) + "-gc.svg"
	svg := plot.Chart{Title: e.Name + ": pages copied by GC per window (MS Fig. 3b)", XLabel: "minutes",
		YLabel: "GC page copies", YMin: new(0.0)}.Lines(e.series(func(p point) float64 { return float64(p.GCCopies) }, true))
	m.P("![GC copies over time](%s)", file)
	return report.Figure{File: file, SVG: svg}
}

func (e *experiment) latencyFig(m *report.Markdown) report.Figure {
	var ss []plot.Series
	for _, r := range e.Runs {
		if r != nil && (r.Trim || r.Mapping == Normal) && len(r.CDF[0]) > 0 {
			ss = append(ss, plot.Series{Name: runLabel(r), X: r.CDF[0], Y: r.CDF[1]})
		}
	}
	file := fileName(e.Name) + "-latency.svg"
	svg := plot.Chart{Title: e.Name + ": write latency, aged drive (MS Fig. 4)", XLabel: "latency (ms)",
		YLabel: "cumulative fraction", XLog: true, YMin: new(0.9), YMax: new(1.0)}.Step(ss)
	m.P("![latency CDF](%s)", file)
	return report.Figure{File: file, SVG: svg}
}

// caches compares the segment cache with the random-write cache, the
// analytic bound and CacheLib's FDP figure.
func (r *Report) caches(m *report.Markdown) {
	fc := r.Experiment("flashcache-4k")
	if fc == nil {
		return
	}
	m.H(2, "Strata's segment cache at 90% of the drive vs a 4 KiB random-write cache")
	op := r.Experiments[0].Drive.OverProvision
	eff := (1+op-0.1)/0.9 - 1
	rows := [][]string{}
	for _, e := range r.Experiments {
		if !strings.HasPrefix(e.Name, "segcache") && e != fc {
			continue
		}
		for _, run := range e.Runs {
			rows = append(rows, []string{e.Name, string(run.Mapping), f3(run.Aged.WAF), f2(run.Aged.Norm), "measured"})
		}
	}
	rows = append(rows,
		[]string{"4 KiB random writes, greedy GC", "-", f2(model.DesnoyersWAF(op)), "-", fmt.Sprintf("analytic (Desnoyers), whole drive, OP %.1f%%", 100*op)},
		[]string{"4 KiB random writes, greedy GC", "-", f2(model.DesnoyersWAF(eff)), "-", fmt.Sprintf("analytic, 90%% span + 10%% cold: effective OP %.1f%%", 100*eff)},
		[]string{"CacheLib on an FDP SSD", "FDP", f2(cachelibFDP), "-", "reference figure (full utilization), not measured here"},
		[]string{"CacheLib without FDP", "-", f2(cachelibNoFDP), "-", "reference figure (full utilization), not measured here"},
	)
	m.Table([]string{"cache", "mapping", "WAF", "throughput", "source"}, rows)
	m.P("The random-write cache's WAF is per 8 KiB flash page; each 4 KiB write also programs a whole page, so its flash " +
		"bytes per host byte are twice that.")
}

// verdict sets the Cassandra results against the paper's.
func (r *Report) verdict(m *report.Markdown) {
	v, ok := reportVerdict(r)
	if !ok {
		return
	}
	m.H(2, "Cassandra: the paper's shape, reproduced or not")
	m.Table([]string{"claim (MS §4.2)", "paper", "here", "reproduced"}, v.rows())
}

// notes state the differences from the paper, computed from this run;
// the discussion of why is docs/notes/streams.md.
func (r *Report) notes(m *report.Markdown) {
	m.H(2, "Notes: what does not reproduce")
	for _, n := range notes(r) {
		m.P("- %s", n)
	}
	m.P("Why the model's numbers differ where they do is discussed in `docs/notes/streams.md`.")
}
