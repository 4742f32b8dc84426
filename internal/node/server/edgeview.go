package server

// EdgeSample is an edge node's counters for the dashboard: what its cache
// answered and what each upstream server did, cumulative.
type EdgeSample struct {
	Hits           uint64 `json:"hits"`
	Misses         uint64 `json:"misses"`
	Stale          uint64 `json:"stale"`
	Revalidated    uint64 `json:"revalidated"`
	Passes         uint64 `json:"passes"`
	UpstreamErrors uint64 `json:"upstream_errors"`
	// Upstreams are the upstream servers' counters.
	Upstreams []EdgeUpstreamSample `json:"upstreams"`
}

// EdgeUpstreamSample is one upstream server's counters.
type EdgeUpstreamSample struct {
	// Name is the server as the dashboard labels it: its prefix and its
	// place among the prefix's servers ("/cdn/ primary", "/cdn/ backup 1").
	Name     string `json:"name"`
	Requests uint64 `json:"requests"`
	Errors   uint64 `json:"errors"`
	// WaitedMS is the time its exchanges waited for a response header,
	// summed, in milliseconds: the mean latency is its growth over the
	// growth of Requests.
	WaitedMS float64 `json:"waited_ms"`
}

// SetEdge makes the samples carry the counters f returns: an edge node's.
// Call it before the first Sample.
func (h *History) SetEdge(f func() EdgeSample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mu.edge = f
}

// edgeSample is the edge's sample now, nil on a node without an edge.
func (h *History) edgeSample() *EdgeSample {
	h.mu.Lock()
	f := h.mu.edge
	h.mu.Unlock()
	if f == nil {
		return nil
	}
	s := f()
	return &s
}

// IsEdge reports whether the dashboard's node is an edge (SetEdge).
func (h *History) IsEdge() bool { return h.edgeSample() != nil }
