package edge

import "sync/atomic"

// Stats are the edge's counters since New.
type Stats struct {
	// Hits are requests answered from a fresh stored response (HIT), or
	// from one fetched for a concurrent request (COALESCED).
	Hits uint64 `json:"hits"`
	// Coalesced are the Hits that waited for another request's fetch.
	Coalesced uint64 `json:"coalesced"`
	// Misses are requests for which nothing usable was stored: the
	// response was fetched (MISS), or replaced a stale one (EXPIRED).
	Misses uint64 `json:"misses"`
	// Passes are requests answered with a response that is not stored
	// (no-store, private, Vary: *, too large, ...).
	Passes uint64 `json:"passes"`
	// StaleServed are requests answered with a stale response
	// (stale-while-revalidate, stale-if-error, max-stale).
	StaleServed uint64 `json:"stale_served"`
	// Revalidations are conditional requests sent upstream, in the
	// foreground or the background.
	Revalidations uint64 `json:"revalidations"`
	// Revalidated are revalidations answered 304, which refreshed the
	// stored response.
	Revalidated uint64 `json:"revalidated"`
	// UpstreamRequests are requests sent upstream, slices included.
	UpstreamRequests uint64 `json:"upstream_requests"`
	// UpstreamBytes are the body bytes received from upstreams.
	UpstreamBytes uint64 `json:"upstream_bytes"`
	// UpstreamErrors are upstream exchanges that failed: no answer,
	// timeout, truncated body, or an answer that does not fit.
	UpstreamErrors uint64 `json:"upstream_errors"`
	// Retries are upstream requests tried again, on the same server or
	// another, after a connection error or a 502, 503 or 504.
	Retries uint64 `json:"upstream_retries"`
	// Errors are requests answered with an error status of the edge's
	// own (502, 504) or cut short while streaming.
	Errors uint64 `json:"errors"`
	// LastResort are lookups answered from a copy the engine had missed
	// (a flash read past its deadline, or skipped while the device's
	// reads were degraded or late) because the upstream failed too.
	LastResort uint64 `json:"last_resort"`
	// Relayed are requests whose stored copy flash held but did not read,
	// its device overloaded (the engine's read limit shed the read):
	// relayed from the upstream, nothing stored. Those the upstream
	// answered count among Misses too; those it failed were answered from
	// the copy (LastResort).
	Relayed uint64 `json:"relayed"`
	// RelaysFull are requests whose copy was shed while the relays in
	// progress were at their bound (edge.max_relays): read from the copy
	// past the limit (LastResort) instead, or loaded as a miss if that
	// failed.
	RelaysFull uint64 `json:"relays_full"`
	// Corrupt are stored records that did not decode and were dropped.
	Corrupt uint64 `json:"corrupt"`
	// Purges are calls of Purge and PurgeTags.
	Purges uint64 `json:"purges"`
	// FillBytes is the memory upstream bodies being read hold now
	// (Options.FillMemory bounds it), bytes; FillWaits counts the bodies
	// that waited for room in it: a node overloaded with misses.
	FillBytes int64  `json:"fill_bytes"`
	FillWaits uint64 `json:"fill_waits"`
	// Upstreams are the counters of each upstream server.
	Upstreams []UpstreamStats `json:"upstreams"`
}

// counters are the atomics behind Stats.
type counters struct {
	hits, coalesced, misses, passes, stale          atomic.Uint64
	revalidations, revalidated                      atomic.Uint64
	upstreamRequests, upstreamBytes, upstreamErrors atomic.Uint64
	retries                                         atomic.Uint64
	errors, corrupt, purges                         atomic.Uint64
	lastResort, relayed, relaysFull                 atomic.Uint64
}

// Stats returns the counters.
func (h *Handler) Stats() Stats {
	c := &h.stats
	fillBytes, fillWaits := h.fill.stats()
	return Stats{FillBytes: fillBytes, FillWaits: uint64(fillWaits),
		Hits: c.hits.Load(), Coalesced: c.coalesced.Load(), Misses: c.misses.Load(),
		Passes: c.passes.Load(), StaleServed: c.stale.Load(),
		Revalidations: c.revalidations.Load(), Revalidated: c.revalidated.Load(),
		UpstreamRequests: c.upstreamRequests.Load(), UpstreamBytes: c.upstreamBytes.Load(),
		UpstreamErrors: c.upstreamErrors.Load(), Retries: c.retries.Load(), Errors: c.errors.Load(),
		LastResort: c.lastResort.Load(), Relayed: c.relayed.Load(), RelaysFull: c.relaysFull.Load(), Corrupt: c.corrupt.Load(), Purges: c.purges.Load(), Upstreams: h.UpstreamStats(),
	}
}
