package edge

import (
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultLogInterval is the least time between two warnings about one
// upstream in the server log (Options.LogInterval).
const DefaultLogInterval = 10 * time.Second

// A server is one origin server of a route: its base URL and its health.
type server struct {
	base   *url.URL // path ends in '/'
	name   string   // base as configured, for the log
	client *http.Client
	h      health
	// requests, errors and waited (ns, to the response header) count the
	// server's exchanges, for UpstreamStats.
	requests, errors, waited atomic.Uint64
}

// UpstreamStats are one upstream server's counters since the handler
// started or the last reload of its upstreams.
type UpstreamStats struct {
	// Prefix is the request path prefix the server answers for; Server
	// names it among the prefix's: "primary", "backup 1", "backup 2"...
	// Its URL is left out of /stats (public, as the edge's errors leave
	// it out); the server log names it.
	Prefix string `json:"prefix"`
	Server string `json:"server"`
	URL    string `json:"-"`
	// Requests are the exchanges sent, Errors those that failed (no
	// answer, timeout, truncated body, 502, 503, 504).
	Requests uint64 `json:"requests"`
	Errors   uint64 `json:"errors"`
	// WaitedSeconds is the time the exchanges waited for their response
	// header, summed: with Requests, the mean latency.
	WaitedSeconds float64 `json:"waited_seconds"`
	// Failing says the server's last exchange failed.
	Failing bool `json:"failing,omitempty"`
}

// UpstreamStats returns the counters of every upstream server, by prefix,
// primary first.
func (h *Handler) UpstreamStats() []UpstreamStats {
	var out []UpstreamStats
	routes := *h.routes.Load()
	for i := len(routes) - 1; i >= 0; i-- { // shortest prefix first
		for j, s := range routes[i].servers {
			s.h.mu.Lock()
			failing := s.h.failing
			s.h.mu.Unlock()
			name := "primary"
			if j > 0 {
				name = "backup " + strconv.Itoa(j)
			}
			out = append(out, UpstreamStats{Prefix: routes[i].prefix, Server: name, URL: s.name,
				Requests: s.requests.Load(), Errors: s.errors.Load(),
				WaitedSeconds: float64(s.waited.Load()) / 1e9, Failing: failing})
		}
	}
	return out
}

// health is what the edge knows of a server's recent exchanges: whether
// it is failing, since when, and what the server log was told.
type health struct {
	mu sync.Mutex
	// failing says the last exchange failed; since is when the failures
	// started, fails how many there were since.
	failing bool
	since   time.Time
	fails   int
	// announced says the current failure was logged: its recovery is
	// logged too.
	announced bool
	// lastWarn is when the last warning about the server was logged;
	// suppressed counts the failures and recoveries not logged since.
	lastWarn   time.Time
	suppressed int
	// until is when a failed server may be tried again while another
	// can answer; probing says a request is trying it (one at a time).
	until   time.Time
	probing bool
}

// pick returns the server of rt a request tries next: the first that is
// not failing, or whose FailTimeout has passed and that no other request
// is probing (this request then probes it); when every server is failing,
// the one whose FailTimeout ends first.
func (h *Handler) pick(rt *route) *server {
	if len(rt.servers) == 1 {
		return rt.servers[0]
	}
	now := h.opts.Now()
	var first *server
	var firstUntil time.Time
	for _, s := range rt.servers {
		s.h.mu.Lock()
		ok := !s.h.failing || (!now.Before(s.h.until) && !s.h.probing)
		if ok && s.h.failing {
			s.h.probing = true
		}
		until := s.h.until
		s.h.mu.Unlock()
		if ok {
			return s
		}
		if first == nil || until.Before(firstUntil) {
			first, firstUntil = s, until
		}
	}
	return first
}

// released ends the probe of s, if this request was probing it, when the
// exchange ended without saying whether s works.
func (h *Handler) released(s *server) {
	s.h.mu.Lock()
	s.h.probing = false
	s.h.mu.Unlock()
}

// failureStatus reports whether an upstream's status counts as a failure
// of the server: a gateway's error or an unavailable service.
func failureStatus(status int) bool {
	return status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// failed records a failed exchange with s (err says why) and logs a
// warning unless one was logged less than LogInterval ago: at most one
// warning per server and interval, with the count of the failures and
// recoveries left out since the last.
func (h *Handler) failed(rt *route, s *server, err error) {
	now := h.opts.Now()
	s.h.mu.Lock()
	if !s.h.failing {
		s.h.failing, s.h.since, s.h.fails, s.h.announced = true, now, 0, false
	}
	s.h.fails++
	s.errors.Add(1)
	s.h.until, s.h.probing = now.Add(rt.set.FailTimeout), false
	if !s.h.lastWarn.IsZero() && now.Sub(s.h.lastWarn) < h.opts.LogInterval {
		s.h.suppressed++
		s.h.mu.Unlock()
		return
	}
	fails, since, suppressed := s.h.fails, s.h.since, s.h.suppressed
	s.h.lastWarn, s.h.suppressed, s.h.announced = now, 0, true
	s.h.mu.Unlock()
	h.log.Warn("edge upstream failing", "prefix", rt.prefix, "upstream", s.name, "err", err,
		"failures", fails, "failing_for", now.Sub(since).Round(time.Millisecond), "suppressed", suppressed)
}

// succeeded records an exchange s answered, and logs its recovery if its
// failure was logged.
func (h *Handler) succeeded(rt *route, s *server) {
	s.h.mu.Lock()
	s.h.probing = false
	if !s.h.failing {
		s.h.mu.Unlock()
		return
	}
	now := h.opts.Now()
	s.h.failing = false
	if !s.h.announced {
		s.h.suppressed++
		s.h.mu.Unlock()
		return
	}
	fails, since := s.h.fails, s.h.since
	s.h.mu.Unlock()
	h.log.Info("edge upstream recovered", "prefix", rt.prefix, "upstream", s.name,
		"failures", fails, "down_for", now.Sub(since).Round(time.Millisecond))
}
