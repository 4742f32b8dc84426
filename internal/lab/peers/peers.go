// Package peers reads the results of scripts/peers/run.sh (Strata's edge
// side by side with nginx, Varnish and Apache Traffic Server in front of
// the same origin) and turns them into a table of metrics with
// ratios against the best peer, SVG figures, and the checks of the quick
// CI run.
package peers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// order is the order servers are listed in; Strata is compared with the
// others (the peers).
var order = []string{"strata", "nginx", "varnish", "trafficserver"}

// Run is the part of a strata bench report (loadgen.Report) used here.
type Run struct {
	RateRPS   float64 `json:"rate_rps"`
	Requests  int     `json:"requests"`
	Completed int     `json:"completed"`
	Errors    int     `json:"errors"`
	Misses    int     `json:"misses"`
	MissRatio float64 `json:"miss_ratio"`
	Bytes     int64   `json:"bytes"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
}

// Max is the part of a strata bench --find-max result used here.
type Max struct {
	MaxRPS    float64 `json:"max_rps"`
	FailRPS   float64 `json:"fail_rps"`
	Converged bool    `json:"converged"`
	Trials    []struct {
		RateRPS float64 `json:"rate_rps"`
		Clean   bool    `json:"clean"`
		Confirm bool    `json:"confirm"`
	} `json:"trials"`
}

// origin is the origin's counters (wanorigin.Stats).
type origin struct {
	Requests       int64 `json:"requests"`
	Segments       int64 `json:"segments"`
	SegmentBytes   int64 `json:"segment_bytes"`
	SegmentFetches int64 `json:"segment_fetches"`
	LibraryBytes   int64 `json:"library_bytes"`
}

// device is the flash device's write counters (/sys/block/loopN/stat:
// write I/Os completed, 512-byte sectors written) of the loop device
// holding the server's flash file system.
type device struct {
	WriteIOs     int64 `json:"write_ios"`
	WriteSectors int64 `json:"write_sectors"`
}

// snapshot is what run.sh reads around a run.
type snapshot struct {
	Origin          origin `json:"origin"`
	CPUNs           int64  `json:"cpu_ns"`
	WriteBytes      int64  `json:"write_bytes"`
	BlkioWriteBytes int64  `json:"blkio_write_bytes"`
	BlkioWriteOps   int64  `json:"blkio_write_ops"`
	MemMaxBytes     int64  `json:"mem_max_bytes"`
	// FlashDevice is nil when the flash file had no loop device of its
	// own (write sizes not measured).
	FlashDevice *device `json:"flash_device"`
}

// DeviceCheck is run.sh's measure of the device scenario's throttle
// before a server starts: the MB/s of MiB MiB written and read through
// the server's flash file system each way a server may use it (O_DIRECT,
// or the page cache, written back by the kernel).
type DeviceCheck struct {
	MiB               float64 `json:"mib"`
	Throttle          string  `json:"throttle"`
	DirectWriteMBps   float64 `json:"direct_write_mbps"`
	BufferedWriteMBps float64 `json:"buffered_write_mbps"`
	DirectReadMBps    float64 `json:"direct_read_mbps"`
	BufferedReadMBps  float64 `json:"buffered_read_mbps"`
}

// Result is one server's results (run.sh's OUT/<server>.json).
type Result struct {
	Server string `json:"server"`
	Quick  bool   `json:"quick"`
	// Scenario is run.sh's --scenario ("" before scenarios: link).
	Scenario string `json:"scenario"`
	Budget   string `json:"budget"`
	// Workload is the library, the origin and the device's throttle.
	Workload    string       `json:"workload"`
	DeviceCheck *DeviceCheck `json:"device_check"`
	Warm        Run          `json:"warm"`
	Max         Max          `json:"max"`
	At80        Run          `json:"at80"`
	Release     Run          `json:"release"`
	Before      snapshot     `json:"before"`
	After       snapshot     `json:"after"`
	End         snapshot     `json:"end"`
}

// Load reads every known server's result in dir, in Order.
func Load(dir string) ([]Result, error) {
	var out []Result
	for _, s := range order {
		b, err := os.ReadFile(filepath.Join(dir, s+".json"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var r Result
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("peers: %s.json: %w", s, err)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("peers: no results (%s.json) in %s", strings.Join(order, ".json, "), dir)
	}
	return out, nil
}

// Metrics are one server's figures of merit, over the measured run at 80%
// of its own maximum (the steady state after the search).
type Metrics struct {
	Server string
	// MaxRPS is the highest rate with 0% deadline misses.
	MaxRPS float64
	// HitRatio is 1 - objects fetched from the origin / requests;
	// ByteHitRatio 1 - bytes fetched / bytes served.
	HitRatio, ByteHitRatio float64
	// OriginMB is the segment bytes fetched from the origin, in MB.
	OriginMB float64
	// FlashPerServed is the bytes written to storage per byte served
	// (/proc/PID/io write_bytes of the server's processes).
	FlashPerServed float64
	// DevicePerServed is the bytes that reached the flash device per byte
	// served, and MeanWriteKiB the mean size of its write I/Os, file
	// system metadata and journal included, after the block layer's
	// merging (the loop device's stat; cgroup v1 blkio does not see
	// buffered writeback). NaN: not measured.
	DevicePerServed, MeanWriteKiB float64
	// P50Ms, P99Ms: latency of the run at 80% of MaxRPS.
	P50Ms, P99Ms float64
	// CPUUsPerReq is the server's CPU time per request, in microseconds.
	CPUUsPerReq float64
	// PeakMiB is the memory cgroup's peak usage over the whole run
	// (processes and page cache), in MiB.
	PeakMiB float64
	// ReleaseHitRatio and ReleaseMissRatio: the run with shifting
	// popularity (NaN when not run).
	ReleaseHitRatio, ReleaseMissRatio float64
}

// Compute derives the metrics of r.
func Compute(r Result) Metrics {
	m := Metrics{Server: r.Server, MaxRPS: r.Max.MaxRPS, P50Ms: r.At80.P50Ms, P99Ms: r.At80.P99Ms}
	if r.Quick {
		m.MaxRPS = math.NaN()
	}
	d := diff(r.Before, r.After)
	m.HitRatio = 1 - ratio(float64(d.Origin.SegmentFetches), float64(r.At80.Requests))
	m.ByteHitRatio = 1 - ratio(float64(d.Origin.SegmentBytes), float64(r.At80.Bytes))
	m.OriginMB = float64(d.Origin.SegmentBytes) / 1e6
	m.FlashPerServed = ratio(float64(d.WriteBytes), float64(r.At80.Bytes))
	m.CPUUsPerReq = ratio(float64(d.CPUNs)/1e3, float64(r.At80.Requests))
	m.DevicePerServed, m.MeanWriteKiB = math.NaN(), math.NaN()
	if a, b := r.Before.FlashDevice, r.After.FlashDevice; a != nil && b != nil {
		bytes := float64(b.WriteSectors-a.WriteSectors) * 512
		m.DevicePerServed = ratio(bytes, float64(r.At80.Bytes))
		m.MeanWriteKiB = ratio(bytes/1024, float64(b.WriteIOs-a.WriteIOs))
	}
	m.PeakMiB = float64(max(r.End.MemMaxBytes, r.After.MemMaxBytes)) / (1 << 20)
	m.ReleaseHitRatio, m.ReleaseMissRatio = math.NaN(), math.NaN()
	if r.Release.Requests > 0 {
		e := diff(r.After, r.End)
		m.ReleaseHitRatio = 1 - ratio(float64(e.Origin.SegmentFetches), float64(r.Release.Requests))
		m.ReleaseMissRatio = r.Release.MissRatio
	}
	return m
}

func diff(a, b snapshot) snapshot {
	return snapshot{
		Origin: origin{
			Requests: b.Origin.Requests - a.Origin.Requests, Segments: b.Origin.Segments - a.Origin.Segments,
			SegmentBytes: b.Origin.SegmentBytes - a.Origin.SegmentBytes, SegmentFetches: b.Origin.SegmentFetches - a.Origin.SegmentFetches,
		},
		CPUNs: b.CPUNs - a.CPUNs, WriteBytes: b.WriteBytes - a.WriteBytes,
		BlkioWriteBytes: b.BlkioWriteBytes - a.BlkioWriteBytes, BlkioWriteOps: b.BlkioWriteOps - a.BlkioWriteOps,
	}
}

// ratio is a/b, NaN when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// Check is the quick run's check: every server answered every request of
// its measured run completely, and answered some of them from its store
// (the measured run replays the warm-up's requests).
func Check(results []Result) error {
	var errs []error
	for _, r := range results {
		d := diff(r.Before, r.After)
		switch {
		case r.At80.Requests == 0:
			errs = append(errs, fmt.Errorf("%s: no requests measured", r.Server))
		case r.At80.Errors > 0 || r.At80.Completed != r.At80.Requests:
			errs = append(errs, fmt.Errorf("%s: %d of %d requests completed, %d errors", r.Server, r.At80.Completed, r.At80.Requests, r.At80.Errors))
		case d.Origin.SegmentFetches >= int64(r.At80.Requests):
			errs = append(errs, fmt.Errorf("%s: the origin served %d segments for %d requests replaying the warm-up: nothing was cached", r.Server, d.Origin.SegmentFetches, r.At80.Requests))
		}
	}
	return errors.Join(errs...)
}

// metricDef is one column of the table: its name, how to read and format
// it, whether higher is better, and what a NaN reads as ("-" if unset).
type metricDef struct {
	name   string
	get    func(Metrics) float64
	format string
	higher bool
	nan    string
}

// metricDefs: the figures of merit of every scenario first (the rate,
// the CPU time per request, the latency at 80% of each server's own
// maximum), then the caching ones.
var metricDefs = []metricDef{
	{"max req/s at 0% misses", func(m Metrics) float64 { return m.MaxRPS }, "%.1f", true, ""},
	{"CPU µs / request", func(m Metrics) float64 { return m.CPUUsPerReq }, "%.0f", false, ""},
	{"p99 ms at 80%", func(m Metrics) float64 { return m.P99Ms }, "%.1f", false, ""},
	{"p50 ms at 80%", func(m Metrics) float64 { return m.P50Ms }, "%.1f", false, ""},
	{"hit ratio", func(m Metrics) float64 { return m.HitRatio }, "%.3f", true, ""},
	{"byte hit ratio", func(m Metrics) float64 { return m.ByteHitRatio }, "%.3f", true, ""},
	{"origin MB (80% run)", func(m Metrics) float64 { return m.OriginMB }, "%.0f", false, ""},
	{"flash bytes written / byte served", func(m Metrics) float64 { return m.FlashPerServed }, "%.3f", false, ""},
	{"flash device bytes written / byte served", func(m Metrics) float64 { return m.DevicePerServed }, "%.3f", false, notMeasured},
	{"mean flash device write KiB", func(m Metrics) float64 { return m.MeanWriteKiB }, "%.0f", true, notMeasured},
	{"peak memory MiB (cgroup)", func(m Metrics) float64 { return m.PeakMiB }, "%.0f", false, ""},
	{"hit ratio, shifting popularity", func(m Metrics) float64 { return m.ReleaseHitRatio }, "%.3f", true, ""},
	{"miss ratio, shifting popularity", func(m Metrics) float64 { return m.ReleaseMissRatio }, "%.4f", false, ""},
}

// notMeasured is a metric's cell where run.sh could not measure it.
const notMeasured = "not measured"

// bestPeer is the best value of a metric among the servers other than
// strata, NaN when none has one.
func bestPeer(ms []Metrics, d metricDef) (float64, string) {
	best, who := math.NaN(), ""
	for _, m := range ms {
		v := d.get(m)
		if m.Server == "strata" || math.IsNaN(v) {
			continue
		}
		if math.IsNaN(best) || (d.higher && v > best) || (!d.higher && v < best) {
			best, who = v, m.Server
		}
	}
	return best, who
}

// table is the metrics as rows (one per metric), a column per server,
// then the best peer and Strata's ratio to it.
func table(ms []Metrics) (head []string, rows [][]string) {
	head = []string{"metric"}
	for _, m := range ms {
		head = append(head, m.Server)
	}
	head = append(head, "best peer", "strata / best peer")
	var strata *Metrics
	if i := slices.IndexFunc(ms, func(m Metrics) bool { return m.Server == "strata" }); i >= 0 {
		strata = &ms[i]
	}
	for _, d := range metricDefs {
		row := []string{d.name}
		for _, m := range ms {
			if v := d.get(m); math.IsNaN(v) && d.nan != "" {
				row = append(row, d.nan)
			} else {
				row = append(row, cell(d.format, v))
			}
		}
		best, who := bestPeer(ms, d)
		row = append(row, who)
		if strata != nil && best != 0 {
			row = append(row, cell("%.2fx", d.get(*strata)/best))
		} else {
			row = append(row, "-")
		}
		rows = append(rows, row)
	}
	return head, rows
}

func cell(format string, v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf(format, v)
}
