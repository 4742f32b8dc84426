package streamsim

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/strata-media/strata/internal/storage/model"
)

// A Scenario is a workload on a drive: how to build its threads, how long
// to run them and when the drive counts as aged.
type Scenario struct {
	Name string
	// Drive is the SSD model's parameters.
	Drive model.SSDParams
	// Duration bounds the measured phase in virtual time; when zero the
	// run ends after Volume drive capacities of host writes.
	Duration time.Duration
	Volume   float64
	// AgedAt is the share of the run (time or volume) after which the
	// drive counts as aged: the summary covers the rest.
	AgedAt float64
	// Window is the width of a throughput window.
	Window time.Duration
	// WorkUnit names the throughput measure, e.g. "updates/s"; WorkScale
	// divides the ops' Work per second into it (1e6 for MB/s of bytes).
	WorkUnit  string
	WorkScale float64
	// Build sets the workload up on ssd.
	Build func(ssd *model.SSD, trim bool) (*instance, error)
}

// An instance is a workload set up on a drive.
type instance struct {
	// Load runs first, unmeasured (the data set of a database, say).
	Load []threadSpec
	// Run is the measured traffic.
	Run []threadSpec
	// Err reports a failure of the workload itself (a full file system).
	Err func() error
	// Notes returns workload figures for the report, e.g. the share of
	// bytes each class wrote.
	Notes func() map[string]float64
}

// RunResult is what one replay measured.
type RunResult struct {
	Scenario string      `json:"scenario"`
	Mapping  MappingName `json:"mapping"`
	Trim     bool        `json:"trim"`
	// Ideal marks the reference run on a drive with enough spare flash
	// never to copy: a fresh drive's throughput at every point.
	Ideal   bool    `json:"ideal,omitempty"`
	Windows []point `json:"windows"`
	Aged    summary `json:"aged"`
	// AgedAfterMin is when the drive began to count as aged.
	AgedAfterMin float64 `json:"aged_after_min"`
	// Streams are the host pages and GC copies of each stream over the
	// aged part.
	Streams []model.StreamStats `json:"streams"`
	// ClassBytes are the host bytes of each class over the whole run.
	ClassBytes map[string]int64   `json:"class_bytes"`
	Notes      map[string]float64 `json:"notes,omitempty"`
	// CDF is the aged write-latency distribution (ms, fraction).
	CDF [2][]float64 `json:"-"`
}

// point is one throughput window.
type point struct {
	Minutes    float64 `json:"minutes"` // end of the window since the run began
	Throughput float64 `json:"throughput"`
	Norm       float64 `json:"norm"` // throughput / fresh throughput
	GCCopies   int64   `json:"gc_copies"`
	WAF        float64 `json:"waf"`
}

// summary is the aged part of a run.
type summary struct {
	Seconds    float64 `json:"seconds"`
	HostPages  int64   `json:"host_pages"`
	GCCopies   int64   `json:"gc_copies"`
	Erases     int64   `json:"erases"`
	WAF        float64 `json:"waf"`
	EraseWAF   float64 `json:"erase_waf"` // erased pages / host pages
	Throughput float64 `json:"throughput"`
	Norm       float64 `json:"norm"` // mean aged throughput / fresh
	// MinNorm is the worst aged throughput over WorstSpan windows in a
	// row, over the fresh.
	MinNorm  float64 `json:"min_norm"`
	P50ms    float64 `json:"p50_ms"`
	LogP50ms float64 `json:"log_p50_ms"`
	P999ms   float64 `json:"p999_ms"`
	P9999ms  float64 `json:"p9999_ms"`
	// LogP999ms and LogP9999ms are the latencies of log writes alone
	// (Cassandra's commit log, which updates wait on).
	LogP999ms  float64 `json:"log_p999_ms"`
	LogP9999ms float64 `json:"log_p9999_ms"`
	// HostMBps is the host write rate; LifetimeHours applies the VoD
	// paper's T = C x 1024 x N / (W x 3600) with W the flash write rate
	// this run's erases imply at the reference host rate; HostTBW is the
	// host writes the flash takes before wearing out, C x N / EraseWAF.
	HostMBps      float64 `json:"host_mbps"`
	LifetimeHours float64 `json:"lifetime_hours"`
	HostTBW       float64 `json:"host_tbw"`
}

// endurance is the program/erase cycles the projected lifetime assumes:
// 2x-nm MLC such as the 840 Pro's (and strata serve's default).
const endurance = 3000

// idealOverProvision is the spare flash of the reference drive whose
// throughput stands for a fresh drive's: enough to take all the run's
// writes (at the drive's fresh program rate, or the run's volume) without
// reusing a block, so it never copies a page.
func (sc *Scenario) idealOverProvision() float64 {
	volume := sc.Volume
	if sc.Duration > 0 {
		volume = sc.Drive.ProgramRate() * sc.Duration.Seconds() / float64(sc.Drive.Capacity)
	}
	return volume + 2 // the fill, and a margin
}

// replay runs sc under mapping, with or without TRIM, on a preconditioned
// drive (Prepare). An ideal replay runs on a drive with enough spare
// flash never to collect garbage instead.
func replay(sc *Scenario, mapping MappingName, trim, ideal bool) (*RunResult, error) {
	p := sc.Drive
	if ideal {
		p.OverProvision += sc.idealOverProvision()
	}
	ssd, err := model.NewSSD(p)
	if err != nil {
		return nil, fmt.Errorf("streamsim: %s: %w", sc.Name, err)
	}
	t0 := prepare(ssd, trim)
	inst, err := sc.Build(ssd, trim)
	if err != nil {
		return nil, fmt.Errorf("streamsim: %s: %w", sc.Name, err)
	}
	eng := newEngine(ssd, newMapping(mapping), trim)
	eng.loop.RunUntil(t0) // the clock starts where preparing the drive left it
	if err := runPhases(sc, eng, inst); err != nil {
		return nil, fmt.Errorf("streamsim: %s %s: %w", sc.Name, mapping, err)
	}
	res := collect(sc, eng, inst)
	res.Mapping, res.Trim, res.Ideal = mapping, trim, ideal
	if d, ok := eng.mapping.(*detector); ok {
		res.Notes["sequential_share"] = d.SequentialShare()
	}
	return res, nil
}

// runPhases runs the load, then the measured traffic under a meter.
func runPhases(sc *Scenario, eng *engine, inst *instance) error {
	if len(inst.Load) > 0 {
		if err := eng.Run(inst.Load, math.MaxInt64, nil); err != nil {
			return err
		}
	}
	if err := inst.Err(); err != nil {
		return err
	}
	ssd := eng.SSD()
	ssd.ResetStats()
	start := eng.Now()
	m := newMeter(start, sc.Window, ssd)
	eng.SetMeter(m)
	eng.classes = make(map[string]int64)
	until, stop := limits(sc, eng, m)
	if err := eng.Run(inst.Run, until, stop); err != nil {
		return err
	}
	m.Finish(ssd)
	if !m.Aged() {
		m.StartAged(m.End(eng.Now()), ssd)
	}
	if err := inst.Err(); err != nil {
		return err
	}
	if m.Work == 0 {
		// Timer threads (a journal's periodic sync) keep the clock going
		// when the workload itself is stuck, so the engine's deadlock
		// check cannot see it.
		return fmt.Errorf("%w: no work completed in the measured phase", errDeadlock)
	}
	return nil
}

// limits returns when the measured phase ends and the stop test that also
// marks the drive aged.
func limits(sc *Scenario, eng *engine, m *Meter) (time.Duration, func() bool) {
	start := eng.Now()
	capacity := float64(eng.SSD().Size())
	if sc.Duration > 0 {
		agedAt := start + time.Duration(sc.AgedAt*float64(sc.Duration))
		return start + sc.Duration, func() bool {
			if !m.Aged() && eng.Now() >= agedAt {
				m.StartAged(eng.Now(), eng.SSD())
			}
			return false
		}
	}
	return math.MaxInt64, func() bool {
		host := float64(m.HostBytes)
		if !m.Aged() && host >= sc.AgedAt*sc.Volume*capacity {
			m.StartAged(eng.Now(), eng.SSD())
		}
		return host >= sc.Volume*capacity
	}
}

// collect turns the meter's measurements into a result.
func collect(sc *Scenario, eng *engine, inst *instance) *RunResult {
	m, ssd := eng.meter, eng.SSD()
	res := &RunResult{Scenario: sc.Name, ClassBytes: eng.classes, Notes: map[string]float64{}}
	if inst.Notes != nil {
		res.Notes = inst.Notes()
	}
	scale := cmp.Or(sc.WorkScale, 1)
	for _, w := range m.Windows {
		res.Windows = append(res.Windows, point{
			Minutes:    (w.End - m.Start).Minutes(),
			Throughput: float64(w.Work) / sc.Window.Seconds() / scale,
			GCCopies:   w.Stats.GCCopies,
			WAF:        w.Stats.WAF(),
		})
	}
	res.AgedAfterMin = (m.AgedAt - m.Start).Minutes()
	st, host, work := m.AgedTotals(ssd)
	res.Aged = summarize(st, host, work, (m.End(eng.Now()) - m.AgedAt).Seconds(), ssd.Params())
	res.Aged.Throughput /= scale
	res.Aged.P50ms, res.Aged.LogP50ms = ms(m.All.Quantile(0.5)), ms(m.Latency[kindLog].Quantile(0.5))
	res.Aged.P999ms, res.Aged.P9999ms = ms(m.All.Quantile(0.999)), ms(m.All.Quantile(0.9999))
	lg := &m.Latency[kindLog]
	res.Aged.LogP999ms, res.Aged.LogP9999ms = ms(lg.Quantile(0.999)), ms(lg.Quantile(0.9999))
	res.Streams = st.Streams
	lat, frac := m.All.CDF()
	for i := range lat {
		lat[i] /= 1e6
	}
	res.CDF = [2][]float64{lat, frac}
	return res
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// summarize computes the aged summary's counts and rates.
func summarize(st model.Stats, host, work int64, secs float64, p model.SSDParams) summary {
	s := summary{Seconds: secs, HostPages: st.HostWrites, GCCopies: st.GCCopies, Erases: st.Erases, WAF: st.WAF()}
	if st.HostWrites > 0 {
		s.EraseWAF = float64(st.Erases*int64(p.PagesPerBlock)) / float64(st.HostWrites)
	}
	if secs > 0 {
		s.Throughput = float64(work) / secs
		s.HostMBps = float64(host) / secs / 1e6
	}
	if s.EraseWAF > 0 {
		s.HostTBW = float64(p.Capacity) * endurance / s.EraseWAF / 1e12
	}
	return s
}

// normalize sets the windows' and the summary's throughput relative to
// fresh, and the worst aged window.
func (r *RunResult) normalize(fresh float64) {
	if fresh <= 0 {
		return
	}
	r.Aged.Norm = r.Aged.Throughput / fresh
	for i := range r.Windows {
		r.Windows[i].Norm = r.Windows[i].Throughput / fresh
	}
	r.Aged.MinNorm = r.worst()
}

// worstSpan is how many windows in a row the worst throughput averages
// over (2 minutes of 30 s windows): single windows swing with the
// workload's own phases, a large compaction say, on any drive.
const worstSpan = 4

// worst is the lowest mean normalized throughput of WorstSpan full aged
// windows in a row (the aged mean when there are fewer).
func (r *RunResult) worst() float64 {
	var aged []float64
	if len(r.Windows) == 0 {
		return r.Aged.Norm
	}
	width := r.Windows[0].Minutes // the first window ends one width in
	for i, w := range r.Windows {
		// Only windows that start once the drive is aged, and not the
		// last, which may be partial.
		if w.Minutes-width >= r.AgedAfterMin-1e-9 && i < len(r.Windows)-1 {
			aged = append(aged, w.Norm)
		}
	}
	if len(aged) < worstSpan {
		return r.Aged.Norm
	}
	best := math.Inf(1)
	for i := 0; i+worstSpan <= len(aged); i++ {
		sum := 0.0
		for _, v := range aged[i : i+worstSpan] {
			sum += v
		}
		best = min(best, sum/worstSpan)
	}
	return best
}

// setLifetime projects the drive's life at a host write rate of rate
// bytes/s: the VoD paper's T = C x 1024 x N / (W x 3600) hours (C in GB, W
// in MB/s) with W the flash write rate, rate x EraseWAF.
func (r *RunResult) setLifetime(capacity int64, rate float64) {
	if rate <= 0 || r.Aged.EraseWAF <= 0 {
		return
	}
	r.Aged.LifetimeHours = float64(capacity) * endurance / (rate * r.Aged.EraseWAF) / 3600
}
