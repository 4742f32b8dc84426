package peers

import (
	"math"

	"github.com/strata-media/strata/internal/lab/plot"
	"github.com/strata-media/strata/internal/lab/report"
)

// Figures draws one bar chart per headline metric, a bar per server.
func Figures(ms []Metrics) []report.Figure {
	type fig struct {
		file, title, ylabel string
		values              func(Metrics) []float64
		series              []string
	}
	figs := []fig{
		{"peers-max-rate.svg", "Highest rate with 0% deadline misses", "requests/s",
			func(m Metrics) []float64 { return []float64{m.MaxRPS} }, []string{"max rate"}},
		{"peers-hit-ratio.svg", "Hit ratios (run at 80% of each server's max)", "ratio",
			func(m Metrics) []float64 { return []float64{m.HitRatio, m.ByteHitRatio, m.ReleaseHitRatio} },
			[]string{"hit ratio", "byte hit ratio", "hit ratio, shifting popularity"}},
		{"peers-flash-writes.svg", "Bytes written to flash per byte served", "bytes/byte",
			func(m Metrics) []float64 { return []float64{m.FlashPerServed, m.DevicePerServed} },
			[]string{"written/served (process)", "written/served (device)"}},
		{"peers-write-size.svg", "Mean write size reaching the flash device", "KiB",
			func(m Metrics) []float64 { return []float64{m.MeanWriteKiB} }, []string{"mean write"}},
		{"peers-latency.svg", "Latency at 80% of each server's max", "ms",
			func(m Metrics) []float64 { return []float64{m.P50Ms, m.P99Ms} }, []string{"p50", "p99"}},
		{"peers-cpu.svg", "CPU time per request", "µs",
			func(m Metrics) []float64 { return []float64{m.CPUUsPerReq} }, []string{"CPU/request"}},
	}
	var out []report.Figure
	for _, f := range figs {
		var bars []plot.Bar
		drawn := false
		for _, m := range ms {
			v := f.values(m)
			for _, x := range v {
				drawn = drawn || !math.IsNaN(x)
			}
			bars = append(bars, plot.Bar{Label: m.Server, Values: v})
		}
		if !drawn {
			continue
		}
		svg := plot.Chart{Title: f.title, YLabel: f.ylabel, YMin: new(0.0)}.Bars(bars, f.series)
		out = append(out, report.Figure{File: f.file, SVG: svg})
	}
	return out
}

// Markdown is the report: the budgets, the table and the figures.
func Markdown(results []Result, ms []Metrics, figs []report.Figure) string {
	var m report.Markdown
	m.H(1, "Strata side by side with nginx, Varnish and Apache Traffic Server")
	if len(results) > 0 {
		m.P("Budgets (each server): %s. Written by `strata-lab peers` from scripts/peers/run.sh's results.", results[0].Budget)
	}
	head, rows := table(ms)
	m.Table(head, rows)
	m.P("Flash writes: \"flash bytes written\" is the server processes' write_bytes (/proc/PID/io); " +
		"the device rows read the loop device under each server's own ext4 flash file system " +
		"(/sys/block/loopN/stat, file system metadata and journal included, synced at each phase's end), " +
		"whose write I/Os give the mean write size as the device saw it.")
	for _, f := range figs {
		m.Img(f.File, f.File)
	}
	return m.String()
}
