package edge

import (
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-media/strata/internal/httpapi"
)

// PurgePattern is the admin route that drops what the edge stored for a
// path: POST /admin/purge?path=/cdn/x (a path ending in '/' purges all
// under it).
const PurgePattern = "POST /admin/purge"

// Mount registers the edge on the API: every method under each
// upstream's prefix (GET and HEAD are cached, the others forwarded;
// routes of other modules that are more specific win, as http.ServeMux
// decides; their plain reads of fresh hits take the fast path), the purge route behind the admin token, the /stats section
// "edge" and its metrics.
func (h *Handler) Mount(m *httpapi.Mounter) {
	for _, rt := range *h.routes.Load() {
		// "GET prefix" keeps GET and HEAD ahead of a module's method-less
		// route of the same path; the method-less pattern forwards the
		// other methods (PUT, POST, DELETE...), which were answered 405.
		m.Handle("GET "+rt.prefix, h)
		m.Handle(rt.prefix, h)
		// The fresh hits skip the API's layers (fast.go).
		m.HandleFast(rt.prefix, fastRoute{h, "GET " + rt.prefix}, "GET "+rt.prefix, rt.prefix)
	}
	m.HandleAdmin(PurgePattern, http.HandlerFunc(h.servePurge))
	m.Stats("edge", func() any { return h.Stats() })
	m.Metrics(metrics{h})
	m.Metrics(h.upstreamLatency)
}

func newUpstreamLatency() prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "strata_edge_upstream_response_duration_seconds",
		Help:    "Time from sending an upstream request to its response header, failed exchanges included.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	})
}

// servePurge is POST /admin/purge?path=P or ?tag=KEY[&tag=KEY2...]: 200
// with what it dropped, {"objects": 0, "bytes": 0} for a path or tag never
// cached (a purge is idempotent: the state asked for holds); 404 for a
// path no upstream serves, 400 for a bad request.
func (h *Handler) servePurge(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, tags := q.Get("path"), q["tag"]
	switch {
	case p != "" && len(tags) > 0:
		httpapi.Error(w, http.StatusBadRequest, "want ?path= or ?tag=, not both")
		return
	case len(tags) > 0:
		got, err := h.PurgeTags(tags)
		h.answerPurge(w, "tags", tags, got, err)
		return
	case p == "" || p[0] != '/':
		httpapi.Error(w, http.StatusBadRequest, "want ?path=/PREFIX/... (a request path, '/' first) or ?tag=KEY")
		return
	}
	got, err := h.Purge(p)
	if errors.Is(err, ErrNoUpstream) {
		httpapi.Error(w, http.StatusNotFound, "no upstream for "+httpapi.ClipID(p))
		return
	}
	h.answerPurge(w, "path", p, got, err)
}

// answerPurge answers a purge of what (a path or tags) that dropped got.
func (h *Handler) answerPurge(w http.ResponseWriter, kind string, what any, got Purged, err error) {
	switch {
	case errors.Is(err, ErrBadTag):
		httpapi.Error(w, http.StatusBadRequest, err.Error())
	case err != nil:
		h.log.Error("purge", kind, what, "err", err)
		httpapi.Error(w, http.StatusInternalServerError, "the purge could not be recorded; see the server log")
	default:
		h.log.Info("purged", kind, what, "objects", got.Objects, "bytes", got.Bytes)
		httpapi.Write(w, http.StatusOK, "no-store", map[string]any{"purged": what, "objects": got.Objects, "bytes": got.Bytes}) //nolint:errcheck // the status is sent
	}
}

// metrics exports Stats to Prometheus, read at scrape time so that
// /metrics and /stats agree.
type metrics struct{ h *Handler }

var descRequests = prometheus.NewDesc("strata_edge_requests_total",
	"Edge requests by what the cache did (hit includes coalesced).", []string{"result"}, nil)

// edgeCounters are the edge's other counters and the Stats field of each.
var edgeCounters = []struct {
	desc  *prometheus.Desc
	value func(*Stats) uint64
}{
	{counterDesc("coalesced", "Edge hits that waited for another request's upstream fetch."), func(s *Stats) uint64 { return s.Coalesced }},
	{counterDesc("revalidations", "Conditional requests sent upstream."), func(s *Stats) uint64 { return s.Revalidations }},
	{counterDesc("revalidated", "Revalidations answered 304."), func(s *Stats) uint64 { return s.Revalidated }},
	{counterDesc("upstream_requests", "Requests sent upstream, slices included."), func(s *Stats) uint64 { return s.UpstreamRequests }},
	{counterDesc("upstream_bytes", "Body bytes received from upstreams."), func(s *Stats) uint64 { return s.UpstreamBytes }},
	{counterDesc("upstream_errors", "Upstream exchanges that failed (no answer, timeout, truncated body)."), func(s *Stats) uint64 { return s.UpstreamErrors }},
	{counterDesc("upstream_retries", "Upstream requests tried again after a connection error or a 502, 503 or 504."), func(s *Stats) uint64 { return s.Retries }},
	{counterDesc("errors", "Edge requests answered with an error of the edge's own (502, 504) or cut short."), func(s *Stats) uint64 { return s.Errors }},
	{counterDesc("corrupt", "Stored edge records that did not decode and were dropped."), func(s *Stats) uint64 { return s.Corrupt }},
	{counterDesc("purges", "Purges of stored responses."), func(s *Stats) uint64 { return s.Purges }},
	{counterDesc("relayed", "Edge requests whose copy flash held but shed, its device overloaded (flash_read_target): relayed from the upstream, nothing stored."), func(s *Stats) uint64 { return s.Relayed }},
	{counterDesc("relays_full", "Edge requests whose shed copy found every relay busy (edge.max_relays): read from the copy past the read limit, or loaded as a miss."), func(s *Stats) uint64 { return s.RelaysFull }},
	{counterDesc("fill_waits", "Upstream bodies that waited for room in the edge's fill memory (edge.fill_memory): misses past what the node may hold."), func(s *Stats) uint64 { return s.FillWaits }},
}

var descFillBytes = prometheus.NewDesc("strata_edge_fill_bytes",
	"Memory held now by upstream bodies being read (bounded by edge.fill_memory).", nil, nil)

// Per upstream server, labelled by prefix and server ("primary",
// "backup 1"...).
var (
	descServerRequests = prometheus.NewDesc("strata_edge_upstream_server_requests_total",
		"Exchanges sent to each upstream server.", []string{"prefix", "server"}, nil)
	descServerErrors = prometheus.NewDesc("strata_edge_upstream_server_errors_total",
		"Exchanges of each upstream server that failed (no answer, timeout, truncated body, 502, 503, 504).", []string{"prefix", "server"}, nil)
	descServerWaited = prometheus.NewDesc("strata_edge_upstream_server_wait_seconds_total",
		"Time each upstream server's exchanges waited for a response header, summed.", []string{"prefix", "server"}, nil)
)

func counterDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("strata_edge_"+name+"_total", help, nil, nil)
}

// Describe sends the metrics' descriptions.
func (m metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- descRequests
	for _, c := range edgeCounters {
		ch <- c.desc
	}
	ch <- descServerRequests
	ch <- descServerErrors
	ch <- descServerWaited
	ch <- descFillBytes
}

// Collect sends a snapshot of the counters.
func (m metrics) Collect(ch chan<- prometheus.Metric) {
	st := m.h.Stats()
	for result, v := range map[string]uint64{"hit": st.Hits, "miss": st.Misses, "pass": st.Passes, "stale": st.StaleServed} {
		ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(v), result)
	}
	for _, c := range edgeCounters {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(c.value(&st)))
	}
	ch <- prometheus.MustNewConstMetric(descFillBytes, prometheus.GaugeValue, float64(st.FillBytes))
	for _, u := range st.Upstreams {
		ch <- prometheus.MustNewConstMetric(descServerRequests, prometheus.CounterValue, float64(u.Requests), u.Prefix, u.Server)
		ch <- prometheus.MustNewConstMetric(descServerErrors, prometheus.CounterValue, float64(u.Errors), u.Prefix, u.Server)
		ch <- prometheus.MustNewConstMetric(descServerWaited, prometheus.CounterValue, u.WaitedSeconds, u.Prefix, u.Server)
	}
}
