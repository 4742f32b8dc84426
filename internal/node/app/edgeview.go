package app

import (
	"github.com/strata-media/strata/internal/node/edge"
	"github.com/strata-media/strata/internal/node/server"
)

// edgeSample is the edge's counters as the dashboard samples them.
func edgeSample(h *edge.Handler) server.EdgeSample {
	st := h.Stats()
	s := server.EdgeSample{Hits: st.Hits, Misses: st.Misses, Stale: st.StaleServed, Revalidated: st.Revalidated,
		Passes: st.Passes, UpstreamErrors: st.UpstreamErrors}
	for _, u := range st.Upstreams {
		s.Upstreams = append(s.Upstreams, server.EdgeUpstreamSample{Name: u.Prefix + " " + u.Server, Requests: u.Requests, Errors: u.Errors,
			WaitedMS: u.WaitedSeconds * 1000})
	}
	return s
}
