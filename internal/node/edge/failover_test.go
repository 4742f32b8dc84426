package edge

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// origin is an HTTP server on 127.0.0.1 that can be stopped and started
// again on the same address, counting the requests it answers.
type origin struct {
	t    *testing.T
	addr string
	srv  *httptest.Server
	hits atomic.Int64
}

func newOrigin(t *testing.T) *origin {
	o := &origin{t: t}
	o.start("127.0.0.1:0")
	o.addr = o.srv.Listener.Addr().String()
	t.Cleanup(func() { o.stop() })
	return o
}

func (o *origin) url() string { return "http://" + o.addr + "/media/" }

func (o *origin) start(addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		o.t.Fatal(err)
	}
	o.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.hits.Add(1)
		w.Header().Set("Cache-Control", "max-age=600")
		fmt.Fprintf(w, "bytes of %s", r.URL.Path)
	}))
	o.srv.Listener.Close()
	o.srv.Listener = l
	o.srv.Start()
}

func (o *origin) stop() {
	if o.srv != nil {
		o.srv.Close()
		o.srv = nil
	}
}

// A primary stopped with a backup configured: no client sees an error,
// the backup answers; the primary is skipped for FailTimeout, then
// probed (a probe that fails is retried on the backup), and once it
// answers again the traffic returns to it.
func TestFailoverToBackup(t *testing.T) {
	primary, backup := newOrigin(t), newOrigin(t)
	rec := &logRecorder{}
	f := newFixture(t, func(o *Options) {
		o.Upstreams = []Upstream{{Prefix: "/cdn/", URL: primary.url(), Backups: []string{backup.url()}}}
		o.Logger = slog.New(rec)
	})
	n := 0
	get := func() {
		t.Helper()
		n++
		p := fmt.Sprintf("/cdn/seg-%d.m4s", n) // a new object each time: every request goes upstream
		f.want(f.get(p), 200, CacheMiss, fmt.Appendf(nil, "bytes of /media/seg-%d.m4s", n))
	}
	for range 3 {
		get()
	}
	if primary.hits.Load() != 3 || backup.hits.Load() != 0 {
		t.Fatalf("healthy primary: %d on the primary, %d on the backup", primary.hits.Load(), backup.hits.Load())
	}

	primary.stop()
	for range 10 {
		get() // 0 client errors
	}
	if backup.hits.Load() != 10 {
		t.Fatalf("primary down: %d on the backup, want 10", backup.hits.Load())
	}
	if w := rec.take("edge upstream failing"); len(w) != 1 || w[0]["upstream"] != primary.url() {
		t.Errorf("warnings: %v", w)
	}
	// Past FailTimeout, one request probes the primary, still down: it is
	// retried on the backup.
	f.clock.Advance(DefaultFailTimeout)
	get()
	if backup.hits.Load() != 11 {
		t.Fatalf("failed probe: %d on the backup", backup.hits.Load())
	}

	primary.start(primary.addr)
	get() // inside FailTimeout of the failed probe: the backup still
	if primary.hits.Load() != 3 || backup.hits.Load() != 12 {
		t.Fatalf("inside FailTimeout: %d on the primary, %d on the backup", primary.hits.Load(), backup.hits.Load())
	}
	f.clock.Advance(DefaultFailTimeout)
	for range 5 {
		get()
	}
	if primary.hits.Load() != 8 || backup.hits.Load() != 12 {
		t.Fatalf("primary back: %d on the primary, %d on the backup; want 8 and 12", primary.hits.Load(), backup.hits.Load())
	}
	if r := rec.take("edge upstream recovered"); len(r) != 1 || r[0]["upstream"] != primary.url() {
		t.Errorf("recoveries: %v", r)
	}
	if st := f.edge.Stats(); st.Errors != 0 {
		t.Errorf("%d client errors", st.Errors)
	}
}

// Both servers down: the client gets the edge's 502; the first to come
// back answers.
func TestFailoverAllDown(t *testing.T) {
	primary, backup := newOrigin(t), newOrigin(t)
	f := newFixture(t, func(o *Options) {
		o.Upstreams = []Upstream{{Prefix: "/cdn/", URL: primary.url(), Backups: []string{backup.url()}}}
	})
	primary.stop()
	backup.stop()
	f.want(f.get("/cdn/a"), 502, CacheMiss, nil)
	f.want(f.get("/cdn/b"), 502, CacheMiss, nil)
	backup.start(backup.addr)
	f.clock.Advance(DefaultFailTimeout)
	f.want(f.get("/cdn/c"), 200, CacheMiss, []byte("bytes of /media/c"))
	if backup.hits.Load() != 1 {
		t.Errorf("%d on the backup", backup.hits.Load())
	}
}
