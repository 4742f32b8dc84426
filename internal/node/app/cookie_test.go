package app

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// An origin that answers a cacheable segment with a session cookie of its
// own for each request: under the default [edge] set_cookie, the client
// whose request fetched it gets its cookie and no later client ever does;
// under "skip" the answer is not stored; under "store" (the RFC's, chosen
// explicitly) the hit replays it, which is what the default prevents.
func TestEdgeNeverReplaysCookies(t *testing.T) {
	for _, tc := range []struct {
		policy       string
		hit, replays bool
	}{{"", true, false}, {"strip", true, false}, {"skip", false, false}, {"store", true, true}} {
		t.Run("policy="+tc.policy, func(t *testing.T) {
			var n atomic.Int64
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Cache-Control", "max-age=300")
				w.Header().Add("Set-Cookie", fmt.Sprintf("session=client-%d; Path=/", n.Add(1)))
				w.Write([]byte("segment bytes"))
			}))
			t.Cleanup(up.Close)
			cfg := testConfig(t)
			cfg.Upstreams = []UpstreamConfig{{Prefix: "/", URL: up.URL + "/"}}
			if tc.policy != "" {
				cfg.Edge.SetCookie = tc.policy
			}
			_, base := serveNode(t, cfg)
			const path = "/media/show/seg-1.m4s"
			resp, body := httpapitest.Do(t, "GET", base+path, nil)
			if resp.StatusCode != 200 || string(body) != "segment bytes" || resp.Header.Get("Set-Cookie") != "session=client-1; Path=/" {
				t.Fatalf("first client: %d %q, Set-Cookie %q", resp.StatusCode, body, resp.Header.Values("Set-Cookie"))
			}
			for i := 2; i <= 3; i++ {
				resp, body = httpapitest.Do(t, "GET", base+path, nil)
				cookies := strings.Join(resp.Header.Values("Set-Cookie"), "; ")
				if resp.StatusCode != 200 || string(body) != "segment bytes" {
					t.Fatalf("client %d: %d %q", i, resp.StatusCode, body)
				}
				if hit := resp.Header.Get("X-Strata-Cache") == "HIT"; hit != tc.hit {
					t.Errorf("client %d: X-Strata-Cache %q, want a hit: %v", i, resp.Header.Get("X-Strata-Cache"), tc.hit)
				}
				if strings.Contains(cookies, "client-1") != tc.replays {
					t.Errorf("client %d got Set-Cookie %q: the first client's cookie replayed: %v, want %v", i, cookies, !tc.replays, tc.replays)
				}
			}
		})
	}
}

// A set_cookie value that names no policy is refused with the key's name.
func TestEdgeSetCookieRefused(t *testing.T) {
	cfg := testConfig(t)
	cfg.Edge.SetCookie = "keep"
	err := cfg.Resolve()
	if err == nil || !strings.Contains(err.Error(), "edge.set_cookie") {
		t.Fatalf("Resolve: %v, want an error naming edge.set_cookie", err)
	}
}
