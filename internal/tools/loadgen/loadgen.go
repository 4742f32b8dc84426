// Package loadgen is Strata's open-loop HTTP load generator: the workload
// generator of FlashStream §5.1 aimed at a live server, measuring segment
// deadline misses, latency and throughput (strata bench).
//
// At a fixed request rate it picks a title by a Zipf-like law over the
// catalog's titles in the order GET /videos lists them, a rendition and a
// segment uniformly, and issues the request on schedule whatever earlier
// requests are doing. A request misses its deadline when its response body is
// not completely read within the title's segment play-out time; errors and
// non-2xx responses are misses too.
package loadgen

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"time"

	"github.com/strata-media/strata/internal/workload"
)

// Errors returned by Run and FindMax; the returned errors wrap them.
var (
	// ErrConfig reports an invalid Config or SearchOptions.
	ErrConfig = errors.New("loadgen: invalid config")
	// ErrBadURL reports a server URL that is not an absolute http(s) URL.
	ErrBadURL = errors.New("loadgen: bad server URL")
	// ErrUnreachable reports a server that could not be reached.
	ErrUnreachable = errors.New("loadgen: server unreachable")
	// ErrCatalog reports a catalog that could not be read or parsed.
	ErrCatalog = errors.New("loadgen: bad catalog")
	// ErrEmptyCatalog reports a catalog without any segment to request.
	ErrEmptyCatalog = errors.New("loadgen: catalog has no segments")
)

// Defaults for Config's zero fields.
const (
	// DefaultRate is the request rate in requests per second.
	DefaultRate = 20
	// DefaultDuration is how long a run measures.
	DefaultDuration = 30 * time.Second
	// DefaultTheta is FlashStream §5.1's Zipf parameter, read as theta
	// (s = 1 - theta = 0.8) per docs/design.md's popularity convention.
	DefaultTheta = 0.2
	// DefaultMaxInflight bounds the requests in flight at once.
	DefaultMaxInflight = 2048
	// DefaultSeed seeds the request sequence, so runs repeat.
	DefaultSeed = 1
	// DefaultDeadline is the deadline of titles whose catalog entry has no
	// segment_duration_s: FlashStream's 10 s segments.
	DefaultDeadline = 10 * time.Second
	// TimeoutFactor sets the default per-request timeout: this many times
	// the request's deadline.
	TimeoutFactor = 4
	// DefaultProgressInterval is how often Config.Progress is called.
	DefaultProgressInterval = time.Second
)

// Config describes one run. The zero value of every field but URL means its
// default; see EnsureDefaults.
type Config struct {
	// URL is the server's base URL, e.g. "http://127.0.0.1:8080". The
	// catalog is GET URL/videos, segments URL/videos/{title}/{rendition}/{n}.m4s.
	URL string
	// Catalog, if set, is the URL of the catalog document (GET /videos's)
	// instead of URL/videos: an edge on "/" answers /videos itself (its
	// own titles, none), while it serves its upstream's titles'
	// segments; their catalog is the upstream's, e.g.
	// "http://origin:8080/videos".
	Catalog string
	// Rate is the request rate in requests per second, issued open-loop.
	// Default 20.
	Rate float64
	// Duration is how long requests are issued and measured, after
	// Warmup. Default 30 s.
	Duration time.Duration
	// Warmup is how long requests are issued before measuring starts; they
	// are sent at Rate but not counted. Default 0.
	Warmup time.Duration
	// Popularity is the law titles are drawn by. Default Theta(0.2), which
	// is the exponent s = 0.8.
	Popularity Law
	// Seed seeds the sequence of titles, renditions and segments. Default 1.
	Seed uint64
	// MaxInflight bounds requests in flight. A request due while the bound
	// is reached is not sent: it counts as an error and a miss. Default 2048.
	MaxInflight int
	// Timeout abandons one request (an error and a miss). Default
	// TimeoutFactor times its deadline.
	Timeout time.Duration
	// Client sends the requests. Default: a keep-alive client whose
	// Transport is sized for MaxInflight.
	Client *http.Client
	// Progress, if set, is called about every ProgressInterval while the
	// run is going, from a goroutine Run owns.
	Progress func(Progress)
	// ProgressInterval is how often Progress is called. Default 1 s.
	ProgressInterval time.Duration
	// ReleaseEvery, if positive, shifts popularity during the run: every
	// ReleaseEvery after the first request (warmup included), a new title
	// is released: the catalog's last title not yet released becomes the
	// most popular, every other title moving one rank down. Default 0:
	// popularity does not change.
	ReleaseEvery time.Duration
	// Viewers, if positive, draws the requests from this many concurrent
	// viewers that each watch a title from its first segment to its last
	// (a title by Popularity, a rendition uniformly), each request the
	// next segment of a viewer chosen at random; a viewer at its title's
	// end starts another. Default 0: every request is a title by
	// Popularity and a rendition and segment uniformly (FlashStream §5.1).
	Viewers int
}

// released is the number of titles released by due.
func (c *Config) released(due time.Duration) int {
	if c.ReleaseEvery <= 0 {
		return 0
	}
	return int(due / c.ReleaseEvery)
}

// Progress is a snapshot of a run in progress.
type Progress struct {
	// Elapsed is the time since the first request was due, warmup included.
	Elapsed time.Duration
	// Warmup is true while the run is still warming up.
	Warmup bool
	// Sent counts requests due so far, warmup included.
	Sent int64
	// Done counts requests finished so far, warmup included.
	Done int64
	// InFlight counts requests sent and not finished.
	InFlight int
	// Measured counts the measured requests finished so far (after the
	// warmup).
	Measured int
	// Misses counts measured misses so far.
	Misses int
}

// EnsureDefaults fills the zero fields of c with their defaults.
func (c *Config) EnsureDefaults() {
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.Popularity.IsZero() {
		c.Popularity = Theta(DefaultTheta)
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.MaxInflight == 0 {
		c.MaxInflight = DefaultMaxInflight
	}
	if c.ProgressInterval == 0 {
		c.ProgressInterval = DefaultProgressInterval
	}
}

// validate checks a defaulted Config.
func (c *Config) validate() error {
	switch {
	case !(c.Rate > 0) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("%w: rate %v must be > 0 requests/s", ErrConfig, c.Rate)
	case c.Duration < 0 || c.Warmup < 0 || c.Timeout < 0 || c.ReleaseEvery < 0:
		return fmt.Errorf("%w: negative duration, warmup or timeout", ErrConfig)
	case c.Viewers < 0:
		return fmt.Errorf("%w: viewers %d must not be negative", ErrConfig, c.Viewers)
	case c.MaxInflight < 0:
		return fmt.Errorf("%w: max in flight %d must be > 0", ErrConfig, c.MaxInflight)
	case c.ProgressInterval < 0:
		return fmt.Errorf("%w: negative progress interval", ErrConfig)
	}
	if err := c.Popularity.check(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if _, err := baseURL(c.URL); err != nil {
		return err
	}
	if c.Catalog != "" {
		if u, err := url.Parse(c.Catalog); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w: catalog %q is not an http:// or https:// URL with a host", ErrConfig, c.Catalog)
		}
	}
	return nil
}

// catalogURL is where the catalog is read: Catalog, or base/videos.
func (c *Config) catalogURL(base string) string {
	if c.Catalog != "" {
		return c.Catalog
	}
	return base + "/videos"
}

// baseURL checks raw and returns it without a trailing slash.
func baseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: %q is not an http:// or https:// URL with a host", ErrBadURL, raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%w: %q has a query or fragment", ErrBadURL, raw)
	}
	u.Path = trimSlash(u.Path)
	u.RawPath = trimSlash(u.RawPath)
	return u.String(), nil
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// A Law is a Zipf-like popularity law over titles in catalog order:
// p(i) proportional to 1/i^s for the i-th title. docs/design.md's popularity
// convention: a law is always given either by its exponent s or by theta
// with s = 1 - theta, never by an unnamed "Zipf parameter".
type Law struct {
	set     bool
	byTheta bool
	param   float64
}

// Theta is the law with exponent s = 1 - theta, theta in [0, 1]
// (FlashStream §5.1's 0.2 read this way is s = 0.8).
func Theta(theta float64) Law { return Law{set: true, byTheta: true, param: theta} }

// Exponent is the law with exponent s >= 0 (the VoD paper's 0.271).
func Exponent(s float64) Law { return Law{set: true, param: s} }

// IsZero reports whether l is the zero Law, which means the default.
func (l Law) IsZero() bool { return !l.set }

// S is the law's exponent.
func (l Law) S() float64 {
	if l.byTheta {
		return 1 - l.param
	}
	return l.param
}

// String names the law, e.g. "theta=0.2 (s=0.8)" or "s=0.271".
func (l Law) String() string {
	if l.byTheta {
		return fmt.Sprintf("theta=%g (s=%g)", l.param, l.S())
	}
	return fmt.Sprintf("s=%g", l.param)
}

// sampler returns the law over n titles.
func (l Law) sampler(n int) (*workload.Zipf, error) {
	if l.byTheta {
		return workload.NewZipfTheta(n, l.param)
	}
	return workload.NewZipf(n, l.param)
}

// check validates the law's parameter.
func (l Law) check() error {
	_, err := l.sampler(1)
	return err
}
