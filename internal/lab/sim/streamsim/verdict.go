package streamsim

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/strata-media/strata/internal/bytesize"
)

// Verdict is the Cassandra experiment's numbers in the terms of MS §4.2.
type Verdict struct {
	// NormalLoss is how much of the fresh throughput Normal (with TRIM)
	// loses on the aged drive, mean and worst window.
	NormalLoss, NormalWorstLoss float64
	// MultiData is Multi-Data's aged throughput over the fresh.
	MultiData float64
	// Gain and WorstGain compare Multi-Data's throughput with Normal's.
	Gain, WorstGain float64
	// P999 and P9999 are the change of the commit log's tail latency.
	P999, P9999 float64
	// Lifetime is Normal's erased pages per host page over Multi-Data's,
	// minus one: the lifetime gain.
	Lifetime float64
	// NoTrim, Single and MultiLog are those runs' aged throughput over
	// the fresh.
	NoTrim, Single, MultiLog float64
	// AutoGain is Auto-detect's throughput over Normal's, minus one;
	// Sequential the share it found sequential.
	AutoGain, Sequential float64
	// P50 is the change of the commit log's median latency.
	P50 float64
	// UnpacedP999 and UnpacedP9999 are P999 and P9999 on the drive whose
	// collection is not paced (NaN when that experiment did not run).
	UnpacedP999, UnpacedP9999 float64
}

// reportVerdict is the Cassandra verdict of r, with the unpaced drive's
// tail latencies; ok is false without the Cassandra experiment.
func reportVerdict(r *Report) (v Verdict, ok bool) {
	e := r.Experiment("cassandra")
	if e == nil {
		return v, false
	}
	v = newVerdict(e)
	v.UnpacedP999, v.UnpacedP9999 = math.NaN(), math.NaN()
	if u := r.Experiment("cassandra-unpaced"); u != nil {
		if n, md := u.Run(Normal, true), u.Run(MultiData, true); n != nil && md != nil {
			v.UnpacedP999, v.UnpacedP9999 = ratio(md.Aged.LogP999ms, n.Aged.LogP999ms), ratio(md.Aged.LogP9999ms, n.Aged.LogP9999ms)
		}
	}
	return v, true
}

func newVerdict(e *experiment) Verdict {
	var v Verdict
	n, md := e.Run(Normal, true), e.Run(MultiData, true)
	if n == nil || md == nil {
		return v
	}
	v.NormalLoss, v.NormalWorstLoss = 1-n.Aged.Norm, 1-n.Aged.MinNorm
	v.MultiData = md.Aged.Norm
	v.Gain, v.WorstGain = ratio(md.Aged.Throughput, n.Aged.Throughput), ratio(md.Aged.MinNorm, n.Aged.MinNorm)
	v.P999, v.P9999 = ratio(md.Aged.LogP999ms, n.Aged.LogP999ms), ratio(md.Aged.LogP9999ms, n.Aged.LogP9999ms)
	v.P50 = ratio(md.Aged.LogP50ms, n.Aged.LogP50ms)
	v.Lifetime = ratio(n.Aged.EraseWAF, md.Aged.EraseWAF)
	if r := e.Run(Normal, false); r != nil {
		v.NoTrim = r.Aged.Norm
	}
	if r := e.Run(single, true); r != nil {
		v.Single = r.Aged.Norm
	}
	if r := e.Run(multiLog, true); r != nil {
		v.MultiLog = r.Aged.Norm
	}
	if r := e.Run(Auto, true); r != nil {
		v.AutoGain = ratio(r.Aged.Throughput, n.Aged.Throughput)
		v.Sequential = r.Notes["sequential_share"]
	}
	return v
}

// judge says whether here reproduces paper: the same sign and within half
// of the paper's magnitude either way is "yes"; the same sign "direction
// only"; else "no".
func judge(here, paper float64) string {
	switch {
	case math.IsNaN(here):
		return "n/a"
	case here*paper <= 0:
		return "no"
	case math.Abs(here-paper) <= 0.5*math.Abs(paper):
		return "yes"
	}
	return "direction only"
}

func (v Verdict) rows() [][]string {
	rows := [][]string{
		{"Normal (TRIM) loses throughput as the drive ages", "-" + pct(paperNormalLoss), fmt.Sprintf("-%s (worst window -%s)", pct(v.NormalLoss), pct(v.NormalWorstLoss)), judge(v.NormalWorstLoss, paperNormalLoss)},
		{"Multi-Data holds its throughput", pct(paperMultiData) + " of peak", pct(v.MultiData), judgeLevel(min(v.MultiData, paperMultiData), paperMultiData, 0.1)},
		{"Multi-Data over Normal, throughput", signed(paperGain), fmt.Sprintf("%s mean, %s worst window", signed(v.Gain), signed(v.WorstGain)), judge(v.WorstGain, paperGain)},
		{"99.9th percentile latency, Multi-Data vs Normal", signed(paperP999), signed(v.P999), judge(v.P999, paperP999)},
		{"99.99th percentile latency", signed(paperP9999), signed(v.P9999), judge(v.P9999, paperP9999)},
		{"median latency (not in the paper)", "-", signed(v.P50), "-"},
		{"lifetime (fewer erases)", signed(paperLifetime), signed(v.Lifetime), judge(v.Lifetime, paperLifetime)},
		{"Normal without TRIM", pct(paperNoTrim) + " of peak", pct(v.NoTrim), noTrimJudge(v.NoTrim, 1-v.NormalLoss)},
		{"Single about as Normal", "little difference", pct(v.Single) + " vs " + pct(1-v.NormalLoss), about(v.Single, 1-v.NormalLoss, 0.1)},
		{"Multi-Log between Normal and Multi-Data", fmt.Sprintf("%s-%s of peak", pct(paperMultiLogLow), pct(paperMultiLogHigh)), pct(v.MultiLog), between(1-v.NormalLoss, v.MultiLog, v.MultiData)},
		{"Auto-detect: sequential share", pct(paperSequential), pct(v.Sequential), judgeLevel(v.Sequential, paperSequential, 0.15)},
		{"Auto-detect: gain over Normal", "marginal", signed(v.AutoGain), marginal(v.AutoGain, v.Gain)},
	}
	if !math.IsNaN(v.UnpacedP999) {
		rows = slices.Insert(rows, 5,
			[]string{"99.9th percentile latency, drive with unpaced GC", signed(paperP999), signed(v.UnpacedP999), judge(v.UnpacedP999, paperP999)},
			[]string{"99.99th percentile latency, drive with unpaced GC", signed(paperP9999), signed(v.UnpacedP9999), judge(v.UnpacedP9999, paperP9999)})
	}
	return rows
}

// judgeLevel judges a level (a share, not a change) against the paper's:
// "yes" within tol of it, else "no"; "n/a" when it was not measured.
func judgeLevel(here, paper, tol float64) string {
	switch {
	case here == 0 || math.IsNaN(here):
		return "n/a"
	case math.Abs(here-paper) <= tol:
		return "yes"
	}
	return "no"
}

// about judges "v is about ref": within tol of it, relatively.
func about(v, ref, tol float64) string {
	switch {
	case v == 0 || ref == 0:
		return "n/a"
	case math.Abs(v/ref-1) <= tol:
		return "yes"
	}
	return "no"
}

// noTrimJudge judges "Normal without TRIM falls well below its TRIM
// self": "yes" near the paper's 20% of peak, "direction only" when it
// falls by at least a quarter of what it keeps with TRIM, else "no".
func noTrimJudge(noTrim, withTrim float64) string {
	switch {
	case noTrim == 0:
		return "n/a"
	case math.Abs(noTrim-paperNoTrim) <= 0.1:
		return "yes"
	case noTrim <= 0.75*withTrim:
		return "direction only"
	}
	return "no"
}

// between judges "lo < v < hi".
func between(lo, v, hi float64) string {
	if lo < v && v < hi {
		return "yes"
	}
	return "no"
}

// marginal judges "marginal compared with the semantic mapping's gain".
func marginal(auto, semantic float64) string {
	if math.Abs(auto) < 0.25*math.Abs(semantic) {
		return "yes"
	}
	return "no"
}

// notes are the report's explanations, with the numbers of this run.
func notes(r *Report) []string {
	var out []string
	if v, ok := reportVerdict(r); ok {
		out = append(out, cassandraNotes(r.Experiment("cassandra"), v)...)
		out = append(out, unpacedNote(r, v))
	}
	out = append(out, sensitivityNote(r))
	if e := r.Experiment("segcache-lru-" + unitName(r)); e != nil {
		out = append(out, alignmentNote(e, r.Experiment("segcache-fifo-"+unitName(r))))
	}
	if e := r.Experiment("imagestore"); e != nil {
		out = append(out, imageNote(e))
	}
	return slices.DeleteFunc(out, func(s string) bool { return s == "" })
}

func unitName(r *Report) string {
	return bytesize.Compact(int64(r.Experiments[0].Drive.UnitMiB * (1 << 20)))
}

func cassandraNotes(e *experiment, v Verdict) []string {
	n, md := e.Run(Normal, true), e.Run(MultiData, true)
	if n == nil || md == nil {
		return nil
	}
	var out []string
	if share, ok := compactionShare(n); ok {
		out = append(out, fmt.Sprintf("Compaction runs unthrottled, not at the paper's 32 MB/s: it writes %s of the bytes "+
			"here (class mix above) against 19%% in the paper's Table 1.", pct(share)))
	}
	if v.NormalWorstLoss < paperNormalLoss {
		out = append(out, fmt.Sprintf("Normal with TRIM loses %s of its throughput on average (worst window %s), less than "+
			"the paper's up to 53%%, at a model WAF of %.2f.", pct(v.NormalLoss), pct(v.NormalWorstLoss), n.Aged.WAF))
	}
	if ml := e.Run(multiLog, true); ml != nil && ml.Aged.Norm <= n.Aged.Norm {
		out = append(out, multiLogNote(e, n, ml))
	}
	if judge(v.P999, paperP999) != "yes" {
		out = append(out, fmt.Sprintf("Tail latency moves %s (p99.9) and %s (p99.99) against the paper's -54%%/-61%% on the drive "+
			"with paced collection.", signed(v.P999), signed(v.P9999)))
	}
	if a := e.Run(Auto, true); a != nil && marginal(v.AutoGain, v.Gain) == "no" {
		s := fmt.Sprintf("Auto-detect is not marginal here: %s of fresh against Normal's %s (WAF %.2f vs %.2f, p99.9 %.0f vs %.0f ms).",
			pct(a.Aged.Norm), pct(n.Aged.Norm), a.Aged.WAF, n.Aged.WAF, a.Aged.P999ms, n.Aged.P999ms)
		if a.Aged.WAF <= n.Aged.WAF && a.Aged.Norm < n.Aged.Norm {
			s += " Its WAF is no worse, so the loss is not more copying."
		}
		out = append(out, s)
	}
	return out
}

// multiLogNote states a Multi-Log no better than Normal.
func multiLogNote(e *experiment, n, ml *RunResult) string {
	return fmt.Sprintf("Multi-Log does not beat Normal here (%s vs %s of fresh, WAF %.2f vs %.2f; per-stream table above).",
		pct(ml.Aged.Norm), pct(n.Aged.Norm), ml.Aged.WAF, n.Aged.WAF)
}

// unpacedNote compares the Cassandra run on the drive whose collection is
// not paced with the paced one: the direction of Multi-Data's effect on
// the commit log's tail, and whether the throughput and lifetime gains
// move (by more than 5 points) with pacing.
func unpacedNote(r *Report, paced Verdict) string {
	u := r.Experiment("cassandra-unpaced")
	if u == nil || math.IsNaN(paced.UnpacedP999) {
		return ""
	}
	uv := newVerdict(u)
	moves := func(v float64) string {
		if v <= 0 {
			return "cuts"
		}
		return "raises"
	}
	gains := "do not depend on it"
	if math.Abs(uv.Gain-paced.Gain) > 0.05 || math.Abs(uv.Lifetime-paced.Lifetime) > 0.05 {
		gains = "depend on it"
	}
	return fmt.Sprintf("With collection unpaced (a write that finds its die out of free blocks waits for whole victims), "+
		"Multi-Data %s the commit log's p99.9 by %s and %s its p99.99 by %s, against %s and %s paced (paper: -54%% and "+
		"-61%%). The throughput and lifetime gains %s: %s and %s unpaced, %s and %s paced.",
		moves(paced.UnpacedP999), pct(math.Abs(paced.UnpacedP999)), moves(paced.UnpacedP9999), pct(math.Abs(paced.UnpacedP9999)),
		signed(paced.P999), signed(paced.P9999), gains, signed(uv.Gain), signed(uv.Lifetime), signed(paced.Gain), signed(paced.Lifetime))
}

// sensitivityNote states how much Normal's aged throughput moves with the
// data set size over the Cassandra experiments.
func sensitivityNote(r *Report) string {
	var parts []string
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, e := range r.Experiments {
		if !strings.HasPrefix(e.Name, "cassandra") || e.Name == "cassandra-unpaced" {
			continue
		}
		n, md := e.Run(Normal, true), e.Run(MultiData, true)
		if n == nil || md == nil {
			continue
		}
		lo, hi = min(lo, n.Aged.Norm), max(hi, n.Aged.Norm)
		parts = append(parts, fmt.Sprintf("%s: Normal WAF %.2f / %s of fresh, Multi-Data WAF %.2f / %s",
			e.Name, n.Aged.WAF, pct(n.Aged.Norm), md.Aged.WAF, pct(md.Aged.Norm)))
	}
	if len(parts) < 2 {
		return ""
	}
	how := "changes how much Normal loses by at most 5 points"
	if hi-lo > 0.05 {
		how = fmt.Sprintf("decides how much Normal loses (its share of fresh spans %s to %s)", pct(lo), pct(hi))
	}
	return "The data set size (the paper does not give it; `cassandra` loads 40% of the file system) " + how + ": " +
		strings.Join(parts, "; ") + "."
}

func alignmentNote(e, fifo *experiment) string {
	n, md := e.Run(Normal, false), e.Run(MultiData, false)
	if n == nil || md == nil || n.Aged.WAF < 1.05 || md.Aged.WAF > 1.02 {
		return ""
	}
	s := fmt.Sprintf("Whole-unit cache blocks are not enough by themselves: under Normal the LRU segment cache's WAF is %.2f, "+
		"on its own stream (Multi-Data) %.3f.", n.Aged.WAF, md.Aged.WAF)
	if fifo != nil {
		if fn := fifo.Run(Normal, false); fn != nil && fn.Aged.WAF < 1.02 {
			s += fmt.Sprintf(" FIFO's blocks die whole even under Normal: WAF %.3f.", fn.Aged.WAF)
		}
	}
	return s
}

func imageNote(e *experiment) string {
	n, md := e.Run(Normal, true), e.Run(MultiData, true)
	if n == nil || md == nil {
		return ""
	}
	s := fmt.Sprintf("With TRIM the image store's FTL WAF goes from %.3f (Normal) to %.3f (Multi-Data, WAL / L0 / base "+
		"level / deeper levels on four streams).", n.Aged.WAF, md.Aged.WAF)
	if e.Ideal != nil && n.Aged.Norm >= 0.95 {
		s += fmt.Sprintf(" Its throughput hardly moves (Normal at %s of the drive that never copies).", pct(n.Aged.Norm))
	}
	if nn, mn := e.Run(Normal, false), e.Run(MultiData, false); nn != nil && mn != nil && mn.Aged.WAF >= nn.Aged.WAF {
		s += fmt.Sprintf(" Without TRIM, streams do not help (WAF %.2f Normal, %.2f Multi-Data).", nn.Aged.WAF, mn.Aged.WAF)
	}
	if e.Ideal != nil && e.Ideal.Aged.LogP9999ms > 100*e.Ideal.Aged.LogP999ms {
		s += fmt.Sprintf(" The WAL's 99.99th percentile (%.0f s on the drive that never copies, %.0f s under Normal) is "+
			"over a hundred times its 99.9th (%.1f ms) even on the drive that never copies, so the drive does not set it.",
			e.Ideal.Aged.LogP9999ms/1000, n.Aged.LogP9999ms/1000, e.Ideal.Aged.LogP999ms)
	}
	return s
}

// compactionShare is the share of r's written bytes that compaction wrote.
func compactionShare(r *RunResult) (float64, bool) {
	var comp, all int64
	for name, b := range r.ClassBytes {
		all += b
		if strings.HasPrefix(name, "compaction") {
			comp += b
		}
	}
	if all == 0 {
		return 0, false
	}
	return float64(comp) / float64(all), true
}
