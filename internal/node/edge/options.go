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
	// MaxBackground bounds the background revalidations in progress;
	// one more stale hit while they are all busy is served stale without
	// revalidating. Default 16.
	MaxBackground int
	// MaxRefreshed bounds the entries refreshed by 304s kept in memory
	// (the stored copy keeps its first metadata; after a restart it
	// revalidates again). Default 65536.
	MaxRefreshed int
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
	if o.MaxBackground == 0 {
		o.MaxBackground = DefaultMaxBackground
	}
	if o.MaxRefreshed == 0 {
		o.MaxRefreshed = DefaultMaxRefreshed
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
	prefix string
	base   *url.URL // path ends in '/'
	key    string   // tier key directory
}

// parseUpstream checks u and returns its route.
func parseUpstream(u Upstream) (route, error) {
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
	base, err := url.Parse(u.URL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return route{}, fmt.Errorf("edge: upstream URL %q is not an absolute http(s) URL", u.URL)
	}
	if base.RawQuery != "" || base.Fragment != "" {
		return route{}, fmt.Errorf("edge: upstream URL %q has a query or fragment", u.URL)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
		base.RawPath = ""
	}
	return route{prefix: p, base: base, key: upstreamDir(p, base.String())}, nil
}
