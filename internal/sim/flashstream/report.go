package flashstream

import (
	"fmt"
	"strings"

	"github.com/strata-media/strata/internal/report"
)

// Paper figures the report compares with (FlashStream, MM'13).
var paperFig7 = map[string]string{
	"FlashStream(LRU)": "about 52 (2x ZFS)", "FlashStream(LFU-Mean)": "slightly below LRU",
	"FlashStream(LFU-Median)": "slightly below LRU", "ZFS": "26", "Flashcache": "< 1",
}

var paperFill = map[string]string{
	"FlashStream(LRU)": "94", "FlashStream(LFU-Mean)": "94", "FlashStream(LFU-Median)": "94",
	"ZFS": "1200", "Flashcache": "1320",
}

var paperEnergy = map[string][2]string{
	"FlashStream": {"64", "2.91"}, "Traditional A": {"34", "0.57"}, "Traditional B": {"48", "1.50"},
}

// Markdown renders the report; figs are the SVGs it links to.
func (r *Report) Markdown(command string) (string, []report.Figure) {
	var m md
	m.H(1, "FlashStream §5 reproduced with strata sim")
	m.P("Command: `%s`. Scale **%s**: %d titles (%.0f GB), seed %d; %.0f s of wall time on this machine.",
		command, r.Scale, r.Titles, r.LibraryGB, r.Seed, r.Seconds)
	r.setup(&m)
	figs := []report.Figure{}
	figs = append(figs, r.fig7(&m)...)
	figs = append(figs, r.fill(&m)...)
	figs = append(figs, r.blockSize(&m)...)
	figs = append(figs, r.energy(&m)...)
	r.bound(&m)
	figs = append(figs, r.beyond(&m)...)
	r.checks(&m)
	r.notes(&m)
	return m.String(), figs
}

func (r *Report) setup(m *md) {
	m.H(2, "Setup")
	m.P("Everything runs on the tier core the live server uses (`internal/core/tier`), driven by the discrete-event " +
		"loop of `internal/sim/des` over the device models of `internal/storage/model` (parameters and their sources are " +
		"in `internal/storage/model/presets_*.go`). No policy exists twice: ZFS-like is the same core with an ARC RAM " +
		"policy, a FIFO rotor, the L2ARC feed's parameters and no read priority; flashcache-like is the page " +
		"cache (the core's LRU RAM pool) over a set-associative 4 KiB block cache.")
	m.Table([]string{"what", "value", "source"}, [][]string{
		{"workload", "every 1/rate s a title by Zipf-like law, a segment uniformly; deadline 10 s", "§5.1"},
		{"popularity", "theta 0.2, read as s = 1 - theta = 0.8", "DESIGN.md popularity convention"},
		{"library", fmt.Sprintf("%d titles from Table 4's six sources, one bitrate each, VBR sizes, %.0f GB", r.Titles, r.LibraryGB), "§5.1, Table 4"},
		{"disk", "7200 RPM 550 GB model", "§5"},
		{"SSDs", "OCZ Core V2 (FlashStream, ZFS), Intel X25-M G1 (flashcache), 75 GB used (small: 7.5 GB)", "§5, Table 2"},
		{"RAM", "2 GB (small: 200 MB)", "Table 5"},
		{"FlashStream", "16 MiB blocks (the probe's answer on the OCZ model), monitor room 10%, 60% threshold, 1 s epochs", "§3-4"},
		{"trials", "each rate for an hour (small: 10 min) on the warmed system; a rate passes with 0 misses", "§5.2"},
	})
}

func (r *Report) fig7(m *md) []report.Figure {
	m.H(2, "Fig. 7: maximum request rate at 0% segment misses, and SSD hit ratio")
	var rows [][]string
	for _, x := range r.Fig7 {
		a := x.AtMax
		rows = append(rows, []string{x.System, maxRPS(x.MaxRPS), paperFig7[x.System], f(a.SSDHitRatio, 3),
			f(a.RAMHitRatio, 3), f(a.HDDUtil, 2), f(a.SSDUtil, 2), f(a.SSDWriteMBps, 1)})
	}
	m.Table([]string{"system", "max req/s", "paper", "SSD hit ratio", "RAM hit ratio", "HDD util", "SSD util", "SSD writes MB/s"}, rows)
	m.P("Hit ratios are each system's own unit, as the paper measured them: segments (FlashStream), 128 KiB " +
		"records (ZFS), 4 KiB blocks (flashcache); all at the maximum rate. Trials of each search:")
	var trows [][]string
	for _, x := range r.Fig7 {
		var ts []string
		for _, t := range x.Trials {
			ts = append(ts, fmt.Sprintf("%.0f:%s", t.Rate, f(t.MissRatio, 3)))
		}
		trows = append(trows, []string{x.System, strings.Join(ts, " ")})
	}
	m.Table([]string{"system", "rate:miss ratio, in search order"}, trows)
	return r.fig7Plots(m)
}

func maxRPS(v float64) string {
	if v == 0 {
		return "< 1"
	}
	return f(v, 0)
}

func (r *Report) fill(m *md) []report.Figure {
	m.H(2, "§5.2: time to fill the SSD cache")
	var rows [][]string
	for _, c := range r.Fill {
		got := "not within the limit"
		if c.FillMinutes >= 0 {
			got = f(c.FillMinutes, 0)
		}
		rows = append(rows, []string{c.System, got, paperFill[c.System], f(c.Rate, 0)})
	}
	m.Table([]string{"system", "minutes to 99% full", "paper (75 GB)", "at req/s"}, rows)
	m.P("The paper does not give the request rate of its fill; all systems fill here at the same rate. At small " +
		"scale the cache is ten times smaller, so fill times are about ten times shorter.")
	return r.fillPlots(m)
}

func (r *Report) blockSize(m *md) []report.Figure {
	m.H(2, "§5.3: optimal block size against 4 KiB blocks")
	var rows [][]string
	paper := map[int64][3]string{16 << 20: {"70.4%", "34.4%", "0%"}, 4 << 10: {"0.08%", "0.65%", "3%"}}
	for _, b := range r.BlockSize {
		p := paper[b.BlockSize]
		rows = append(rows, []string{blockName(b.BlockSize), f(b.FilledPercent, 2) + "%", p[0], pct(b.Result.SSDHitRatio), p[1],
			f(b.Result.SSDUtil, 2), pct(b.Result.SSDLateRatio), p[2]})
	}
	m.Table([]string{"block", "SSD written", "paper", "SSD hit ratio", "paper", "SSD util", "flash-served requests late", "paper"}, rows)
	m.P("A cold cache for an hour (scaled with the SSD at small scale), free blocks handed out at random, as §5.3 did.")
	return r.blockPlots(m)
}

func blockName(bs int64) string {
	if bs >= 1<<20 {
		return fmt.Sprintf("%d MiB", bs>>20)
	}
	return fmt.Sprintf("%d KiB", bs>>10)
}

func (r *Report) energy(m *md) []report.Figure {
	m.H(2, "Table 5: energy efficiency")
	var rows [][]string
	for _, e := range r.Energy {
		p := paperEnergy[e.System]
		rows = append(rows, []string{e.System, f(e.DRAMGB, 0), f(e.SSDGB, 0), fmt.Sprint(e.HDDs), maxRPS(e.MaxRPS), p[0],
			f(e.Watts, 0), f(e.RequestsPerJoule, 2), p[1], f(e.CapitalDollars, 0)})
	}
	m.Table([]string{"system", "DRAM GB", "SSD GB", "HDDs", "max req/s", "paper", "W", "req/J", "paper", "capital $"}, rows)
	m.P("Watts and dollars are Table 6's (8 W per 2 GB DIMM, 2 W per SSD, 12 W per HDD; $8/GB DRAM, $0.8/GB SSD, " +
		"$90 per HDD), applied to the paper's device counts; requests per joule = max req/s / W.")
	return r.energyPlots(m)
}

func (r *Report) bound(m *md) {
	m.H(2, "Offline bound")
	b := r.Bound
	m.P("On a trace of the same workload (%d measured requests after a warm-up), Belady's rule hits %s of "+
		"requests with RAM + flash capacity, %s with the flash capacity alone. %s",
		b.Requests, pct(b.OPTHitRatio), pct(b.OPTSSDHitRatio), b.Method)
	var rows [][]string
	for _, x := range r.Fig7 {
		got := b.Achieved[x.System]
		rows = append(rows, []string{x.System, pct(got), pct(b.OPTHitRatio - got)})
	}
	m.Table([]string{"system", "RAM + flash hit ratio at max rate", "below Belady by"}, rows)
}

func (r *Report) beyond(m *md) []report.Figure {
	m.H(2, "Beyond the paper")
	base := map[string]float64{}
	for _, x := range r.Fig7 {
		base[x.System] = x.MaxRPS
	}
	var rows [][]string
	for _, x := range r.Beyond {
		ref := "FlashStream(LRU)"
		if strings.HasPrefix(x.System, "ZFS") {
			ref = "ZFS"
		}
		rows = append(rows, []string{x.System, maxRPS(x.MaxRPS), maxRPS(base[ref]), f(x.AtMax.SSDHitRatio, 3), f(x.AtMax.SSDWriteMBps, 1)})
	}
	m.Table([]string{"variant", "max req/s", "as published", "SSD hit ratio", "SSD writes MB/s"}, rows)
	m.P("Read priority holds caching writes in the host queue while flash reads are outstanding. Latency " +
		"admission (`tier.LatencyTarget`) admits a block while flash reads averaged under 20 ms over the last " +
		"epoch and none waits, in place of the static 60%% utilization threshold.")
	return nil
}

// checks states the acceptance criteria against these results.
func (r *Report) checks(m *md) {
	m.H(2, "Acceptance checks")
	get := func(name string) float64 {
		for _, x := range r.Fig7 {
			if x.System == name {
				return x.MaxRPS
			}
		}
		return 0
	}
	fsLRU, zfs, fc := get("FlashStream(LRU)"), get("ZFS"), get("Flashcache")
	var rows [][]string
	rows = append(rows, check("FlashStream(LRU) >= 1.8 x ZFS in max req/s", fsLRU >= 1.8*zfs && zfs > 0,
		fmt.Sprintf("%.0f vs %.0f: %.2fx", fsLRU, zfs, fsLRU/max(zfs, 1))))
	rows = append(rows, check("flashcache far below both (at most a third of each)", fc <= zfs/3 && fc <= fsLRU/3,
		fmt.Sprintf("%.0f req/s: %.0f%% of ZFS, %.0f%% of FlashStream(LRU)", fc, 100*fc/max(zfs, 1), 100*fc/max(fsLRU, 1))))
	if len(r.BlockSize) == 2 {
		big, small := r.BlockSize[0], r.BlockSize[1]
		rows = append(rows, check("4 KiB blocks collapse (SSD written and hit ratio far below)",
			small.FilledPercent < big.FilledPercent/10 && small.Result.SSDHitRatio < big.Result.SSDHitRatio/10,
			fmt.Sprintf("%.2f%% vs %.2f%% written, %s vs %s hits", small.FilledPercent, big.FilledPercent,
				pct(small.Result.SSDHitRatio), pct(big.Result.SSDHitRatio))))
	}
	if len(r.Energy) == 3 {
		e := r.Energy
		rows = append(rows, check("req/J: FlashStream > Traditional B > Traditional A",
			e[0].RequestsPerJoule > e[2].RequestsPerJoule && e[2].RequestsPerJoule > e[1].RequestsPerJoule,
			fmt.Sprintf("%.2f, %.2f, %.2f", e[0].RequestsPerJoule, e[2].RequestsPerJoule, e[1].RequestsPerJoule)))
	}
	m.Table([]string{"criterion", "holds", "numbers"}, rows)
}

func check(what string, ok bool, detail string) []string {
	mark := "yes"
	if !ok {
		mark = "**no**"
	}
	return []string{what, mark, detail}
}

// notes explains where the results differ from the paper and why we
// believe they do. The numbers are this run's.
func (r *Report) notes(m *md) {
	m.H(2, "Where the results differ from the paper, and why")
	get := func(name string) MaxResult {
		for _, x := range r.Fig7 {
			if x.System == name {
				return x
			}
		}
		return MaxResult{}
	}
	fs, zfs, fc := get("FlashStream(LRU)"), get("ZFS"), get("Flashcache")
	if len(r.Energy) == 3 && r.Energy[1].MaxRPS > 0 {
		e := r.Energy
		m.P("**Absolute rates are higher than the paper's, the ratios between configurations are close.** Table 5's "+
			"configurations give %.0f / %.0f / %.0f req/s against the paper's 64 / 34 / 48: FlashStream / Traditional A "+
			"= %.2f (paper 1.88) and Traditional B / Traditional A = %.2f (paper 1.41). The modelled 7200 RPM disk "+
			"serves random whole-segment reads about twice as fast as the paper's did. We did not calibrate the disk to "+
			"the paper's results; its parameters are a data sheet's (internal/storage/model/presets_hdd.go). What the model "+
			"leaves out and the paper's servers paid: file system metadata reads per file (ext4 inodes and extents, "+
			"ZFS indirect blocks), fragmentation, and the HTTP servers' own overheads.",
			e[0].MaxRPS, e[1].MaxRPS, e[2].MaxRPS, e[0].MaxRPS/e[1].MaxRPS, e[2].MaxRPS/e[1].MaxRPS)
	}
	m.P("**FlashStream against ZFS: %.2fx (paper about 2x).** The gap comes from three mechanisms the model "+
		"reproduces from the systems' documentation: ZFS reads a segment as 128 KiB records through FUSE, its first "+
		"records one after another before zfetch reads the rest ahead, so under load a segment costs several disk "+
		"positionings where FlashStream's one whole-segment read costs one; the L2ARC is fed at most 8 MiB per second "+
		"from the ARC's eviction end, so it fills in %.0f min against FlashStream's %.0f (paper: 1200 and 94), and "+
		"holds a colder set (SSD hit ratio %.3f in records against %.3f in segments); its FIFO rotor replaces blocks "+
		"regardless of use. Read priority for ZFS (beyond the paper) changes little here: the L2ARC writes %.1f MB/s, "+
		"too little to delay reads much.",
		fs.MaxRPS/max(zfs.MaxRPS, 1), fillOf(r, "ZFS"), fillOf(r, "FlashStream(LRU)"), zfs.AtMax.SSDHitRatio,
		fs.AtMax.SSDHitRatio, zfs.AtMax.SSDWriteMBps)
	m.P("**flashcache: %.0f req/s here, under 1 in the paper.** The model has flashcache's write-on-read-miss on "+
		"the critical path and the page cache reading files in 128 KiB read-ahead windows through it, which already "+
		"makes it the slowest system. It does not collapse as the paper's did: flashcache fills each 512-block set "+
		"in FIFO order, so the 4 KiB writes of one segment land on consecutive SSD addresses, which the modelled "+
		"page-mapped X25-M absorbs at %.1f MB/s with %.0f%% utilization. The paper's drive, after hours of such "+
		"writes, ran at 3.25 MB/s for 4 KiB writes (Table 2); the model's own aged random 4 KiB rate is of that "+
		"order, but flashcache's writes are not random enough to reach it. We believe the real drive's mapping "+
		"table and garbage collection under a full, long-running cache were worse than the model's.",
		fc.MaxRPS, fc.AtMax.SSDWriteMBps, 100*fc.AtMax.SSDUtil)
	m.P("**Fill times** (FlashStream %.0f min, ZFS %.0f, flashcache %.0f; paper 94, 1200, 1320) keep the paper's "+
		"order. The paper does not say at which request rate it filled; we use %.0f req/s for every system, which "+
		"sets the rate of misses that feed the caches.", fillOf(r, "FlashStream(LRU)"), fillOf(r, "ZFS"),
		fillOf(r, "Flashcache"), r.Fill[0].Rate)
	m.P("**LRU against LFU:** the paper found LRU slightly ahead; here the LFU variants are slightly ahead " +
		"(within a few percent). The counts the LFU policies start from (a segment's accesses while in RAM) are not " +
		"specified in the paper; with Zipf popularity over titles and uniform segments, counts separate hot titles' " +
		"blocks from cold ones a little better than recency does.")
	m.P("**The offline bound** shows the larger opportunity: Belady's rule would serve %s of requests from RAM and "+
		"flash against FlashStream(LRU)'s %s. Most misses are segments requested once in a long while; an admission "+
		"filter that keeps such segments off flash (frequency sketches, as TinyLFU) is the next thing to try.",
		pct(r.Bound.OPTHitRatio), pct(r.Bound.Achieved["FlashStream(LRU)"]))
}

func fillOf(r *Report, name string) float64 {
	for _, c := range r.Fill {
		if c.System == name {
			return c.FillMinutes
		}
	}
	return -1
}
