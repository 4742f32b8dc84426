package edge

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/core/httpcache"
)

// Defaults of Options, applied by EnsureDefaults.
const (
	// DefaultSliceSize is 1 MiB, nginx's usual slice size: small enough
	// that a seek pulls little, large enough that a slice fills a good
	// share of a 4 MiB flash block.
	DefaultSliceSize = 1 << 20
	// DefaultMaxWhole is the largest 200 response (to a ranged request the
	// upstream did not honour) stored whole, 16 MiB; larger ones are
	// passed through uncached.
	DefaultMaxWhole = 16 << 20
	// DefaultFillMemory bounds the upstream bodies a node holds in Go's
	// heap at once (Options.FillMemory), 32 MiB: about twenty video
	// segments of 1.5 MB being read from the upstream, or two whole
	// objects of MaxWhole.
	DefaultFillMemory = 32 << 20
	// DefaultConnectTimeout bounds dialing the upstream.
	DefaultConnectTimeout = 5 * time.Second
	// DefaultHeaderTimeout bounds the wait for an upstream's response
	// header.
	DefaultHeaderTimeout = 15 * time.Second
	// DefaultFetchTimeout bounds one upstream exchange, body included: the
	// engine's default OriginTimeout, which bounds a miss's load too.
	DefaultFetchTimeout = 30 * time.Second
	// DefaultMaxIdleConns is the idle connections kept per upstream host.
	DefaultMaxIdleConns = 32
	// DefaultIdleTimeout is how long an idle upstream connection is
	// kept: under the 75 s keepalive_timeout of an nginx origin, so that
	// the edge closes it first and never sends a request on a connection
	// the origin is closing.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultAttempts is how many times an idempotent request is tried
	// upstream: once more after a connection error or a 502, 503 or 504,
	// on a backup if there is one.
	DefaultAttempts = 2
	// MaxAttempts bounds Upstream.Attempts.
	MaxAttempts = 10
	// DefaultRetryBackoff is the wait before trying the same server
	// again, doubled at each further try.
	DefaultRetryBackoff = 100 * time.Millisecond
	// DefaultFailTimeout is how long a failed server is skipped while
	// another can answer (nginx's fail_timeout); then one request probes
	// it.
	DefaultFailTimeout = 10 * time.Second
	// DefaultMaxBackground bounds the background revalidations
	// (stale-while-revalidate) in progress at once.
	DefaultMaxBackground = 16
	// DefaultMaxRefreshed bounds the refreshed entries (304s) remembered
	// in memory.
	DefaultMaxRefreshed = 1 << 16
)

// An Upstream is an HTTP origin the edge caches for the request paths
// under Prefix.
type Upstream struct {
	// Prefix is the request path prefix, starting and ending with '/'
	// ("/" for everything). A request for Prefix+rest is fetched from
	// URL+rest; the longest matching prefix wins.
	Prefix string
	// URL is the origin's base URL, http or https, e.g.
	// "http://127.0.0.1:8080/media/".
	URL string
	// Backups are the base URLs of servers holding the same content,
	// asked in order when the primary (URL) fails: each server has its
	// own health, a failed one is skipped for FailTimeout while another
	// answers, then one request probes it, and traffic returns to the
	// primary once it answers. What they answer is stored under URL's
	// keys.
	Backups []string

	// The upstream's exchanges; zero fields take Options' values.

	// ConnectTimeout bounds dialing (and the TLS handshake).
	ConnectTimeout time.Duration
	// HeaderTimeout bounds the wait for the response header once the
	// request is sent: the first byte.
	HeaderTimeout time.Duration
	// FetchTimeout bounds one exchange, body included.
	FetchTimeout time.Duration
	// IdleTimeout is how long an idle connection is kept for reuse.
	IdleTimeout time.Duration
	// MaxIdleConns is the idle connections kept per server.
	MaxIdleConns int
	// Attempts is how many times a GET or HEAD without a body is tried
	// when the upstream does not answer, or (with backups, on another
	// server) answers 502, 503 or 504; 1: never retried. At most
	// MaxAttempts.
	Attempts int
	// RetryBackoff is the wait before trying the same server again,
	// doubled at each try; no wait before trying another server.
	RetryBackoff time.Duration
	// FailTimeout is how long a failed server is skipped while another
	// can answer.
	FailTimeout time.Duration
}

// Options configure a Handler. Zero fields take the defaults of
// EnsureDefaults.
type Options struct {
	// Upstreams are the origins, by path prefix; at least one.
	Upstreams []Upstream
	// Cache holds the caching limits (max object size, heuristics,
	// Set-Cookie policy) of the httpcache policy.
	Cache httpcache.Options
	// SliceSize is the size in bytes of the aligned slices large objects
	// are fetched and stored in (nginx slice module). Default
	// DefaultSliceSize.
	SliceSize int64
	// MaxWhole is the largest full (200) response stored as one object,
	// in bytes, when the upstream ignores Range. Default DefaultMaxWhole.
	MaxWhole int64
	// FillMemory bounds the bytes of upstream bodies held in Go's heap at
	// once: the records being read from the upstream and the answers
	// streamed from them as they arrive. A body that finds no room waits
	// (its bytes left in the upstream's socket) at most half of
	// FetchTimeout, or until its load's context ends, then is answered 503: an overloaded node answers later rather
	// than running out of memory. A body larger than the bound takes all
	// of it. Default DefaultFillMemory; negative: no bound.
	FillMemory int64
	// Transport carries the upstream requests. Nil: an http.Transport
	// with the timeouts and idle connections below and no transparent
	// decompression.
	Transport http.RoundTripper
	// ConnectTimeout bounds dialing an upstream. Default 5 s.
	ConnectTimeout time.Duration
	// HeaderTimeout bounds the wait for an upstream response header.
	// Default 15 s.
	HeaderTimeout time.Duration
	// FetchTimeout bounds one upstream exchange, body included. Default
	// 30 s. A miss's fetch is also bounded by the engine's OriginTimeout.
	FetchTimeout time.Duration
	// MaxIdleConns is the idle connections kept per upstream host.
	// Default (New): the engine's loads at once plus MaxBackground, the
	// most upstream exchanges the cache path runs at once, so that a
	// burst of misses does not close connections the next burst dials
	// again (one round trip each to a WAN origin); DefaultMaxIdleConns
	// without an engine.
	MaxIdleConns int
	// IdleTimeout, Attempts, RetryBackoff and FailTimeout are the
	// defaults of the Upstream fields of the same names:
	// DefaultIdleTimeout, DefaultAttempts, DefaultRetryBackoff and
	// DefaultFailTimeout.
	IdleTimeout  time.Duration
	Attempts     int
	RetryBackoff time.Duration
	FailTimeout  time.Duration
	// MaxBackground bounds the background revalidations in progress;
	// one more stale hit while they are all busy is served stale without
	// revalidating. Default 16.
	MaxBackground int
	// MaxRelays bounds the requests relayed upstream at once because
	// their device shed the read of their flash copy (relay): one more
	// while they are all busy is read from its copy past the limit
	// (engine.FindLastResort), or loaded as a miss if that fails, so
	// that an overloaded flash device does not become an overloaded
	// origin. Default (New): the engine's capacity-tier reads at once
	// (engine.Options.MaxLoads), the upstream exchanges its misses may
	// run; negative: no bound.
	MaxRelays int
	// MaxRefreshed bounds the entries refreshed by 304s kept in memory
	// (the stored copy keeps its first metadata; after a restart it
	// revalidates again). Default 65536.
	MaxRefreshed int
	// TagPurgeFile is the file the tag purges are recorded in, so that
	// they outlive a restart (tags.go); empty: in memory only.
	TagPurgeFile string
	// LogInterval is the least time between two warnings about one
	// upstream server in the log: the failures in between are counted
	// in the next one. Default DefaultLogInterval.
	LogInterval time.Duration
	// Now is the clock the caching decisions read. Default time.Now.
	Now func() time.Time
	// Logger receives the edge's messages. Default slog.Default().
	Logger *slog.Logger

	// Cache rules: Cache above is the default policy's httpcache options;
	// Query and QueryParams its cache key's query rule (QueryAll: the
	// whole query string counts); Rules override it for the paths they
	// match, first match first (SetRules replaces them while serving).
	Query       QueryKey
	QueryParams []string
	Rules       []Rule
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.SliceSize == 0 {
		o.SliceSize = DefaultSliceSize
	}
	if o.MaxWhole == 0 {
		o.MaxWhole = DefaultMaxWhole
	}
	if o.FillMemory == 0 {
		o.FillMemory = DefaultFillMemory
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.HeaderTimeout == 0 {
		o.HeaderTimeout = DefaultHeaderTimeout
	}
	if o.FetchTimeout == 0 {
		o.FetchTimeout = DefaultFetchTimeout
	}
	if o.MaxIdleConns == 0 {
		o.MaxIdleConns = DefaultMaxIdleConns
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Attempts == 0 {
		o.Attempts = DefaultAttempts
	}
	if o.RetryBackoff == 0 {
		o.RetryBackoff = DefaultRetryBackoff
	}
	if o.FailTimeout == 0 {
		o.FailTimeout = DefaultFailTimeout
	}
	if o.MaxBackground == 0 {
		o.MaxBackground = DefaultMaxBackground
	}
	if o.MaxRefreshed == 0 {
		o.MaxRefreshed = DefaultMaxRefreshed
	}
	if o.LogInterval == 0 {
		o.LogInterval = DefaultLogInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// idleConnsFor is the default MaxIdleConns of an edge over an engine that
// runs loads capacity reads at once: those, plus the background
// revalidations (background, or DefaultMaxBackground when 0).
func idleConnsFor(loads, background int) int {
	if background == 0 {
		background = DefaultMaxBackground
	}
	return loads + background
}

// A route is a parsed Upstream.
type route struct {
	prefix  string
	servers []*server // the origin servers; the first is the primary
	key     string    // tier key directory, from the primary's URL
	set     Upstream  // the settings, every zero field filled
}

// settings returns u with its zero settings taken from o, or an error
// naming the first that is out of range.
func (o *Options) settings(u Upstream) (Upstream, error) {
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"connect_timeout", &u.ConnectTimeout, o.ConnectTimeout}, {"header_timeout", &u.HeaderTimeout, o.HeaderTimeout},
		{"fetch_timeout", &u.FetchTimeout, o.FetchTimeout}, {"idle_timeout", &u.IdleTimeout, o.IdleTimeout},
		{"retry_backoff", &u.RetryBackoff, o.RetryBackoff}, {"fail_timeout", &u.FailTimeout, o.FailTimeout}} {
		if *d.v < 0 {
			return u, fmt.Errorf("edge: upstream %s: %s %v is negative", u.Prefix, d.name, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	switch {
	case u.MaxIdleConns < 0:
		return u, fmt.Errorf("edge: upstream %s: max_idle_conns %d is negative", u.Prefix, u.MaxIdleConns)
	case u.Attempts < 0 || u.Attempts > MaxAttempts:
		return u, fmt.Errorf("edge: upstream %s: attempts %d is not in [1, %d]", u.Prefix, u.Attempts, MaxAttempts)
	}
	if u.MaxIdleConns == 0 {
		u.MaxIdleConns = o.MaxIdleConns
	}
	if u.Attempts == 0 {
		u.Attempts = o.Attempts
	}
	return u, nil
}

// parseUpstream checks u and returns its route, its settings filled from
// o. Its servers have no client yet (newClients).
func (o *Options) parseUpstream(u Upstream) (route, error) {
	u, err := o.settings(u)
	if err != nil {
		return route{}, err
	}
	p := u.Prefix
	if !strings.HasPrefix(p, "/") {
		return route{}, fmt.Errorf("edge: upstream prefix %q does not start with '/'", p)
	}
	if strings.ContainsAny(p, "{} \t?#") {
		return route{}, fmt.Errorf("edge: upstream prefix %q has a character a route cannot hold ({, }, space, ?, #)", p)
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	base, err := parseBase(u.URL)
	if err != nil {
		return route{}, fmt.Errorf("edge: upstream %s: url: %w", u.Prefix, err)
	}
	rt := route{prefix: p, servers: []*server{{base: base, name: u.URL}}, key: upstreamDir(p, base.String()), set: u}
	for _, b := range u.Backups {
		bu, err := parseBase(b)
		if err != nil {
			return route{}, fmt.Errorf("edge: upstream %s: backup: %w", u.Prefix, err)
		}
		rt.servers = append(rt.servers, &server{base: bu, name: b})
	}
	return rt, nil
}

// parseBase checks an upstream server's base URL and returns it with a
// path ending in '/'.
func parseBase(s string) (*url.URL, error) {
	base, err := url.Parse(s)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("upstream URL %q is not an absolute http(s) URL", s)
	}
	if base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("upstream URL %q has a query or fragment", s)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
		base.RawPath = ""
	}
	return base, nil
}
