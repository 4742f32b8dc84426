package app

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/signedurl"
)

// A signed URL whose path is not clean still opens: the redirect to the
// clean path keeps the signature (the router's own redirect, past the
// guard, dropped it and the link broke); an unsigned one is still 403,
// not redirected.
func TestSignedURLNotCleanRedirects(t *testing.T) {
	key := SignedURLKey{ID: "k", Secret: "0123456789abcdef01"}
	p, err := newSignedPolicy(SignedURLsConfig{Prefixes: []string{"/files/"}, Keys: []SignedURLKey{key}})
	if err != nil {
		t.Fatal(err)
	}
	g := &signedGuard{log: quiet, now: time.Now}
	g.policy.Store(p)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /files/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("file " + r.PathValue("id") + " query " + r.URL.RawQuery))
	})
	ts := httptest.NewServer(g.wrap(mux))
	t.Cleanup(ts.Close)
	sign := func(path string) string {
		u, _ := url.Parse(ts.URL + path)
		return signedurl.SignURL(signedurl.Key{ID: key.ID, Secret: key.Secret}, u, "/files/", time.Now().Add(time.Hour)).String()
	}
	for _, path := range []string{"/files//f.bin?a=1", "/files/x/../f.bin?a=1", "/files/./f.bin?a=1"} {
		resp, body := httpapitest.Do(t, "GET", sign(path), nil)
		r0, _ := httpapitest.DoWith(t, httpapitest.Wire, "GET", sign(path), nil)
		t.Log(sign(path), r0.StatusCode, r0.Header.Get("Location"))
		if resp.StatusCode != 200 || string(body) != "file f.bin query a=1" {
			t.Errorf("%s signed: %d %q, want 200 from the clean path, the signature stripped", path, resp.StatusCode, body)
		}
		resp, _ = httpapitest.DoWith(t, httpapitest.Wire, "GET", ts.URL+path, nil)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s unsigned: %d, want 403", path, resp.StatusCode)
		}
	}
}
