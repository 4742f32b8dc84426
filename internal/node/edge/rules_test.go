package edge

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/httpcache"
)

// The default TTL makes a response with only Last-Modified (a file
// server's segment) a hit for its whole TTL; a rule capping manifests at
// 2 s revalidates them after 2 s; the first matching rule wins.
func TestRulesFreshness(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.Cache.DefaultTTL = time.Minute
		o.Rules = []Rule{
			{Prefix: "/cdn/a/", Match: "*.mpd", Policy: Policy{Cache: httpcache.Options{DefaultTTL: time.Minute, MaxTTL: 2 * time.Second}}},
			{Match: "*.mpd", Policy: Policy{Cache: httpcache.Options{TTL: time.Hour}}},
		}
	})
	lm := f.clock.Now().Add(-time.Second).Format(http.TimeFormat)
	seg, mpd := payload(3000, 41), payload(400, 42)
	f.up.put("/media/a/seg.m4s", seg, "Last-Modified", lm, "Etag", `"s"`)
	f.up.put("/media/a/index.mpd", mpd, "Last-Modified", lm, "Etag", `"m"`)
	f.want(f.get("/cdn/a/seg.m4s"), 200, CacheMiss, seg)
	f.want(f.get("/cdn/a/index.mpd"), 200, CacheMiss, mpd)
	f.clock.Advance(time.Second)
	f.want(f.get("/cdn/a/seg.m4s"), 200, CacheHit, seg)
	f.want(f.get("/cdn/a/index.mpd"), 200, CacheHit, mpd)
	f.clock.Advance(30 * time.Second)
	f.want(f.get("/cdn/a/seg.m4s"), 200, CacheHit, seg)
	f.want(f.get("/cdn/a/index.mpd"), 200, CacheRevalidated, mpd)
	if n := f.up.requests("/media/a/seg.m4s"); n != 1 {
		t.Fatalf("segment fetched %d times, want 1", n)
	}
	if n := f.up.requests("/media/a/index.mpd"); n != 2 {
		t.Fatalf("manifest fetched %d times, want 2", n)
	}

	// A reload's rules apply to the next request.
	if err := f.edge.SetRules(Policy{}, nil); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(40 * time.Second)
	f.want(f.get("/cdn/a/index.mpd"), 200, CacheRevalidated, mpd)
}

// The query rules: all parameters count by default; none for a rule that
// drops them (tokens on segments); only the listed ones, in any order,
// for a list. Purge finds the object under the same key.
func TestRulesQueryKey(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.Rules = []Rule{
			{Match: "*.m4s", Policy: Policy{Query: QueryNone}},
			{Match: "*.mpd", Policy: Policy{Query: QueryList, QueryParams: []string{"v", "lang"}}},
		}
	})
	seg, mpd, bin := payload(1000, 43), payload(500, 44), payload(200, 45)
	f.up.put("/media/s.m4s", seg, "Cache-Control", "max-age=600")
	f.up.put("/media/m.mpd", mpd, "Cache-Control", "max-age=600")
	f.up.put("/media/x.bin", bin, "Cache-Control", "max-age=600")
	f.want(f.get("/cdn/s.m4s?token=a"), 200, CacheMiss, seg)
	f.want(f.get("/cdn/s.m4s?token=b"), 200, CacheHit, seg)
	f.want(f.get("/cdn/s.m4s"), 200, CacheHit, seg)
	f.want(f.get("/cdn/m.mpd?v=2&utm=x&lang=en"), 200, CacheMiss, mpd)
	f.want(f.get("/cdn/m.mpd?lang=en&v=2&utm=y"), 200, CacheHit, mpd)
	f.want(f.get("/cdn/m.mpd?v=3&lang=en"), 200, CacheMiss, mpd)
	f.want(f.get("/cdn/x.bin?a=1"), 200, CacheMiss, bin)
	f.want(f.get("/cdn/x.bin?a=2"), 200, CacheMiss, bin)
	if _, err := f.edge.Purge("/cdn/s.m4s?token=zzz"); err != nil {
		t.Fatal(err)
	}
	f.want(f.get("/cdn/s.m4s?token=c"), 200, CacheMiss, seg)
}

// Bad rules are refused with a message naming what is wrong.
func TestRulesRefused(t *testing.T) {
	for _, c := range []struct {
		def   Policy
		rules []Rule
		want  string
	}{
		{Policy{Cache: httpcache.Options{DefaultTTL: -time.Second}}, nil, "default_ttl: negative"},
		{Policy{}, []Rule{{Match: "*.mpd", Policy: Policy{Cache: httpcache.Options{Grace: -1}}}}, "grace: negative"},
		{Policy{}, []Rule{{Match: "[*.mpd"}}, "bad glob"},
		{Policy{}, []Rule{{Prefix: "live/"}}, "does not start with '/'"},
		{Policy{}, []Rule{{Match: "live/*.ts"}}, "must start with '/'"},
		{Policy{}, []Rule{{Match: "*.mpd"}, {Match: "*.mpd"}}, "overlaps rule 1"},
		{Policy{}, []Rule{{Prefix: "/cdn/"}, {Prefix: "/cdn/live/", Match: "*.m3u8"}}, "overlaps rule 1"},
		{Policy{}, []Rule{{Match: "*"}, {Match: "*.ts"}}, "overlaps rule 1"},
		{Policy{Query: QueryList}, nil, "needs query_params"},
		{Policy{QueryParams: []string{"v"}}, nil, `needs query = "list"`},
		{Policy{Query: QueryList, QueryParams: []string{"v", ""}}, nil, "empty parameter name"},
		{Policy{Cache: httpcache.Options{HeuristicMin: time.Hour, HeuristicMax: time.Minute}}, nil, "heuristic_min"},
	} {
		err := CheckRules(c.def, c.rules)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v %+v: %v, want %q", c.def, c.rules, err, c.want)
		}
	}
	// Rules that do not shadow each other are taken.
	if err := CheckRules(Policy{}, []Rule{{Prefix: "/cdn/live/", Match: "*.m3u8"}, {Prefix: "/cdn/"}, {Match: "/vod/*/*.ts"}, {Match: "*.ts"}}); err != nil {
		t.Fatal(err)
	}
}

// Grace answers an expired copy at once and revalidates it in the
// background; immutable answers a player's reload (max-age=0) from a
// fresh copy.
func TestRulesGraceAndImmutable(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.Rules = []Rule{
			{Match: "*.mpd", Policy: Policy{Cache: httpcache.Options{Grace: time.Minute}}},
			{Match: "*.m4s", Policy: Policy{Cache: httpcache.Options{Immutable: true}}},
		}
	})
	mpd, seg := payload(300, 46), payload(900, 47)
	f.up.put("/media/a.mpd", mpd, "Cache-Control", "max-age=2", "Etag", `"a"`)
	f.up.put("/media/s.m4s", seg, "Cache-Control", "max-age=600", "Etag", `"s"`)
	f.want(f.get("/cdn/a.mpd"), 200, CacheMiss, mpd)
	f.want(f.get("/cdn/s.m4s"), 200, CacheMiss, seg)
	f.clock.Advance(10 * time.Second)
	f.want(f.get("/cdn/a.mpd"), 200, CacheStale, mpd)
	f.want(f.get("/cdn/s.m4s", "Cache-Control", "max-age=0"), 200, CacheHit, seg)
	for i := 0; f.edge.Stats().Revalidated != 1; i++ { // bounded wait for the background revalidation
		if i == 500 {
			st := f.edge.Stats()
			t.Fatalf("background revalidations %d (%d answered 304), want 1", st.Revalidations, st.Revalidated)
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.want(f.get("/cdn/a.mpd"), 200, CacheHit, mpd) // refreshed by the 304
	if n := f.up.requests("/media/s.m4s"); n != 1 {
		t.Fatalf("the reload of an immutable segment reached the upstream: %d requests", n)
	}
}
