package edge

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// failFirst answers path with status (0: drops the connection) for the
// first n requests, then with body.
func failFirst(f *fixture, path string, n int32, status int, body string) *atomic.Int32 {
	var seen atomic.Int32
	f.up.handle(path, func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1) <= n {
			if status == 0 {
				if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
					c.Close()
				}
				return
			}
			w.WriteHeader(status)
			return
		}
		w.Write([]byte(body))
	}, "Cache-Control", "max-age=60")
	return &seen
}

// A GET that meets a dropped connection is tried again, up to Attempts
// times; a 502, 503 or 504 from the only server is relayed as it came
// (the server's answer: asking it again would add load to an origin that
// sheds it, and hide its Retry-After); another method is not retried.
func TestRetries(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.RetryBackoff = time.Millisecond })
	seen := failFirst(f, "/media/ra", 1, 0, "ok")
	f.want(f.get("/cdn/ra"), 200, CacheMiss, []byte("ok"))
	if seen.Load() != 2 {
		t.Errorf("a dropped connection: %d upstream requests, want 2", seen.Load())
	}
	if st := f.edge.Stats(); st.Retries != 1 {
		t.Errorf("%d retries, want 1", st.Retries)
	}
	for i, status := range []int{502, 503, 504} {
		p := "/media/r" + string(rune('b'+i))
		seen := failFirst(f, p, 1, status, "ok")
		if r := f.get("/cdn" + p[len("/media"):]); r.status != status || seen.Load() != 1 {
			t.Errorf("status %d: answered %d after %d upstream requests, want it relayed after 1", status, r.status, seen.Load())
		}
	}
	// Bounded: a dropped connection every time is tried Attempts times
	// (each of which Go's client may send twice when it reused an idle
	// connection).
	retries := f.edge.Stats().Retries
	seen = failFirst(f, "/media/down", 100, 0, "")
	if r := f.get("/cdn/down"); r.status != 502 {
		t.Errorf("always dropped: %d", r.status)
	}
	if n := f.edge.Stats().Retries - retries; n != DefaultAttempts-1 || seen.Load() < DefaultAttempts || seen.Load() > 2*DefaultAttempts {
		t.Errorf("always dropped: %d retries, %d upstream requests; want %d tries", n, seen.Load(), DefaultAttempts)
	}
	// A 500 is the origin's answer, not a failure to get one.
	seen = failFirst(f, "/media/err", 1, 500, "ok")
	if r := f.get("/cdn/err"); r.status != 500 || seen.Load() != 1 {
		t.Errorf("500: %d after %d upstream requests", r.status, seen.Load())
	}
	// A POST is forwarded once.
	seen = failFirst(f, "/media/post", 1, 503, "ok")
	resp, err := f.srv.Client().Post(f.srv.URL+"/cdn/post", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || seen.Load() != 1 {
		t.Errorf("POST: %d after %d upstream requests", resp.StatusCode, seen.Load())
	}
}

// Each upstream has its own settings: one tried once, with a short
// header timeout; the other with the handler's defaults.
func TestPerUpstreamSettings(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.RetryBackoff = time.Millisecond
		o.Upstreams = append(o.Upstreams, Upstream{Prefix: "/strict/", URL: o.Upstreams[0].URL,
			Attempts: 1, HeaderTimeout: 50 * time.Millisecond, IdleTimeout: 5 * time.Second, MaxIdleConns: 3})
	})
	seen := failFirst(f, "/media/x", 1, 503, "ok")
	if r := f.get("/strict/x"); r.status != 503 || seen.Load() != 1 {
		t.Errorf("attempts 1: %d after %d upstream requests", r.status, seen.Load())
	}
	f.want(f.get("/cdn/x"), 200, CacheMiss, []byte("ok"))
	f.up.put("/media/slow", []byte("late"), "Cache-Control", "max-age=60")
	gate := make(chan struct{})
	f.up.mu.Lock()
	f.up.gate = gate
	f.up.mu.Unlock()
	f.want(f.get("/strict/slow"), 504, CacheMiss, nil)
	time.AfterFunc(100*time.Millisecond, func() { close(gate) })
	f.want(f.get("/cdn/slow"), 200, CacheMiss, []byte("late")) // 15 s by default: it waits
	for _, rt := range *f.edge.routes.Load() {
		tr := rt.servers[0].client.Transport.(*http.Transport)
		want := Upstream{IdleTimeout: DefaultIdleTimeout, MaxIdleConns: f.edge.opts.MaxIdleConns}
		if rt.prefix == "/strict/" {
			want = Upstream{IdleTimeout: 5 * time.Second, MaxIdleConns: 3}
		}
		if tr.IdleConnTimeout != want.IdleTimeout || tr.MaxIdleConnsPerHost != want.MaxIdleConns {
			t.Errorf("%s: idle %v, %d conns; want %v, %d", rt.prefix, tr.IdleConnTimeout, tr.MaxIdleConnsPerHost, want.IdleTimeout, want.MaxIdleConns)
		}
	}
}

// Settings out of range are refused, naming the key.
func TestBadUpstreamSettings(t *testing.T) {
	eng := testEngine(t, nil)
	for key, u := range map[string]Upstream{
		"connect_timeout": {ConnectTimeout: -time.Second},
		"header_timeout":  {HeaderTimeout: -1},
		"fetch_timeout":   {FetchTimeout: -1},
		"idle_timeout":    {IdleTimeout: -1},
		"retry_backoff":   {RetryBackoff: -1},
		"fail_timeout":    {FailTimeout: -1},
		"max_idle_conns":  {MaxIdleConns: -1},
		"attempts":        {Attempts: MaxAttempts + 1},
	} {
		u.Prefix, u.URL = "/cdn/", "http://127.0.0.1:1/"
		_, err := New(eng, Options{Upstreams: []Upstream{u}})
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v", key, err)
		}
	}
}
