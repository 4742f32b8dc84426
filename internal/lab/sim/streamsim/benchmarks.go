package streamsim

import (
	"fmt"
	"strings"

	"github.com/strata-media/strata/internal/lab/report"
	"github.com/strata-media/strata/internal/storage/model"
)

// Benchmarks renders the report's section for BENCHMARKS.md: the command,
// the Cassandra mappings against the paper, the caches' WAF and any live
// traces.
func (r *Report) Benchmarks(command string) string {
	var m report.Markdown
	m.H(2, "Multi-streamed SSD: stream mappings on the FTL model (strata-lab sim streams)")
	m.P("`%s` (scale %s, seed %d, %.0f s). Full report with figures: `report.md` in the output directory. "+
		"Model: page-mapped Samsung 840 Pro-like drive, %.1f%% over-provisioning, filled and aged by each workload; "+
		"throughput normalized to the same workload on a drive that never copies.", command, r.Scale, r.Seed, r.Seconds,
		100*r.Experiments[0].Drive.OverProvision)
	if e := r.Experiment("cassandra"); e != nil {
		m.P("**Cassandra-like LSM** (YCSB updates, size-tiered compaction, ext4 model; MS §4):")
		m.Table([]string{"mapping", "TRIM", "WAF", "throughput", "worst window", "log p99.9 ms", "log p99.99 ms", "lifetime h"}, shortRows(e))
		v, _ := reportVerdict(r)
		m.Table([]string{"claim (MS §4.2)", "paper", "here", "reproduced"}, v.rows())
	}
	if e := r.Experiment("imagestore"); e != nil {
		m.P("**Image store LSM** (Badger-like leveled, uploads with retention):")
		m.Table([]string{"mapping", "TRIM", "WAF", "throughput", "worst window", "log p99.9 ms", "log p99.99 ms", "lifetime h"}, shortRows(e))
	}
	r.cacheLines(&m)
	for _, e := range r.Experiments {
		if strings.HasPrefix(e.Name, "trace:") {
			m.P("**Live trace %s** (%s, %.1f GB drive):", strings.TrimPrefix(e.Name, "trace:"), e.Title, e.Drive.CapacityGB)
			m.Table([]string{"mapping", "TRIM", "WAF", "throughput", "worst window", "log p99.9 ms", "log p99.99 ms", "lifetime h"}, shortRows(e))
		}
	}
	return m.String()
}

func shortRows(e *experiment) [][]string {
	var rows [][]string
	for _, r := range e.Runs {
		if r == nil {
			continue
		}
		a := r.Aged
		rows = append(rows, []string{string(r.Mapping), yesNo(r.Trim), f3(a.WAF), f2(a.Norm), f2(a.MinNorm),
			orDash(a.LogP999ms, f1), orDash(a.LogP9999ms, f1), orDash(a.LifetimeHours, f0)})
	}
	return rows
}

// cacheLines is the segment cache against flashcache-like and CacheLib.
func (r *Report) cacheLines(m *report.Markdown) {
	var parts []string
	for _, e := range r.Experiments {
		if !strings.HasPrefix(e.Name, "segcache") && e.Name != "flashcache-4k" {
			continue
		}
		for _, run := range e.Runs {
			parts = append(parts, fmt.Sprintf("%s %s WAF %.3f", e.Name, run.Mapping, run.Aged.WAF))
		}
	}
	if len(parts) == 0 {
		return
	}
	m.P("**Caches at 90%% of the drive**: %s; analytic greedy WAF for 4 KiB random writes at %.1f%% OP %.2f; "+
		"CacheLib's published FDP figure (not measured here) %.2f vs %.2f without FDP.", strings.Join(parts, "; "),
		100*r.Experiments[0].Drive.OverProvision, model.DesnoyersWAF(r.Experiments[0].Drive.OverProvision), cachelibFDP, cachelibNoFDP)
}
