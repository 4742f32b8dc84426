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
		r := results[0]
		scenario := r.Scenario
		if scenario == "" {
			scenario = "link"
		}
		m.P("Scenario `%s` (scripts/peers/run.sh --scenario %s). Budgets (each server): %s. Written by `strata-lab peers` from scripts/peers/run.sh's results.",
			scenario, scenario, r.Budget)
		if r.Workload != "" {
			m.P("Workload: %s.", r.Workload)
		}
	}
	head, rows := table(ms)
	m.Table(head, rows)
	if head, rows := deviceTable(results); len(rows) > 0 {
		m.P("The flash device's throttle as each server's flash file system met it before the server started " +
			"(MB/s through dd; O_DIRECT as Strata and Traffic Server use it, the page cache as nginx and Varnish do, " +
			"its writes synced and written back by the kernel's flusher): the same for every server, whichever way it writes.")
		m.Table(head, rows)
	}
	m.P("Flash writes: \"flash bytes written\" is the server processes' write_bytes (/proc/PID/io); " +
		"the device rows read the loop device under each server's own ext4 flash file system " +
		"(/sys/block/loopN/stat, file system metadata and journal included, synced at each phase's end), " +
		"whose write I/Os give the mean write size as the device saw it.")
	for _, f := range figs {
		m.Img(f.File, f.File)
	}
	return m.String()
}

// deviceTable is the device scenario's throttle check (Result.DeviceCheck),
// a row per server; no rows when no server has one.
func deviceTable(results []Result) (head []string, rows [][]string) {
	head = []string{"server", "MiB each", "O_DIRECT write", "page cache write (synced)", "O_DIRECT read", "page cache read"}
	for _, r := range results {
		d := r.DeviceCheck
		if d == nil || d.MiB == 0 {
			continue
		}
		rows = append(rows, []string{r.Server, cell("%.0f", d.MiB), cell("%.0f", d.DirectWriteMBps),
			cell("%.0f", d.BufferedWriteMBps), cell("%.0f", d.DirectReadMBps), cell("%.0f", d.BufferedReadMBps)})
	}
	return head, rows
}
