package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/engine"
)

// HistoryInterval is how often the node samples its counters for the
// dashboard, and HistoryLength how many samples it keeps: one hour.
const (
	HistoryInterval = 5 * time.Second
	HistoryLength   = int(time.Hour / HistoryInterval)
)

// A Sample is the node's cumulative counters and levels at one time. The
// dashboard plots differences of consecutive samples (rates) and the
// levels as they are.
type Sample struct {
	// T is the sample's time in Unix milliseconds.
	T              int64   `json:"t"`
	RAMHits        uint64  `json:"ram_hits"`
	SSDHits        uint64  `json:"ssd_hits"`
	OriginReads    uint64  `json:"origin_reads"`
	RAMHitBytes    int64   `json:"ram_hit_bytes"`
	SSDHitBytes    int64   `json:"ssd_hit_bytes"`
	OriginBytes    uint64  `json:"origin_bytes"`
	FlashWritten   uint64  `json:"flash_bytes_written"`
	FlashPadding   uint64  `json:"flash_padding_bytes"`
	FlashUtil      float64 `json:"flash_utilization"`
	FlashBlocks    int     `json:"flash_blocks"`
	FlashUsed      int     `json:"flash_blocks_used"`
	Accepts        uint64  `json:"admission_accepts"`
	Rejects        uint64  `json:"admission_rejects"`
	LifetimeHours  float64 `json:"projected_lifetime_hours"`
	RAMBytes       int64   `json:"ram_bytes"`
	RAMBudget      int64   `json:"ram_budget_bytes"`
	BenchRequests  uint64  `json:"bench_requests"`
	BenchMisses    uint64  `json:"bench_misses"`
	BenchReporting int     `json:"bench_runs"`
	// Edge is the edge's counters, on an edge node (History.SetEdge).
	Edge *EdgeSample `json:"edge,omitempty"`
}

// History keeps the last HistoryLength samples of a node's counters,
// and the deadline misses that `strata bench` runs report to it.
type History struct {
	eng *engine.Engine

	mu struct {
		sync.Mutex
		ring  []Sample // oldest first once full, from next
		next  int
		bench map[string]benchRun // by run id
		total benchRun            // summed over runs, including forgotten ones
		edge  func() EdgeSample   // nil without an edge
	}
}

// benchRun is what one bench run has reported: cumulative counts.
type benchRun struct {
	Requests uint64
	Misses   uint64
	seen     time.Time
}

// maxBenchRuns bounds the runs a node remembers; the oldest is forgotten
// (its counts stay in the totals).
const maxBenchRuns = 16

// NewHistory returns an empty history of eng's counters.
func NewHistory(eng *engine.Engine) *History {
	h := &History{eng: eng}
	h.mu.ring = make([]Sample, 0, HistoryLength)
	h.mu.bench = map[string]benchRun{}
	return h
}

// Sample records the counters as of now. The node calls it every
// HistoryInterval.
func (h *History) Sample(now time.Time) {
	s := h.current(now)
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.mu.ring) < HistoryLength {
		h.mu.ring = append(h.mu.ring, s)
		return
	}
	h.mu.ring[h.mu.next] = s
	h.mu.next = (h.mu.next + 1) % HistoryLength
}

// current is a sample of the counters now (not recorded).
func (h *History) current(now time.Time) Sample {
	st := h.eng.Stats()
	h.mu.Lock()
	total, runs := h.mu.total, 0
	for _, r := range h.mu.bench {
		if now.Sub(r.seen) < 3*HistoryInterval {
			runs++
		}
	}
	h.mu.Unlock()
	return Sample{T: now.UnixMilli(),
		RAMHits: st.RAM.Hits, SSDHits: st.SSD.Hits, OriginReads: st.Origin.Reads,
		RAMHitBytes: st.RAM.HitBytes, SSDHitBytes: st.SSD.HitBytes, OriginBytes: st.Origin.Bytes,
		FlashWritten: st.SSD.BytesWritten, FlashPadding: st.SSD.PaddingBytes, FlashUtil: st.SSD.Utilization,
		FlashBlocks: st.SSD.Blocks, FlashUsed: st.SSD.BlocksUsed,
		Accepts: st.SSD.AdmissionAccepts, Rejects: st.SSD.AdmissionRejects, LifetimeHours: st.SSD.ProjectedLifetimeHours,
		RAMBytes: st.RAM.Bytes, RAMBudget: st.RAM.BudgetBytes,
		BenchRequests: total.Requests, BenchMisses: total.Misses, BenchReporting: runs,
		Edge: h.edgeSample()}
}

// Samples returns the recorded samples after Unix millisecond since,
// oldest first.
func (h *History) Samples(since int64) []Sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Sample, 0, len(h.mu.ring))
	for i := range h.mu.ring {
		s := h.mu.ring[(h.mu.next+i)%len(h.mu.ring)]
		if s.T > since {
			out = append(out, s)
		}
	}
	return out
}

// BenchReport is what `strata bench --report-to` posts about a run in
// progress: its counts so far (cumulative).
type BenchReport struct {
	// Run names the run (any string up to 64 bytes, unique per run).
	Run string `json:"run"`
	// Requests counts the run's measured requests finished so far.
	Requests uint64 `json:"requests"`
	// Misses counts its deadline misses so far.
	Misses uint64 `json:"misses"`
}

// Report adds a bench run's progress: the growth of its counts since its
// last report goes into the totals.
func (h *History) Report(r BenchReport, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	prev, ok := h.mu.bench[r.Run]
	if !ok && len(h.mu.bench) >= maxBenchRuns {
		oldest := ""
		for id, b := range h.mu.bench {
			if oldest == "" || b.seen.Before(h.mu.bench[oldest].seen) {
				oldest = id
			}
		}
		delete(h.mu.bench, oldest)
	}
	if r.Requests >= prev.Requests && r.Misses >= prev.Misses { // counts only grow; a stale report adds nothing
		h.mu.total.Requests += r.Requests - prev.Requests
		h.mu.total.Misses += r.Misses - prev.Misses
		prev.Requests, prev.Misses = r.Requests, r.Misses
	}
	prev.seen = now
	h.mu.bench[r.Run] = prev
}

// historyResponse is GET /stats/history.
type historyResponse struct {
	IntervalSeconds float64  `json:"interval_s"`
	Samples         []Sample `json:"samples"`
	Current         Sample   `json:"current"`
}

// serveHistory is GET /stats/history[?since=MS]: the recorded samples
// newer than since, and the counters now.
func (h *History) serveHistory(w http.ResponseWriter, r *http.Request) {
	var since int64
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			httpapi.Error(w, http.StatusBadRequest, "since: not a Unix time in milliseconds")
			return
		}
		since = n
	}
	now := time.Now()
	httpapi.Write(w, http.StatusOK, "no-store", historyResponse{ //nolint:errcheck // the status is sent
		IntervalSeconds: HistoryInterval.Seconds(), Samples: h.Samples(since), Current: h.current(now)})
}

// maxBenchReport bounds a bench report's body.
const maxBenchReport = 1 << 10

// serveBenchReport is POST /admin/bench: a bench run's progress.
func (h *History) serveBenchReport(w http.ResponseWriter, r *http.Request) {
	var rep BenchReport
	dec := json.NewDecoder(httpapi.Body(w, r, maxBenchReport))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		httpapi.Error(w, http.StatusBadRequest, "a bench report is a JSON object {run, requests, misses} under 1 KiB")
		return
	}
	if rep.Run == "" || len(rep.Run) > 64 || rep.Misses > rep.Requests {
		httpapi.Error(w, http.StatusBadRequest, "a bench report needs a run id of 1 to 64 bytes and misses <= requests")
		return
	}
	h.Report(rep, time.Now())
	w.WriteHeader(http.StatusNoContent)
}
