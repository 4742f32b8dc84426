package framesim

import (
	"fmt"
	"math"
	"strings"

	"github.com/strata-media/strata/internal/lab/plot"
	"github.com/strata-media/strata/internal/lab/report"
	"github.com/strata-media/strata/internal/lab/sim/des"
)

// mdw builds Markdown.
type mdw = report.Markdown

func mbs(v float64) string { return fmt.Sprintf("%.1f", v) }

func pct(v float64) string { return fmt.Sprintf("%+.1f%%", 100*v) }

func share(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

// Markdown renders the report and its figures; command is the command
// line that produced it.
func (r *Report) Markdown(command string) (string, []des.Figure) {
	var m mdw
	m.H(1, "strata-lab sim framegroup: frame grouping vs play order (FG §IV, Figs. 12-14)")
	m.P("Command: `%s` (scale %s, seed %d, %.0f s of wall time). Catalog: %d titles, %.1f GB. "+
		"Throughput is MB/s (10^6 bytes/s) of useful data: frames delivered to players plus frames written by uploaders.",
		command, r.Scale, r.Seed, r.Seconds, r.Titles, r.Catalog)
	r.verdicts(&m)
	r.setup(&m)
	r.arithmetic(&m)
	var figs []des.Figure
	figs = append(figs, r.fig14(&m)...)
	figs = append(figs, r.fig13(&m)...)
	figs = append(figs, r.fig12(&m)...)
	r.sensitivity(&m)
	r.differences(&m)
	return m.String(), figs
}

// find returns the pair of ps matching device, mix and users.
func find(ps []pair, device, mix string, users int) pair {
	for _, p := range ps {
		if p.Device == device && p.Mix == mix && p.Users == users {
			return p
		}
	}
	return pair{}
}

// gainRange is the least and greatest gain over the user counts.
func gainRange(ps []pair, device, mix string) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, u := range userCounts {
		g := find(ps, device, mix, u).Gain
		lo, hi = min(lo, g), max(hi, g)
	}
	return lo, hi
}

func gainText(lo, hi float64) string {
	if math.Abs(hi-lo) < 0.0005 {
		return pct(lo)
	}
	return pct(lo) + " to " + pct(hi)
}

func (r *Report) setup(m *mdw) {
	m.H(2, "Setup")
	m.P("Devices: the `internal/storage/model` presets of FG Table 1. SSD1 = `MtronMSDSATA3025`, SSD2 = `SamsungMCBQE32` " +
		"(4 ch x 4 ways SLC, 100 MB/s read and 80 MB/s write interfaces, per-command overheads fit to FG Fig. 6, log-block FTL " +
		"with 8 log units), HDD = `Barracuda7200dot10`. Each uses 32 GB (FG Table 1); SSD pages are all written before a run. " +
		"The drive holds one command at a time (FG §II.2 sizes requests from one-at-a-time throughput); a 32-command queue is a sensitivity run below.")
	m.P("Layouts: grouped = five streams (I-odd, I-even, P, B-odd, B-even), each written in blocks of S as its buffer fills, " +
		"plus a 6-byte metadata record per block in S-byte metadata blocks (FG §III.1-3); S = 128 KB on SSD1, 256 KB on SSD2 (FG §IV), " +
		"512 KB on the HDD (FG §IV, Fig. 14(a)). Conventional = frames in decode order, written from one buffer of 5S " +
		"(FG §IV: 640 KB and 1,280 KB; 2,560 KB on the HDD by the same rule, which FG does not state), read in aligned S-byte requests " +
		"that skip blocks holding no needed frame and drop the skipped frames inside the blocks they read (FG §IV), with a 4-byte-per-frame index in S-byte blocks after the data.")
	m.P("Video (FG §IV): H.264 at 2 Mbps, 30 fps, GOP of 90 frames IBBPBBP... (1 I, 29 P, 60 B). Frame sizes: I:P and P:B mean size ratios of 2.75 each, " +
		"the middle of x264's typical 2.5-3 (L. Merritt, ffmpeg-devel, Oct. 2007), each frame +-25%% uniform (assumed). " +
		"Title lengths uniform in 5-20 minutes (FG §III.2).")
	m.P("Users (FG §IV): 20, 50 and 80, each with one request outstanding at a time (FG's thread per user). Players read as fast as the drive "+
		"answers at their level, in sessions of five minutes (FG: \"the service time of each media operation is five minutes\"), starting at a random title "+
		"and GOP; at a session's end they stop and what they read ahead is lost. Uploaders write titles back to back. "+
		"Mixes (write : L1 : L2 : L3 : L4 : L5): mix 1 = %s, mix 2 = %s, given to users in those proportions (largest remainder). "+
		"FG prints mix 1 with five numbers for six operations (0.1 : 0.5 : 0.1 : 0.1 : 0.1, summing to 0.9); it is read as write 0.1, L1 0.5 and "+
		"0.1 for each of L2-L5, which sums to 1 and fits FG's reason for mix 2 gaining more (mix 1 has more Play Level 1).", mix1, mix2)
}

func (r *Report) arithmetic(m *mdw) {
	m.H(2, "Layout arithmetic: what each level reads")
	m.P("Every title played start to end at each level: S-byte data blocks read per hour of content and the share of bytes read that the level needs. " +
		"Grouped reads only the level's streams, so all but the padding of each stream's last block is useful; conventional reads every block that holds a needed frame.")
	var rows [][]string
	for _, a := range r.Arithmetic {
		rows = append(rows, []string{a.Device, fmt.Sprint(a.BlockKiB), fmt.Sprintf("L%d", a.Level), share(a.Needed),
			fmt.Sprintf("%.0f", a.GroupedBlocks), fmt.Sprintf("%.0f", a.ConventionalBlocks),
			share(a.GroupedUseful), share(a.ConventionalUseful)})
	}
	m.Table([]string{"device", "S KiB", "level", "needed share of bytes", "grouped blocks/h", "conventional blocks/h", "grouped useful", "conventional useful"}, rows)
}

// lineFig makes one line chart.
func lineFig(file, title, xlabel string, xlog bool, series []plot.Series) des.Figure {
	zero := 0.0
	c := plot.Chart{Title: title, XLabel: xlabel, YLabel: "MB/s", XLog: xlog, YMin: &zero, Width: 720}
	return des.Figure{File: file, SVG: c.Lines(series)}
}

// usersSeries is one layout's total throughput against the user count.
func usersSeries(name string, ps []pair, device, mix string, grouped bool) plot.Series {
	s := plot.Series{Name: name}
	for _, u := range userCounts {
		p := find(ps, device, mix, u)
		v := p.Conventional.Total
		if grouped {
			v = p.Grouped.Total
		}
		s.X, s.Y = append(s.X, float64(u)), append(s.Y, v)
	}
	return s
}

func pairRows(ps []pair) [][]string {
	var rows [][]string
	for _, p := range ps {
		rows = append(rows, []string{p.Device, p.Mix, fmt.Sprint(p.Users), fmt.Sprint(p.BlockKiB),
			mbs(p.Grouped.Total), mbs(p.Conventional.Total), pct(p.Gain),
			mbs(p.Grouped.Write) + " / " + mbs(p.Conventional.Write), mbs(p.Grouped.Disk) + " / " + mbs(p.Conventional.Disk)})
	}
	return rows
}

var pairHead = []string{"device", "mix", "users", "S KiB", "grouped MB/s", "conventional MB/s", "gain", "writes g / c", "drive moved g / c"}

func (r *Report) fig14(m *mdw) []des.Figure {
	m.H(2, "Fig. 14: mixed operations")
	m.Table(pairHead, pairRows(r.Fig14))
	var figs []des.Figure
	for _, d := range devices() {
		var ss []plot.Series
		for _, mix := range []Mix{mix1, mix2} {
			ss = append(ss, usersSeries("grouped, "+mix.Name, r.Fig14, d.Name, mix.Name, true),
				usersSeries("conventional, "+mix.Name, r.Fig14, d.Name, mix.Name, false))
		}
		file := "fig14-" + strings.ToLower(d.Name) + ".svg"
		figs = append(figs, lineFig(file, "Fig. 14: "+d.Name+", mixes 1 and 2", "users", false, ss))
		m.Img(file, "Fig. 14 "+d.Name)
	}
	return figs
}

func (r *Report) fig13(m *mdw) []des.Figure {
	m.H(2, "Fig. 13: one operation at a time")
	m.Table(pairHead, pairRows(r.Fig13))
	var figs []des.Figure
	for _, op := range []Op{opWrite, 1, 3, 5} {
		var ss []plot.Series
		for _, d := range devices() {
			ss = append(ss, usersSeries(d.Name+" grouped", r.Fig13, d.Name, only(op).Name, true),
				usersSeries(d.Name+" conventional", r.Fig13, d.Name, only(op).Name, false))
		}
		file := "fig13-" + strings.ToLower(op.String()) + ".svg"
		figs = append(figs, lineFig(file, "Fig. 13: "+only(op).Name, "users", false, ss))
		m.Img(file, "Fig. 13 "+op.String())
	}
	return figs
}

func (r *Report) fig12(m *mdw) []des.Figure {
	m.H(2, "Fig. 12: block size S")
	m.P("%d users (FG does not say how many). Conventional reads S and writes 5S at each point.", sweepUsers)
	var figs []des.Figure
	var rows [][]string
	for _, d := range devices() {
		var ss []plot.Series
		for _, mix := range []Mix{mix1, mix2} {
			g, c := plot.Series{Name: "grouped, " + mix.Name}, plot.Series{Name: "conventional, " + mix.Name}
			for _, p := range r.Fig12 {
				if p.Device == d.Name && p.Mix == mix.Name {
					x := float64(p.BlockKiB)
					g.X, g.Y = append(g.X, x), append(g.Y, p.Grouped.Total)
					c.X, c.Y = append(c.X, x), append(c.Y, p.Conventional.Total)
				}
			}
			ss = append(ss, g, c)
			best := r.bestBlock(d.Name, mix.Name)
			rows = append(rows, []string{d.Name, mix.Name, fmt.Sprint(best.BlockKiB), mbs(best.Grouped.Total), fmt.Sprint(d.Block >> 10)})
		}
		file := "fig12-" + strings.ToLower(d.Name) + ".svg"
		figs = append(figs, lineFig(file, "Fig. 12: "+d.Name+", throughput against S", "S (KiB)", true, ss))
		m.Img(file, "Fig. 12 "+d.Name)
	}
	m.Table([]string{"device", "mix", "best grouped S KiB", "its MB/s", "paper's S KiB"}, rows)
	return figs
}

// bestBlock is the sweep point where grouped throughput peaks.
func (r *Report) bestBlock(device, mix string) pair {
	var best pair
	for _, p := range r.Fig12 {
		if p.Device == device && p.Mix == mix && p.Grouped.Total > best.Grouped.Total {
			best = p
		}
	}
	return best
}

func (r *Report) sensitivity(m *mdw) {
	m.H(2, "Sensitivity")
	m.P("A drive that queues 32 commands (NCQ): the SSD models then overlap each command's overhead with other transfers.")
	m.Table(pairHead, pairRows(r.QueueDepth))
	m.P("The SSD presets' log-block FTL has 8 log units (`SSDParams.LogBlocks`, an assumed default): more concurrent sequential uploads than that " +
		"force a merge on nearly every write. The same runs with 128 log units:")
	m.Table(pairHead, pairRows(r.LogBlocks))
	m.P("FG gives the conventional write buffer for the SSDs only (5S). The HDD mixes with conventional writes of S = 512 KB instead of 5S:")
	m.Table(pairHead, pairRows(r.HDDWrites))
}
