package app

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/signedurl"
)

// SignedURLsConfig requires signed URLs (package signedurl) for reads
// under some path prefixes: the [signed_urls] table.
type SignedURLsConfig struct {
	// Prefixes are the request path prefixes ('/' first) whose GET and
	// HEAD answer 403 without a valid signature; empty: none. A prefix
	// is matched as a string: end it with '/' to guard a directory.
	Prefixes []string `toml:"prefixes"`
	// Keys are the active signing keys (the [[signed_urls.keys]]
	// tables): a URL signed by any of them is accepted, so that keys
	// rotate by adding the new one first, reloading, and removing the old
	// one once its URLs have expired. strata sign signs with the first.
	Keys []SignedURLKey `toml:"keys"`
}

// SignedURLKey is one signing key.
type SignedURLKey struct {
	// ID names the key in the URL's kid parameter.
	ID string `toml:"id"`
	// Secret is the HMAC key, at least 16 bytes; keep the config file
	// private (0600).
	Secret string `toml:"secret"`
}

// SigningKeys returns the keys as signedurl keys, checked.
func (c *SignedURLsConfig) SigningKeys() ([]signedurl.Key, error) {
	keys := make([]signedurl.Key, len(c.Keys))
	for i, k := range c.Keys {
		keys[i] = signedurl.Key{ID: k.ID, Secret: k.Secret}
	}
	if _, err := signedurl.NewVerifier(keys); err != nil {
		return nil, fmt.Errorf("%w: [signed_urls] %v", ErrConfig, err)
	}
	return keys, nil
}

// signedPolicy is the [signed_urls] table in force.
type signedPolicy struct {
	prefixes []string
	v        *signedurl.Verifier
}

// newSignedPolicy checks c and returns its policy.
func newSignedPolicy(c SignedURLsConfig) (*signedPolicy, error) {
	keys, err := c.SigningKeys()
	if err != nil {
		return nil, err
	}
	for _, p := range c.Prefixes {
		if !strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("%w: [signed_urls] prefix %q does not start with '/'", ErrConfig, p)
		}
	}
	if len(c.Prefixes) > 0 && len(keys) == 0 {
		return nil, fmt.Errorf("%w: [signed_urls] prefixes need at least one key ([[signed_urls.keys]])", ErrConfig)
	}
	v, _ := signedurl.NewVerifier(keys) // checked by SigningKeys
	return &signedPolicy{prefixes: c.Prefixes, v: v}, nil
}

// guards reports whether a read of the (decoded) path needs a signature.
func (p *signedPolicy) guards(path string) bool {
	if len(p.prefixes) == 0 {
		return false
	}
	clean := signedurl.Clean(path)
	for _, pre := range p.prefixes {
		if strings.HasPrefix(clean, pre) {
			return true
		}
	}
	return false
}

// signedGuard refuses unsigned reads of the guarded prefixes; its policy
// changes on reload.
type signedGuard struct {
	log    *slog.Logger
	now    func() time.Time
	policy atomic.Pointer[signedPolicy]
}

// guarded reports whether r needs a signature: wrap would check it.
func (g *signedGuard) guarded(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && g.policy.Load().guards(r.URL.Path)
}

// wrap checks the signature of the GETs and HEADs of guarded paths: a
// refusal answers 403 and says why in the log only; an accepted request
// goes on without the signature parameters, so that what serves it (and
// the edge's cache keys) sees the plain URL. An accepted request whose
// path is not clean ("//", "." or ".." segments) is redirected to the
// clean path here, with its whole query: the router would redirect it
// too, but past this guard, without the signature, and the link would
// break. The signature was checked on the clean path (signedurl.Clean),
// so the redirected request is accepted for the same reason.
func (g *signedGuard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := g.policy.Load()
		if (r.Method != http.MethodGet && r.Method != http.MethodHead) || !p.guards(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		if err := p.v.Check(r.URL.Path, r.URL.Query(), g.now()); err != nil {
			g.log.Info("signed URL refused", "path", httpapi.Clip(r.URL.Path, 256), "remote", r.RemoteAddr, "reason", err)
			httpapi.Error(w, http.StatusForbidden, "this path needs a valid signed URL")
			return
		}
		if esc := r.URL.EscapedPath(); signedurl.Clean(esc) != esc {
			// As http.ServeMux's redirect to the clean path, query kept.
			u := url.URL{Path: signedurl.Clean(r.URL.Path), RawPath: signedurl.Clean(esc), RawQuery: r.URL.RawQuery}
			http.Redirect(w, r, u.String(), http.StatusTemporaryRedirect)
			return
		}
		r2 := *r
		u := *r.URL
		u.RawQuery = signedurl.Strip(u.RawQuery)
		r2.URL = &u
		next.ServeHTTP(w, &r2)
	})
}
