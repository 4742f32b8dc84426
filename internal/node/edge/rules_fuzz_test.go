package edge

import (
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/httpcache"
)

// ruleMatches is the reference of a rule's match: the request path is
// under the prefix and the glob matches (path.Match) its last segment, or
// the whole path when the glob holds a '/'; an empty glob matches all.
func ruleMatches(r Rule, p string) bool {
	prefix := r.Prefix
	if prefix == "" {
		prefix = "/"
	}
	if !strings.HasPrefix(p, prefix) {
		return false
	}
	if r.Match == "" {
		return true
	}
	target := p
	if !strings.Contains(r.Match, "/") {
		target = p[strings.LastIndexByte(p, '/')+1:] // the last segment ("" after a final '/')
	}
	ok, err := path.Match(r.Match, target)
	return ok && err == nil
}

// FuzzRules: CheckRules never panics, whatever the prefixes, globs and
// durations; for rules it accepts, the policy a path gets is the first
// rule's whose match (the reference: path.Match on the path's last
// segment or whole path) fits it, else the default; a glob accepted is
// never a bad pattern for any path; and a rule refused because an earlier
// one shadows it matches no path the earlier one does not.
func FuzzRules(f *testing.F) {
	f.Add("/live/", "*.m3u8", "/vod/", "", "/live/a/index.m3u8", int64(0), int64(0))
	f.Add("/", "*.mpd", "/", "/live/*/index.m3u8", "/live/x/index.m3u8", int64(time.Second), int64(-1))
	f.Add("/a", "[a-", "/b", "*", "/a/b", int64(0), int64(0))
	f.Add("/x/", "*", "/x/y/", "z?", "/x/y/za", int64(0), int64(0))
	f.Add("", "", "/q", "\\", "/q/\\", int64(0), int64(0))
	f.Add("/a/", "[^/]*", "/a/", "/a/*", "/a/[", int64(5), int64(3))
	f.Fuzz(func(t *testing.T, prefix1, match1, prefix2, match2, p string, ttl, grace int64) {
		if len(prefix1)+len(match1)+len(prefix2)+len(match2)+len(p) > 4096 {
			return
		}
		r1 := Rule{Prefix: prefix1, Match: match1, Policy: Policy{Cache: httpcache.Options{TTL: time.Duration(ttl)}}}
		r2 := Rule{Prefix: prefix2, Match: match2, Policy: Policy{Cache: httpcache.Options{Grace: time.Duration(grace)}}}
		def := Policy{}
		err := CheckRules(def, []Rule{r1, r2})
		rs, cerr := compileRules(def, []Rule{r1, r2})
		if (err == nil) != (cerr == nil) {
			t.Fatalf("CheckRules %v, compileRules %v", err, cerr)
		}
		if err != nil {
			if strings.Contains(err.Error(), "overlaps rule 1") {
				if ruleMatches(r2, p) && !ruleMatches(r1, p) {
					t.Fatalf("rule 2 (%q, %q) refused as shadowed by rule 1 (%q, %q), but only it matches %q",
						prefix2, match2, prefix1, match1, p)
				}
			}
			return
		}
		for _, r := range []Rule{r1, r2} {
			if r.Match == "" {
				continue
			}
			for _, target := range []string{p, p[strings.LastIndexByte(p, '/')+1:]} {
				if _, err := path.Match(r.Match, target); err != nil {
					t.Fatalf("glob %q accepted, but matching %q: %v", r.Match, target, err)
				}
			}
		}
		if !strings.HasPrefix(p, "/") {
			return
		}
		want := &rs.def
		for i, r := range []Rule{r1, r2} {
			if ruleMatches(r, p) {
				want = &rs.pols[i]
				break
			}
		}
		if got := rs.policyFor(p); got != want {
			t.Fatalf("rules (%q, %q), (%q, %q): path %q got policy %p, want %p (default %p, rules %p %p)",
				prefix1, match1, prefix2, match2, p, got, want, &rs.def, &rs.pols[0], &rs.pols[1])
		}
	})
}

// FuzzKeyTarget: the cache key's target keeps the path and, as the query
// rule says, all the query, none of it, or the listed parameters only,
// sorted: applying it again changes nothing, and the kept parameters are
// the request's own.
func FuzzKeyTarget(f *testing.F) {
	f.Add("seg.m4s", "token=abc&v=2&lang=en", "v,lang", 2)
	f.Add("a", "v=1&v=0&&=&v", "v", 2)
	f.Add("a", "x=1", "", 1)
	f.Add("a", "", "", 0)
	f.Fuzz(func(t *testing.T, rest, rawQuery, params string, mode int) {
		p := Policy{Query: QueryKey(mode)}
		if p.Query == QueryList {
			p.QueryParams = strings.Split(params, ",")
		}
		c, err := compilePolicy(p)
		if err != nil {
			return
		}
		got := c.keyTarget(rest, rawQuery)
		if !strings.HasPrefix(got, rest) {
			t.Fatalf("key target %q lost the path %q", got, rest)
		}
		q, hasQ := strings.CutPrefix(got[len(rest):], "?")
		switch {
		case got == rest:
		case !hasQ:
			t.Fatalf("key target %q: %q after the path is not a query", got, got[len(rest):])
		case c.query == QueryNone:
			t.Fatalf("query none kept %q", q)
		case c.query == QueryAll && q != rawQuery:
			t.Fatalf("query all: %q, want %q", q, rawQuery)
		case c.query == QueryList:
			kept := strings.Split(q, "&")
			if !slices.IsSorted(kept) {
				t.Fatalf("kept parameters not sorted: %q", q)
			}
			in := strings.Split(rawQuery, "&")
			for _, kv := range kept {
				name, _, _ := strings.Cut(kv, "=")
				if !slices.Contains(in, kv) || !slices.Contains(c.params, name) {
					t.Fatalf("kept %q: not a listed parameter of %q", kv, rawQuery)
				}
			}
			if again := c.keyTarget(rest, q); again != got {
				t.Fatalf("not idempotent: %q then %q", got, again)
			}
		}
	})
}
