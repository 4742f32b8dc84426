package httpcache

import (
	"fmt"
	"net/http"
	"time"
)

// Defaults of Options, applied by EnsureDefaults.
const (
	// DefaultMaxObjectSize is 4 GiB, a feature-length title at high bit
	// rate as one file; the edge fetches large objects in slices, so the
	// size costs no RAM at once (the limit is the operator's, RFC 9111 §3).
	DefaultMaxObjectSize = 4 << 30
	// DefaultHeuristicFraction is the fraction of Date - Last-Modified
	// taken as a heuristic lifetime (RFC 9111 §4.2.2: "A typical setting
	// of this fraction might be 10%").
	DefaultHeuristicFraction = 0.1
	// DefaultHeuristicMax caps a heuristic lifetime at a day, the point past
	// which RFC 7234 §5.5.4 had caches warn (Warning 113); RFC 9111 dropped
	// the warning but not the reason to be modest.
	DefaultHeuristicMax = 24 * time.Hour
	// DefaultKeepOnError is how long past its freshness a stored response
	// still answers in place of an upstream that fails, times out or
	// answers 5xx, when the origin said nothing (see Options.KeepOnError):
	// a day. Traffic Server's proxy.config.http.cache.max_stale_age
	// allows a week; nginx (proxy_cache_use_stale) and Varnish (keep)
	// have no window of their own and serve what they still hold, which
	// their inactive time (nginx, 10 minutes) or keep (Varnish, 0) bound.
	// A day outlasts any origin outage an operator is paged for and
	// keeps a night without the origin invisible to viewers, while a
	// title withdrawn at the origin stops being served after a day even
	// if nobody purges it.
	DefaultKeepOnError = 24 * time.Hour
)

// SetCookiePolicy says what a Policy does with a storable response that
// carries Set-Cookie (RFC 9111 §7.3 leaves it to the cache's operator).
// Whatever the policy, a cookie never reaches a client other than the one
// whose request brought it, unless the operator chose SetCookieStore.
type SetCookiePolicy int

const (
	// SetCookieStrip, the zero value and the default, stores the response
	// without its Set-Cookie (and Set-Cookie2) fields, so one client's
	// cookie is never handed to another (what Squid does on hits); the
	// client whose request caused the fetch still gets its cookie. A media
	// origin's cookies are load-balancer stickiness or analytics, set on
	// segments that must stay cacheable: skipping them would turn every
	// such segment into a miss.
	SetCookieStrip SetCookiePolicy = iota
	// SetCookieSkip does not store the response unless it is marked public
	// or carries s-maxage (the nginx proxy_cache and Varnish default);
	// when it is stored, its cookies are stripped as under SetCookieStrip.
	// For an origin that personalises bodies it also sets cookies on.
	SetCookieSkip
	// SetCookieStore stores the response with its Set-Cookie and replays it
	// on hits, as RFC 9111 §7.3 describes ("the Set-Cookie response header
	// field does not inhibit caching"): the origin controls sharing with
	// Cache-Control, and conformance suites check exactly this. It hands
	// one client's cookie to every client that hits the copy: an explicit
	// choice only.
	SetCookieStore
)

// setCookieNames are the policies' names in configuration.
var setCookieNames = [...]string{SetCookieStrip: "strip", SetCookieSkip: "skip", SetCookieStore: "store"}

// String returns the policy's configuration name.
func (p SetCookiePolicy) String() string {
	if p >= 0 && int(p) < len(setCookieNames) {
		return setCookieNames[p]
	}
	return fmt.Sprintf("SetCookiePolicy(%d)", int(p))
}

// ParseSetCookiePolicy reads a policy's configuration name: strip, skip or
// store.
func ParseSetCookiePolicy(s string) (SetCookiePolicy, error) {
	for i, n := range setCookieNames {
		if s == n {
			return SetCookiePolicy(i), nil
		}
	}
	return 0, fmt.Errorf("set-cookie policy %q: want strip, skip or store", s)
}

// Options configure a Policy: the limits RFC 9111 §3 and §4.2.2 leave to the
// cache. Zero fields take the defaults of EnsureDefaults.
type Options struct {
	// MaxObjectSize is the largest representation stored, in bytes: the
	// Content-Length of a full response, or the complete length of a 206. Zero means
	// DefaultMaxObjectSize; negative means no limit.
	MaxObjectSize int64
	// HeuristicFraction is the fraction of Date - Last-Modified used as the
	// lifetime of a heuristically cacheable response (RFC 9111 §4.2.2).
	// Zero means DefaultHeuristicFraction; negative disables heuristics.
	HeuristicFraction float64
	// HeuristicMax caps a heuristic lifetime. Zero means
	// DefaultHeuristicMax.
	HeuristicMax time.Duration
	// SetCookie is the policy for responses carrying Set-Cookie; the zero
	// value is SetCookieStrip (never replay a cookie to another client).
	SetCookie SetCookiePolicy
	// StorePartial lets 206 responses with a single byte range be stored
	// (RFC 9111 §3.3), for a driver that stores objects as range slices.
	// Without it a 206 is never stored.
	StorePartial bool
	// KeepOnError is how long past its freshness lifetime a stored
	// response may answer in place of a failed upstream (no answer, a
	// timeout, 500, 502, 503, 504) when neither the response nor the
	// request carries stale-if-error (RFC 5861 §4; RFC 9111 §4.2.4 lets a
	// disconnected cache serve stale). A response that forbids stale use
	// (must-revalidate, proxy-revalidate, s-maxage, no-cache) is never
	// kept; an origin's stale-if-error replaces this window. Zero means
	// DefaultKeepOnError; negative disables it (RFC 5861 alone).
	KeepOnError time.Duration

	// The operator's rules over the origin's freshness (RFC 9111 §4.2.1
	// leaves a cache free to be configured so; Varnish default_ttl, nginx
	// proxy_cache_valid, Traffic Server heuristic_min_lifetime). Zero
	// fields change nothing: the RFC's behaviour.

	// DefaultTTL, when positive, is the lifetime of a response without
	// explicit freshness (no max-age, s-maxage, Expires or Surrogate-Control
	// max-age) that may be cached heuristically: it replaces the
	// Last-Modified heuristic.
	DefaultTTL time.Duration
	// HeuristicMin is the least heuristic lifetime given to a response
	// that has a Last-Modified (RFC 9111 §4.2.2); at most HeuristicMax.
	HeuristicMin time.Duration
	// TTL, when positive, replaces every freshness lifetime, the origin's
	// explicit one included (nginx proxy_ignore_headers with
	// proxy_cache_valid).
	TTL time.Duration
	// MaxTTL, when positive, caps every freshness lifetime, the origin's
	// explicit one included.
	MaxTTL time.Duration
	// Immutable treats every stored response as if it carried
	// Cache-Control: immutable (RFC 8246): while fresh it is not
	// revalidated on a client's reload (request max-age=0); a client's
	// no-cache still is.
	Immutable bool
	// Grace, when positive, serves a stale response while it is
	// revalidated in the background for this long past its freshness,
	// when the origin sent no stale-while-revalidate (RFC 5861 §3 as if
	// the origin had; Varnish grace). A response that forbids stale use
	// (RFC 9111 §4.2.4) and a request with no-cache, max-age or min-fresh
	// are not graced.
	Grace time.Duration
}

// EnsureDefaults fills zero fields with their defaults (the RFC 9111 §4.2.2
// fraction among them) and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.MaxObjectSize == 0 {
		o.MaxObjectSize = DefaultMaxObjectSize
	}
	if o.HeuristicFraction == 0 {
		o.HeuristicFraction = DefaultHeuristicFraction
	}
	if o.HeuristicMax == 0 {
		o.HeuristicMax = DefaultHeuristicMax
	}
	if o.KeepOnError == 0 {
		o.KeepOnError = DefaultKeepOnError
	}
	return o
}

// A Policy makes the storage and reuse decisions of a shared cache (RFC 9111
// §3, §4) with one set of Options. It holds no state of its own: the entries are the
// driver's.
type Policy struct {
	opts Options
}

// NewPolicy returns a Policy with opts, defaults applied, for a shared cache
// (RFC 9111 §1).
func NewPolicy(opts Options) *Policy {
	return &Policy{opts: *opts.EnsureDefaults()}
}

// Options returns the options in effect, defaults applied (RFC 9111 §3,
// §4.2.2 limits).
func (p *Policy) Options() Options { return p.opts }

// A Request is what the decisions need of a client's request (RFC 9111 §4:
// method and header fields; the target URI is the driver's primary key).
type Request struct {
	Method string
	Header http.Header
}

// A Response is what the decisions need of an upstream response (RFC 9111
// §3): its status code and header fields.
type Response struct {
	Status int
	Header http.Header
}
