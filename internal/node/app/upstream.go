package app

import (
	"fmt"
	"net/url"
	"slices"

	"github.com/strata-media/strata/internal/node/edge"
)

// TagPurgeFile is the file of the data directory the edge records its
// purges by tag in, so that they outlive a restart.
const TagPurgeFile = "edge-tag-purges"

// UpstreamSettings are the keys of an [[upstream]] table that say how the
// edge talks to it: timeouts, retries and the idle connection pool.
// docs/operations.md justifies the defaults against nginx's, Varnish's
// and Traffic Server's.
type UpstreamSettings struct {
	// Backup are the base URLs of servers holding the same content as
	// the primary (URL), asked in order when it fails; traffic returns to
	// the primary once it answers again.
	Backup []string `toml:"backup"`
	// ConnectTimeout bounds dialing a server, TLS handshake included.
	ConnectTimeout Duration `toml:"connect_timeout"`
	// HeaderTimeout bounds the wait for the response header (the first
	// byte) once the request is sent.
	HeaderTimeout Duration `toml:"header_timeout"`
	// FetchTimeout bounds one exchange, body included.
	FetchTimeout Duration `toml:"fetch_timeout"`
	// IdleTimeout is how long an idle connection is kept for reuse.
	IdleTimeout Duration `toml:"idle_timeout"`
	// MaxIdleConns is the idle connections kept per server; 0: as many
	// as the edge runs upstream exchanges at once (the engine's loads
	// plus the background revalidations).
	MaxIdleConns int `toml:"max_idle_conns"`
	// Attempts is how many times a GET or HEAD is tried when the
	// upstream does not answer or answers 502, 503 or 504 (1: no retry).
	Attempts int `toml:"attempts"`
	// RetryBackoff is the wait before trying the same server again,
	// doubled at each try.
	RetryBackoff Duration `toml:"retry_backoff"`
	// FailTimeout is how long a failed server is skipped while another
	// answers; then one request probes it.
	FailTimeout Duration `toml:"fail_timeout"`
}

// DefaultUpstreamSettings are the settings of an [[upstream]] table that
// leaves them out: the edge's defaults.
func DefaultUpstreamSettings() UpstreamSettings {
	return UpstreamSettings{
		ConnectTimeout: Duration{edge.DefaultConnectTimeout}, HeaderTimeout: Duration{edge.DefaultHeaderTimeout},
		FetchTimeout: Duration{edge.DefaultFetchTimeout}, IdleTimeout: Duration{edge.DefaultIdleTimeout},
		Attempts: edge.DefaultAttempts, RetryBackoff: Duration{edge.DefaultRetryBackoff},
		FailTimeout: Duration{edge.DefaultFailTimeout},
	}
}

// upstreamKeyDocs are the comments of the [[upstream]] keys in the
// example configuration file.
var upstreamKeyDocs = map[string]string{
	"prefix":          "request path prefix, '/' first (\"/\" for every path no local route answers)",
	"url":             "the origin's base URL, http or https: a request for prefix+rest is fetched from url+rest",
	"backup":          "servers holding the same content, asked in order when the primary (url) fails; traffic returns to it once it answers",
	"fail_timeout":    "how long a failed server is skipped while another answers; then one request probes it",
	"connect_timeout": "bound on dialing a server, TLS handshake included",
	"header_timeout":  "bound on the wait for the response header (first byte) once the request is sent",
	"fetch_timeout":   "bound on one exchange, body included",
	"idle_timeout":    "how long an idle connection is kept for reuse (under the origin's keepalive timeout)",
	"max_idle_conns":  "idle connections kept per server; 0: as many as the edge runs exchanges at once",
	"attempts":        "tries of a GET or HEAD that gets no answer or a 502, 503 or 504 (1: no retry; at most 10)",
	"retry_backoff":   "wait before trying the same server again, doubled at each try",
}

// KeyDoc is the comment of an [[upstream]] key in the example file.
func (UpstreamConfig) KeyDoc(key string) string { return upstreamKeyDocs[key] }

// Example fills u as the example configuration file shows it.
func (u *UpstreamConfig) Example() {
	*u = UpstreamConfig{Prefix: "/", URL: "http://origin.example:8080/", UpstreamSettings: DefaultUpstreamSettings()}
	u.Backup = []string{"http://backup.example:8080/"}
}

// withDefaults returns s with its zero values set to the defaults.
func (s UpstreamSettings) withDefaults() UpstreamSettings {
	d := DefaultUpstreamSettings()
	for _, p := range []struct{ v, def *Duration }{{&s.ConnectTimeout, &d.ConnectTimeout}, {&s.HeaderTimeout, &d.HeaderTimeout},
		{&s.FetchTimeout, &d.FetchTimeout}, {&s.IdleTimeout, &d.IdleTimeout}, {&s.RetryBackoff, &d.RetryBackoff}, {&s.FailTimeout, &d.FailTimeout}} {
		if p.v.Duration == 0 {
			*p.v = *p.def
		}
	}
	if s.Attempts == 0 {
		s.Attempts = d.Attempts
	}
	return s
}

// checkUpstreams checks the [[upstream]] tables, naming the key of the
// first bad value, and fills their default settings.
func (c *Config) checkUpstreams() error {
	for i := range c.Upstreams {
		u := &c.Upstreams[i]
		where := fmt.Sprintf("[[upstream]] prefix %q", u.Prefix)
		if err := checkUpstreamURL(u.URL); err != nil {
			return fmt.Errorf("%w: %s: url: %v", ErrConfig, where, err)
		}
		for _, b := range u.Backup {
			if err := checkUpstreamURL(b); err != nil {
				return fmt.Errorf("%w: %s: backup: %v", ErrConfig, where, err)
			}
		}
		u.UpstreamSettings = u.UpstreamSettings.withDefaults()
	}
	if err := edge.CheckUpstreamList(edgeUpstreams(c.Upstreams)); err != nil {
		return fmt.Errorf("%w: [[upstream]]: %v", ErrConfig, err)
	}
	return nil
}

// checkUpstreamURL checks an upstream server's URL: absolute http(s),
// without query or fragment.
func checkUpstreamURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("upstream URL %q is not an absolute http(s) URL", s)
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%q has a query or fragment", s)
	}
	return nil
}

// edgeUpstreams are the edge's upstreams of the [[upstream]] tables.
func edgeUpstreams(ups []UpstreamConfig) []edge.Upstream {
	out := make([]edge.Upstream, len(ups))
	for i, u := range ups {
		s := u.UpstreamSettings
		out[i] = edge.Upstream{Prefix: u.Prefix, URL: u.URL,
			ConnectTimeout: s.ConnectTimeout.Duration, HeaderTimeout: s.HeaderTimeout.Duration,
			FetchTimeout: s.FetchTimeout.Duration, IdleTimeout: s.IdleTimeout.Duration, MaxIdleConns: s.MaxIdleConns,
			Attempts: s.Attempts, RetryBackoff: s.RetryBackoff.Duration, FailTimeout: s.FailTimeout.Duration,
			Backups: s.Backup}
	}
	return out
}

// withUpstreamDefaults returns a copy of ups with their default settings
// filled: a table that leaves a setting out and one that sets its default
// are the same.
func withUpstreamDefaults(ups []UpstreamConfig) []UpstreamConfig {
	out := slices.Clone(ups)
	for i := range out {
		out[i].UpstreamSettings = out[i].UpstreamSettings.withDefaults()
	}
	return out
}
