package engine

import (
	"math"
	"runtime/metrics"
	"sync"
	"time"
)

// schedLagMetric is the Go runtime's histogram of the time goroutines
// spent runnable before they ran: how long the process waited for a CPU.
const schedLagMetric = "/sched/latencies:seconds"

// Of the scheduling latencies over the last window, schedLag reports the
// schedLagQuantile-th, and only with at least schedLagMinEvents of them:
// an idle process (a test on a loaded machine) wakes a few goroutines,
// whose waits on the machine's CPUs say nothing about its own load.
const (
	schedLagWindow    = 250 * time.Millisecond
	schedLagQuantile  = 0.9
	schedLagMinEvents = 256
)

// schedLag measures the process's recent scheduling latency from the Go
// runtime's cumulative histogram: the counts since the start of a window
// of one to two schedLagWindow (the monitor's tick moves it), so that it
// covers about the time a late flash read took. A read that the process
// could not run after the device answered looks late from the process:
// the device's health is told the lag with the timeout and decides
// (health.Monitor.Late). Safe for concurrent use.
type schedLag struct {
	mu      sync.Mutex
	sample  []metrics.Sample
	buckets []float64
	old     []uint64 // the window's start
	cur     []uint64 // the last tick's, the next window's start
	curAt   time.Time
}

func newSchedLag() *schedLag {
	s := &schedLag{sample: []metrics.Sample{{Name: schedLagMetric}}}
	s.cur = s.read()
	s.old = s.cur
	s.curAt = time.Now()
	return s
}

// read returns the histogram's counts now (nil if the runtime has no
// such metric).
func (s *schedLag) read() []uint64 {
	metrics.Read(s.sample)
	if s.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	h := s.sample[0].Value.Float64Histogram()
	if s.buckets == nil {
		s.buckets = append([]float64(nil), h.Buckets...)
	}
	return append([]uint64(nil), h.Counts...)
}

// tick moves the window on if schedLagWindow has passed since the last
// move.
func (s *schedLag) tick(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.curAt) < schedLagWindow {
		return
	}
	s.old, s.cur, s.curAt = s.cur, s.read(), now
}

// lag returns the scheduling latency of the window so far (0 with too
// few events to tell).
func (s *schedLag) lag() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return quantileSince(s.read(), s.old, s.buckets, schedLagQuantile, schedLagMinEvents)
}

// quantileSince returns the q-th quantile of the events counted in now
// and not in then (cumulative counts per bucket; buckets are the
// boundaries, one more than the counts), as the lower boundary of its
// bucket; 0 with fewer than minEvents events.
func quantileSince(now, then []uint64, buckets []float64, q float64, minEvents uint64) time.Duration {
	if len(now) != len(then) || len(buckets) != len(now)+1 {
		return 0
	}
	var total uint64
	for i := range now {
		total += now[i] - then[i]
	}
	if total == 0 || total < minEvents {
		return 0
	}
	want := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i := range now {
		seen += now[i] - then[i]
		if seen >= want {
			lo := buckets[i]
			if math.IsInf(lo, -1) || lo <= 0 {
				return 0
			}
			if math.IsInf(lo, 1) {
				return time.Duration(math.MaxInt64)
			}
			return time.Duration(lo * float64(time.Second))
		}
	}
	return 0
}
