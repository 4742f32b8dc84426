package vodsim

import (
	"fmt"
	"math"
	"time"

	"github.com/strata-media/strata/internal/lab/plot"
)

func (r *Report) cost(m *md, fs *figs) {
	m.H(2, "§6.4: cost-effectiveness (Tables 3 and 4)")
	m.P("Table 3's load: 1 request/s of 60-minute titles, a peak of 3600 concurrent streams, 0%% rejection. Table 4's "+
		"devices: %s, %s, %s. Two ways to pick the cheapest mix of each configuration:",
		partText(dramPart), partText(hddPart), partText(ssdPart))
	m.P("*The paper's formula*: each device type serves S = R x N / B streams (flash no more than the expected " +
		"demand for the titles it holds); DRAM serves the peak number of streams interval caching kept in it during " +
		"a run (§6.4); a mix qualifies when the sum reaches 3600, and it needs at least the disks that hold the " +
		"library. *Strict*: the mix's own run at 1 request/s (Algorithm 1 or 2 over its bandwidths) rejects nothing.")
	head := []string{"configuration", "mix", "cost", "formula streams", "rejected in its run", "mean streams", "3600 / $", "mean streams / $", "paper streams / $"}
	m.H(3, "By the paper's formula")
	m.Table(head, mixRows(r.Cost.Formula))
	m.H(3, "Strict: no rejection in the run")
	m.Table(head, mixRows(r.Cost.Strict))
	m.P("The paper's streams per dollar are not 3600 / cost: 13 disks cost $2340 and 3600 / 2340 = 1.54, not 1.46. " +
		"They match the mean number of streams playing over the 10-hour run, which starts empty and ramps up for an " +
		"hour (about 3600 x 9.5 / 10 = 3420; 3420 / 2340 = 1.46, 3420 / 2206 = 1.55, 3420 / 960 = 3.56), so both are given.")
	var bars []plot.Bar
	for _, x := range r.Cost.Formula {
		bars = append(bars, plot.Bar{Label: x.Config, Values: []float64{x.MeanPerDollar, x.PerDollar, paperPerDollar[x.Config]}})
	}
	ch := plot.Chart{Title: "Fig. 12: streams per dollar (formula mixes)", YLabel: "streams / $", YMin: zero(), Width: 760}
	fs.add(m, "fig12.svg", "streams per dollar", ch.Bars(bars, []string{"mean streams / $", "3600 / $", "paper"}))
	r.costCandidates(m)
}

func partText(p part) string {
	bw := "unlimited"
	if p.MBps > 0 {
		bw = fmt.Sprintf("%.0f MB/s", p.MBps)
	}
	return fmt.Sprintf("%s %.0f GB %s $%.0f", p.Name, p.GB, bw, p.Dollars)
}

func mixRows(ms []Mix) [][]string {
	var rows [][]string
	for _, x := range ms {
		rows = append(rows, []string{x.Config, mixName(x), fmt.Sprintf("$%.0f", x.Dollars), fmt.Sprint(x.FormulaStream),
			fmt.Sprint(x.Result.Rejected), f(x.Result.Streams, 0), f(x.PerDollar, 2), f(x.MeanPerDollar, 2), f(paperPerDollar[x.Config], 2)})
	}
	return rows
}

func (r *Report) costCandidates(m *md) {
	m.P("Every candidate's strict mix (the fewest disks with no rejection for each number of DRAM modules or SSDs), " +
		"and interval caching's streams in DRAM at 1 request/s with no disk limit:")
	var rows [][]string
	for _, x := range r.Cost.Candidates {
		dram := "–"
		if x.DRAM > 0 && x.DRAM < len(r.Cost.DRAMPeak) {
			dram = fmt.Sprintf("peak %d, mean %s", r.Cost.DRAMPeak[x.DRAM], f(r.Cost.DRAMMean[x.DRAM], 0))
		}
		rows = append(rows, []string{x.Config, mixName(x), fmt.Sprintf("$%.0f", x.Dollars), dram, f(x.Result.HitRatio, 3), f(x.MeanPerDollar, 2)})
	}
	m.Table([]string{"configuration", "strict mix", "cost", "DRAM streams", "cache hit ratio", "mean streams / $"}, rows)
}

func (r *Report) lifetime(m *md) {
	l := r.Lifetime
	m.H(2, "§5: flash lifetime under each policy")
	m.P("T = C x 1024 x N / (W x 3600) hours for C GB of flash with N = %d erase cycles (MLC) written at W MB/s, "+
		"with perfect wear leveling (§5; the paper's example, 128 GB at 100 MB/s, gives 3641 hours, a unit test). "+
		"W is each policy's mean flash write rate at %g requests/s over the 100 MB/s disk. Interval caching writes "+
		"every block a preceding stream reads into the buffer, continuously; LFU writes a title once when it "+
		"copies it.", l.Cycles, l.Rate)
	var rows [][]string
	for _, x := range l.Rows {
		rows = append(rows, []string{x.Policy, f(x.FlashGB, 2), f(x.WriteMBps, 2), f(x.ReadMBps, 1),
			lifeText(x.Hours), f(x.WAF, 2), lifeText(x.HoursWAF)})
	}
	m.Table([]string{"policy", "flash GB", "writes MB/s", "cache reads MB/s", "lifetime (formula)", "WAF (low-end model)", "lifetime with WAF"}, rows)
	m.P("Write amplification measured on the FTL models (drives scaled to %.0f GB, filled, then written twice over "+
		"with each pattern):", gbOf(r.wafCapacity()))
	rows = nil
	for _, w := range l.WAF {
		rows = append(rows, []string{w.Device, w.Pattern, fmt.Sprintf("%.0f MB", float64(w.Extent)/float64(mb)), f(w.WAF, 2)})
	}
	m.Table([]string{"model", "pattern", "extent", "WAF"}, rows)
	m.P("Interval caching on flash would need the write bandwidth in the table on top of its reads, and would wear the " +
		"drive out in months by the paper's formula alone; its 1 MB writes scattered over the drive multiply that by " +
		"the WAF above on a coarse-mapped drive. LFU's whole-file copies are sequential and unit-aligned, so their " +
		"WAF stays near 1, and static staging writes nothing after the first fill.")
}

func (r *Report) wafCapacity() int64 {
	if sc, ok := scales[r.Scale]; ok {
		return sc.WAFCapacity
	}
	return 0
}

// maxHours is the largest Duration in hours: hours' cap.
var maxHours = time.Duration(math.MaxInt64).Hours()

// lifeText writes hours with days or years.
func lifeText(h float64) string {
	switch {
	case h >= maxHours:
		return "over 290 years"
	case h >= 2*8760:
		return fmt.Sprintf("%.0f h (%.0f years)", h, h/8760)
	case h >= 48:
		return fmt.Sprintf("%.0f h (%.0f days)", h, h/24)
	}
	return fmt.Sprintf("%.1f h", h)
}
