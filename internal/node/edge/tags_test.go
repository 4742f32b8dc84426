package edge

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/device"
)

// Purge says what it dropped: every slice of a sliced response, records
// included; nothing (and no error) for a path never cached.
func TestPurgeCounts(t *testing.T) {
	f := newFixture(t, nil)
	small, big := payload(3000, 31), payload(3*(64<<10)+5, 32)
	f.up.put("/media/a/small", small, "Cache-Control", "max-age=600")
	f.up.put("/media/a/big", big, "Cache-Control", "max-age=600", "Etag", `"big"`)
	f.want(f.get("/cdn/a/small"), 200, CacheMiss, small)
	// Two ranges: the first slice and the third are stored.
	f.want(f.get("/cdn/a/big", "Range", "bytes=0-9"), 206, CacheMiss, big[:10])
	f.want(f.get("/cdn/a/big", "Range", "bytes=140000-140004"), 206, CacheHit, big[140000:140005])
	p, err := f.edge.Purge("/cdn/a/small")
	if err != nil || p.Objects != 1 || p.Bytes <= 3000 || p.Bytes > 3000+1024 {
		t.Fatalf("purge of one response: %+v %v", p, err)
	}
	p, err = f.edge.Purge("/cdn/a/")
	if err != nil || p.Objects != 2 || p.Bytes <= 2*(64<<10) || p.Bytes > 2*(64<<10)+2048 {
		t.Fatalf("purge of two slices of a response under a directory: %+v %v", p, err)
	}
	for _, path := range []string{"/cdn/a/", "/cdn/never/cached"} {
		if p, err := f.edge.Purge(path); err != nil || p != (Purged{}) {
			t.Errorf("purge of %s: %+v %v", path, p, err)
		}
	}
	f.want(f.get("/cdn/a/small"), 200, CacheMiss, small)
}

// purgeHTTP calls the purge route's handler and returns its status and
// JSON body.
func purgeHTTP(t *testing.T, h *Handler, query string) (int, map[string]any) {
	t.Helper()
	w := httptest.NewRecorder()
	h.servePurge(w, httptest.NewRequest(http.MethodPost, "/admin/purge?"+query, nil))
	var m map[string]any
	json.Unmarshal(w.Body.Bytes(), &m)
	return w.Code, m
}

// Purge by tag: the responses whose Surrogate-Key or Cache-Tag names the
// tag are dropped, the others stay; the answer says how many.
func TestPurgeByTag(t *testing.T) {
	f := newFixture(t, nil)
	f.up.put("/media/t1/a.m4s", []byte("a"), "Cache-Control", "max-age=600", "Surrogate-Key", "title-1 seg")
	f.up.put("/media/t1/b.m4s", []byte("b"), "Cache-Control", "max-age=600", "Cache-Tag", "seg,title-1")
	f.up.put("/media/t2/a.m4s", []byte("c"), "Cache-Control", "max-age=600", "Surrogate-Key", "title-2 seg")
	for _, p := range []string{"/cdn/t1/a.m4s", "/cdn/t1/b.m4s", "/cdn/t2/a.m4s"} {
		f.want(f.get(p), 200, CacheMiss, nil)
	}
	f.clock.Advance(time.Second)
	code, m := purgeHTTP(t, f.edge, "tag=title-1")
	if code != 200 || m["objects"] != 2.0 || m["bytes"].(float64) < 2 {
		t.Fatalf("purge tag title-1: %d %v", code, m)
	}
	f.want(f.get("/cdn/t2/a.m4s"), 200, CacheHit, []byte("c"))
	f.want(f.get("/cdn/t1/a.m4s"), 200, CacheMiss, []byte("a"))
	f.want(f.get("/cdn/t1/b.m4s"), 200, CacheMiss, []byte("b"))
	f.want(f.get("/cdn/t1/b.m4s"), 200, CacheHit, []byte("b")) // fetched after the purge: kept
	if code, m := purgeHTTP(t, f.edge, "tag=nothing-has-it"); code != 200 || m["objects"] != 0.0 {
		t.Errorf("a tag nothing carries: %d %v", code, m)
	}
	for _, q := range []string{"tag=", "tag=a,b", "tag=x&path=/cdn/", "path=cdn"} {
		if code, _ := purgeHTTP(t, f.edge, q); code != 400 {
			t.Errorf("%s: %d, want 400", q, code)
		}
	}
	if code, m := purgeHTTP(t, f.edge, "path=/cdn/never"); code != 200 || m["objects"] != 0.0 {
		t.Errorf("a path never cached: %d %v", code, m)
	}
	if code, _ := purgeHTTP(t, f.edge, "path=/other/x"); code != 404 {
		t.Errorf("a path of no upstream: %d", code)
	}
}

// A tag purge reaches responses stored before a restart and not read
// since (the handler that purges does not know them): they are refetched
// instead of served. The purge is recorded in TagPurgeFile, so a restart
// between the purge and the next request does not bring them back.
func TestPurgeByTagAcrossRestarts(t *testing.T) {
	c := newClock()
	up := newUpstream(t, c)
	up.put("/media/t1/a.m4s", []byte("old a"), "Cache-Control", "max-age=3600", "Surrogate-Key", "title-1")
	up.put("/media/t2/a.m4s", []byte("t2"), "Cache-Control", "max-age=3600", "Surrogate-Key", "title-2")
	mem := device.NewMem(64*testBlock, 4096)
	bans := filepath.Join(t.TempDir(), "tag-purges")
	synctest.Test(t, func(t *testing.T) {
		open := func() (*engine.Engine, *Handler) {
			eng := testEngine(t, mem)
			h, err := New(eng, Options{
				Upstreams: []Upstream{{Prefix: "/cdn/", URL: up.srv.URL + "/media/"}},
				Now:       c.Now, Logger: slog.New(slog.DiscardHandler), TagPurgeFile: bans,
				Transport: &http.Transport{DisableKeepAlives: true},
			})
			if err != nil {
				t.Fatal(err)
			}
			return eng, h
		}
		restart := func(eng *engine.Engine, h *Handler) (*engine.Engine, *Handler) {
			time.Sleep(time.Second) // virtual: the monitor queues the objects for flash
			h.Close()
			if err := eng.Close(); err != nil {
				t.Fatal(err)
			}
			return open()
		}
		eng, h := open()
		for _, p := range []string{"/cdn/t1/a.m4s", "/cdn/t2/a.m4s"} {
			if r := serveDirect(h, p); r.cache() != CacheMiss {
				t.Fatalf("%s: %s", p, r.cache())
			}
		}
		eng, h = restart(eng, h)
		c.Advance(time.Second)
		up.put("/media/t1/a.m4s", []byte("new a"), "Cache-Control", "max-age=3600", "Surrogate-Key", "title-1")
		if p, err := h.PurgeTags([]string{"title-1"}); err != nil || p.Objects != 0 {
			t.Fatalf("purge by a handler that never read the response: %+v %v", p, err)
		}
		eng, h = restart(eng, h)
		defer func() { h.Close(); eng.Close() }()
		if r := serveDirect(h, "/cdn/t2/a.m4s"); r.cache() != CacheHit || r.tier() != "ssd" {
			t.Fatalf("untagged response after two restarts: %s from %s", r.cache(), r.tier())
		}
		if r := serveDirect(h, "/cdn/t1/a.m4s"); r.cache() != CacheMiss || string(r.body) != "new a" {
			t.Fatalf("purged response after a restart: %s %q", r.cache(), r.body)
		}
		if r := serveDirect(h, "/cdn/t1/a.m4s"); r.cache() != CacheHit || string(r.body) != "new a" {
			t.Fatalf("refetched response: %s %q", r.cache(), r.body)
		}
	})
	// A torn last line (a crash mid-append, never acknowledged) is
	// skipped; the lines before it still count.
	f, err := os.OpenFile(bans, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("deadbeef 12")
	f.Close()
	ts := tagState{bans: map[string]time.Time{}, file: bans}
	if skipped, err := ts.loadBans(); err != nil || skipped != 1 || len(ts.bans) != 1 {
		t.Errorf("torn line: skipped %d, %d bans, %v", skipped, len(ts.bans), err)
	}
}
