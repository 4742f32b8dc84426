package streamsim

import (
	"math"
	"time"

	"github.com/strata-media/strata/internal/quantile"
	"github.com/strata-media/strata/internal/storage/model"
)

// Meter measures a run: per time window the host bytes and application
// work completed and the drive's counters at the window's end; and, once
// the drive counts as aged (StartAged), the totals and the latencies of
// each kind of write.
type Meter struct {
	Start time.Duration // the first window starts here
	Width time.Duration // window width

	Windows []Window
	// HostBytes and Work are the totals since Start.
	HostBytes, Work int64
	// Latency holds the write latencies since StartAged, by Kind; All
	// holds every write's.
	Latency [3]histogram
	All     histogram

	aged      bool
	AgedAt    time.Duration
	agedStats model.Stats
	agedHost  int64
	agedWork  int64

	last model.Stats // counters at the end of the previous window

	// stopped is set when the measured phase ends (Stop): the drain of
	// the ops still in flight after it is not measured.
	stopped   bool
	StopAt    time.Duration
	stopStats model.Stats
}

// Window is what one time window measured.
type Window struct {
	End       time.Duration `json:"end_ns"`
	HostBytes int64         `json:"host_bytes"`
	Work      int64         `json:"work"`
	// Stats are the drive's counters over the window (the last window
	// may be partial).
	Stats model.Stats `json:"-"`
}

// newMeter starts windows of width at start.
func newMeter(start, width time.Duration, ssd *model.SSD) *Meter {
	return &Meter{Start: start, Width: width, last: ssd.Stats()}
}

// StartAged marks the drive as aged from now: totals and latencies of the
// aged part count from here.
func (m *Meter) StartAged(now time.Duration, ssd *model.SSD) {
	m.aged, m.AgedAt = true, now
	m.agedStats, m.agedHost, m.agedWork = ssd.Stats(), m.HostBytes, m.Work
}

// Aged reports whether StartAged was called.
func (m *Meter) Aged() bool { return m.aged }

// Stop ends the measurement at now: later completions are not counted
// and the totals keep the drive's counters as they are now.
func (m *Meter) Stop(now time.Duration, ssd *model.SSD) {
	if !m.stopped {
		m.stopped, m.StopAt, m.stopStats = true, now, ssd.Stats()
	}
}

// AgedTotals returns the drive's counters, host bytes and work from
// StartAged to Stop (or now).
func (m *Meter) AgedTotals(ssd *model.SSD) (model.Stats, int64, int64) {
	st := ssd.Stats()
	if m.stopped {
		st = m.stopStats
	}
	return st.Sub(m.agedStats), m.HostBytes - m.agedHost, m.Work - m.agedWork
}

// End is when the measurement ended: Stop's time, or now.
func (m *Meter) End(now time.Duration) time.Duration {
	if m.stopped {
		return m.StopAt
	}
	return now
}

// record accounts op, submitted at sub and complete at done.
func (m *Meter) record(op *Op, sub, done time.Duration, ssd *model.SSD) {
	if done < m.Start || m.stopped {
		return
	}
	w := m.window(done, ssd)
	w.Work += op.Work
	m.Work += op.Work
	if op.Kind != opWrite {
		return
	}
	w.HostBytes += op.Len
	m.HostBytes += op.Len
	if m.aged && sub >= m.AgedAt {
		lat := done - sub
		m.Latency[op.Class.Kind].Add(lat)
		m.All.Add(lat)
	}
}

// window returns the window holding t, closing the ones before it.
func (m *Meter) window(t time.Duration, ssd *model.SSD) *Window {
	i := int((t - m.Start) / m.Width)
	for len(m.Windows) <= i {
		m.close(ssd)
	}
	return &m.Windows[i]
}

// close ends the last window (with the counters now) and opens the next.
func (m *Meter) close(ssd *model.SSD) {
	if n := len(m.Windows); n > 0 {
		m.seal(&m.Windows[n-1], ssd)
	}
	m.Windows = append(m.Windows, Window{End: m.Start + time.Duration(len(m.Windows)+1)*m.Width})
}

func (m *Meter) seal(w *Window, ssd *model.SSD) {
	cur := ssd.Stats()
	w.Stats = cur.Sub(m.last)
	m.last = cur
}

// Finish seals the last window.
func (m *Meter) Finish(ssd *model.SSD) {
	if n := len(m.Windows); n > 0 {
		m.seal(&m.Windows[n-1], ssd)
	}
}

// histogram counts durations in buckets 1% wide (log scale), from 1 ns to
// hours: percentiles within 1%, in constant memory.
type histogram struct {
	counts []int64
	n      int64
	max    time.Duration
}

const histBase = 1.01

var logHistBase = math.Log(histBase)

// Add counts d.
func (h *histogram) Add(d time.Duration) {
	i := 0
	if d > 1 {
		i = int(math.Log(float64(d)) / logHistBase)
	}
	for len(h.counts) <= i {
		h.counts = append(h.counts, 0)
	}
	h.counts[i]++
	h.n++
	h.max = max(h.max, d)
}

// Count is the number of durations added.
func (h *histogram) Count() int64 { return h.n }

// Quantile returns the q-quantile (0 < q <= 1) by the nearest-rank rule
// (quantile.Rank), the upper edge of its bucket, or 0 when the histogram
// is empty.
func (h *histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := quantile.Rank(h.n, q)
	var cum int64
	for i, c := range h.counts {
		if cum += c; cum >= rank {
			return min(time.Duration(math.Pow(histBase, float64(i+1))), h.max)
		}
	}
	return h.max
}

// CDF returns points (latency, fraction at or below it) for plotting.
func (h *histogram) CDF() (lat, frac []float64) {
	var cum int64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		cum += c
		lat = append(lat, math.Pow(histBase, float64(i+1)))
		frac = append(frac, float64(cum)/float64(h.n))
	}
	return lat, frac
}
