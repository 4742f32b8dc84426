package loadgen

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/strata-media/strata/internal/quantile"
)

// LatencyMethod says how Report's percentiles are computed.
const LatencyMethod = "exact (nearest rank over every completed request)"

// Report is the outcome of one run, over the requests due in the measured
// window (after Warmup). Latency is from sending the request to reading the
// last byte of the body, over completed requests, late ones included.
type Report struct {
	// URL is the server's base URL.
	URL string `json:"url"`
	// RateRPS is the target request rate, requests per second.
	RateRPS float64 `json:"rate_rps"`
	// Popularity names the title law, e.g. "theta=0.2 (s=0.8)".
	Popularity string `json:"popularity"`
	// ZipfS is the law's exponent s.
	ZipfS float64 `json:"zipf_s"`
	// Seed seeded the request sequence.
	Seed uint64 `json:"seed"`
	// CatalogTitles counts the requestable titles.
	CatalogTitles int `json:"catalog_titles"`
	// Viewers is Config.Viewers: the whole-title sessions the requests
	// came from; 0 when each was drawn on its own.
	Viewers int `json:"viewers,omitempty"`
	// DurationS is the measured window in seconds (shorter if interrupted).
	DurationS float64 `json:"duration_s"`
	// WarmupS is the unmeasured warmup in seconds.
	WarmupS float64 `json:"warmup_s"`
	// Interrupted is true when the run was cancelled before its end.
	Interrupted bool `json:"interrupted,omitempty"`

	// Requests counts requests due in the window, dropped ones included;
	// requests cut off by the run's cancellation are not counted at all.
	Requests int `json:"requests"`
	// Completed counts 2xx responses whose body was read in full.
	Completed int `json:"completed"`
	// Errors counts requests that did not complete: transport errors,
	// timeouts, non-2xx statuses, and Dropped.
	Errors int `json:"errors"`
	// Dropped counts requests not sent because MaxInflight were in flight.
	Dropped int `json:"dropped"`
	// Late counts completed requests that took longer than their deadline.
	Late int `json:"late"`
	// Misses counts segment deadline misses: Late + Errors.
	Misses int `json:"misses"`
	// MissRatio is Misses / Requests (FlashStream §5.1's segment miss ratio).
	MissRatio float64 `json:"miss_ratio"`
	// ErrorKinds counts errors by kind ("status 503", "timeout", "dropped").
	ErrorKinds map[string]int `json:"error_kinds,omitempty"`

	// ThroughputRPS is Completed / DurationS.
	ThroughputRPS float64 `json:"throughput_rps"`
	// Bytes counts body bytes read.
	Bytes int64 `json:"bytes"`
	// MBPerS is Bytes / DurationS in MB (10^6 bytes) per second.
	MBPerS float64 `json:"mb_per_s"`

	// LatencyMethod says how the percentiles are computed.
	LatencyMethod string `json:"latency_method"`
	// P50Ms .. MaxMs are latency percentiles in milliseconds.
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"`
	// SchedLagMaxMs is the most any request was sent after its due time:
	// when it is large, the generator, not the server, was the bottleneck.
	SchedLagMaxMs float64 `json:"sched_lag_max_ms"`

	// Server holds the change of every numeric leaf of the server's
	// GET /stats over the window, keyed by dotted path ("ram.hits"); nil
	// when the server has no /stats.
	Server map[string]float64 `json:"server,omitempty"`
	// Titles counts requests per title, in catalog (popularity rank) order.
	Titles []TitleStat `json:"titles"`
}

// TitleStat counts one title's measured requests.
type TitleStat struct {
	ID       string `json:"id"`
	Requests int    `json:"requests"`
	Errors   int    `json:"errors"`
	Misses   int    `json:"misses"`
}

// A result is the outcome of one request.
type result struct {
	rank     int
	measured bool
	latency  time.Duration
	deadline time.Duration
	bytes    int64
	err      error // nil: completed
	aborted  bool  // cut off by the run's cancellation: not recorded
}

// recorder accumulates results; safe for concurrent use.
type recorder struct {
	mu struct {
		sync.Mutex
		rep   Report          // counters only
		lat   []time.Duration // completed measured requests
		kinds map[string]int
		lag   time.Duration
	}
}

func newRecorder(p *plan) *recorder {
	r := &recorder{}
	r.mu.rep.Titles = make([]TitleStat, len(p.targets))
	for i, t := range p.targets {
		r.mu.rep.Titles[i].ID = t.id
	}
	r.mu.kinds = map[string]int{}
	return r
}

// add records one finished request.
func (r *recorder) add(res result) {
	if !res.measured || res.aborted {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rep, ts := &r.mu.rep, &r.mu.rep.Titles[res.rank]
	rep.Requests++
	ts.Requests++
	rep.Bytes += res.bytes
	switch {
	case res.err != nil:
		rep.Errors++
		ts.Errors++
		if errors.Is(res.err, errDropped) {
			rep.Dropped++
		}
		r.mu.kinds[errorKind(res.err)]++
	case res.latency > res.deadline:
		rep.Late++
	}
	if res.err != nil || res.latency > res.deadline {
		rep.Misses++
		ts.Misses++
	}
	if res.err == nil {
		rep.Completed++
		r.mu.lat = append(r.mu.lat, res.latency)
	}
}

// lagged records that a request was sent lag after its due time.
func (r *recorder) lagged(lag time.Duration) {
	r.mu.Lock()
	r.mu.lag = max(r.mu.lag, lag)
	r.mu.Unlock()
}

// measured returns the measured requests finished so far and their
// misses.
func (r *recorder) measured() (requests, misses int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.rep.Requests, r.mu.rep.Misses
}

// report finishes the report over a measured window of elapsed.
func (r *recorder) report(elapsed time.Duration) Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := r.mu.rep
	rep.Titles = slices.Clone(rep.Titles)
	if len(r.mu.kinds) > 0 {
		rep.ErrorKinds = maps.Clone(r.mu.kinds)
	}
	rep.DurationS = elapsed.Seconds()
	rep.MissRatio = ratio(float64(rep.Misses), float64(rep.Requests))
	rep.ThroughputRPS = ratio(float64(rep.Completed), rep.DurationS)
	rep.MBPerS = ratio(float64(rep.Bytes)/1e6, rep.DurationS)
	rep.SchedLagMaxMs = ms(r.mu.lag)
	fillLatency(&rep, r.mu.lat)
	return rep
}

// fillLatency sets rep's percentiles from lat, which it sorts.
func fillLatency(rep *Report, lat []time.Duration) {
	rep.LatencyMethod = LatencyMethod
	slices.Sort(lat)
	rep.P50Ms = ms(quantile.NearestRank(lat, 0.50))
	rep.P90Ms = ms(quantile.NearestRank(lat, 0.90))
	rep.P99Ms = ms(quantile.NearestRank(lat, 0.99))
	rep.P999Ms = ms(quantile.NearestRank(lat, 0.999))
	rep.MaxMs = ms(quantile.NearestRank(lat, 1))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// errorKind names an error for Report.ErrorKinds.
func errorKind(err error) string {
	var ne interface{ Timeout() bool }
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, errDropped):
		return "dropped"
	}
	var se statusError
	if errors.As(err, &se) {
		return fmt.Sprintf("status %d", int(se))
	}
	return "transport"
}

// errDropped marks a request not sent because MaxInflight were in flight.
var errDropped = errors.New("loadgen: max in flight reached")

// statusError is a non-2xx response status.
type statusError int

func (e statusError) Error() string { return fmt.Sprintf("loadgen: status %d", int(e)) }
