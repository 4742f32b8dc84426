package edge

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/core/httpcache"
)

// QueryKey says which query parameters count in a cache key.
type QueryKey int

const (
	// QueryAll, the zero value: the whole query string counts, as
	// received (RFC 9111 §2: the target URI is the key).
	QueryAll QueryKey = iota
	// QueryNone: the query string does not count (tokens, tracking
	// parameters on segments that are the same for everyone). The
	// upstream still gets the query of the request that fetched.
	QueryNone
	// QueryList: only the parameters named in Policy.QueryParams count,
	// in name order.
	QueryList
)

var queryKeyNames = [...]string{QueryAll: "all", QueryNone: "none", QueryList: "list"}

// String returns the mode's configuration name.
func (q QueryKey) String() string {
	if q >= 0 && int(q) < len(queryKeyNames) {
		return queryKeyNames[q]
	}
	return fmt.Sprintf("QueryKey(%d)", int(q))
}

// ParseQueryKey reads a mode's configuration name: all, none or list.
func ParseQueryKey(s string) (QueryKey, error) {
	for i, n := range queryKeyNames {
		if s == n {
			return QueryKey(i), nil
		}
	}
	return 0, fmt.Errorf("query %q: want all, none or list", s)
}

// A Policy is how the edge caches a set of requests: the httpcache
// options (freshness rules, keep-on-error, grace, largest object) and
// the cache key's query rule.
type Policy struct {
	Cache       httpcache.Options
	Query       QueryKey
	QueryParams []string // the parameters QueryList keeps
}

// A Rule applies its Policy, in place of the default one, to the
// requests under Prefix whose path matches Match. Rules are tried in
// order; the first that matches wins.
type Rule struct {
	// Prefix is a request path prefix, '/' first; "" is "/".
	Prefix string
	// Match is a glob (path.Match: *, ?, [...]) on the request path's
	// last segment ("*.mpd"), or on the whole path when it holds a '/'
	// ("/live/*/index.m3u8"); "" matches every path under Prefix.
	Match string
	Policy
}

// compiledPolicy is a Policy ready to use.
type compiledPolicy struct {
	policy *httpcache.Policy
	query  QueryKey
	params []string // sorted
}

// rules are the compiled default and rules, swapped whole by SetRules.
type rules struct {
	def   compiledPolicy
	rules []Rule
	pols  []compiledPolicy
}

// compileRules checks def and rs and compiles them.
func compileRules(def Policy, rs []Rule) (*rules, error) {
	out := &rules{rules: slices.Clone(rs)}
	var err error
	if out.def, err = compilePolicy(def); err != nil {
		return nil, fmt.Errorf("edge: %w", err)
	}
	for i, r := range out.rules {
		name := fmt.Sprintf("edge rule %d (prefix %q, match %q)", i+1, r.Prefix, r.Match)
		if r.Prefix == "" {
			out.rules[i].Prefix = "/"
			r.Prefix = "/"
		}
		if !strings.HasPrefix(r.Prefix, "/") {
			return nil, fmt.Errorf("%s: prefix does not start with '/'", name)
		}
		if _, err := path.Match(r.Match, ""); err != nil {
			return nil, fmt.Errorf("%s: match: bad glob: %v", name, err)
		}
		if strings.Contains(r.Match, "/") && !strings.HasPrefix(r.Match, "/") {
			return nil, fmt.Errorf("%s: match: a glob with a '/' is matched against the whole path and must start with '/'", name)
		}
		for j, o := range out.rules[:i] {
			if shadows(o, out.rules[i]) {
				return nil, fmt.Errorf("%s: overlaps rule %d (prefix %q, match %q), which matches first every request it would", name, j+1, o.Prefix, o.Match)
			}
		}
		p, err := compilePolicy(r.Policy)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out.pols = append(out.pols, p)
	}
	return out, nil
}

// shadows reports whether the earlier rule a matches every request the
// later rule b would: b could never apply.
func shadows(a, b Rule) bool {
	if !strings.HasPrefix(b.Prefix, a.Prefix) {
		return false
	}
	return a.Match == "" || a.Match == "*" && !strings.Contains(b.Match, "/") || a.Match == b.Match
}

// compilePolicy checks p and compiles it.
func compilePolicy(p Policy) (compiledPolicy, error) {
	o := p.Cache
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"default_ttl", o.DefaultTTL}, {"heuristic_min", o.HeuristicMin}, {"heuristic_max", o.HeuristicMax},
		{"ttl", o.TTL}, {"max_ttl", o.MaxTTL}, {"grace", o.Grace}} {
		if d.v < 0 {
			return compiledPolicy{}, fmt.Errorf("%s: negative duration %s", d.name, d.v)
		}
	}
	if o.HeuristicMax > 0 && o.HeuristicMin > o.HeuristicMax {
		return compiledPolicy{}, fmt.Errorf("heuristic_min %s is more than heuristic_max %s", o.HeuristicMin, o.HeuristicMax)
	}
	switch {
	case p.Query == QueryList && len(p.QueryParams) == 0:
		return compiledPolicy{}, errors.New(`query = "list" needs query_params`)
	case p.Query != QueryList && len(p.QueryParams) > 0:
		return compiledPolicy{}, errors.New(`query_params needs query = "list"`)
	case p.Query < QueryAll || p.Query > QueryList:
		return compiledPolicy{}, fmt.Errorf("query: %v", p.Query)
	case slices.Contains(p.QueryParams, ""):
		// It would keep the empty parts of a query ("a&&b"): "/x?&"
		// and "/x" would be two objects.
		return compiledPolicy{}, errors.New("query_params: an empty parameter name")
	}
	params := slices.Clone(p.QueryParams)
	slices.Sort(params)
	return compiledPolicy{policy: httpcache.NewPolicy(o), query: p.Query, params: params}, nil
}

// CheckRules reports the error SetRules(def, rs) would return.
func CheckRules(def Policy, rs []Rule) error {
	_, err := compileRules(def, rs)
	return err
}

// SetRules replaces the default policy and the rules while the handler
// serves (a config reload): requests that start after it returns use
// them. What is stored keeps its lifetime until it is revalidated; a
// changed query rule makes the objects stored under the old keys
// unreachable (they age out of the tiers).
func (h *Handler) SetRules(def Policy, rs []Rule) error {
	c, err := compileRules(def, rs)
	if err != nil {
		return err
	}
	h.rules.Store(c)
	return nil
}

// policyFor returns the policy of the (unescaped) request path: the
// first rule's that matches, or the default.
func (rs *rules) policyFor(p string) *compiledPolicy {
	for i, r := range rs.rules {
		if !strings.HasPrefix(p, r.Prefix) {
			continue
		}
		target := p
		if !strings.Contains(r.Match, "/") {
			target = p[strings.LastIndexByte(p, '/')+1:]
		}
		if ok, _ := path.Match(r.Match, target); ok || r.Match == "" {
			return &rs.pols[i]
		}
	}
	return &rs.def
}

// keyTarget is the target (escaped path below the prefix, and the raw
// query) as the cache key counts it.
func (c *compiledPolicy) keyTarget(rest, rawQuery string) string {
	switch {
	case rawQuery == "" || c.query == QueryNone:
		return rest
	case c.query == QueryAll:
		return rest + "?" + rawQuery
	}
	var kept []string
	for kv := range strings.SplitSeq(rawQuery, "&") {
		name, _, _ := strings.Cut(kv, "=")
		if _, found := slices.BinarySearch(c.params, name); found {
			kept = append(kept, kv)
		}
	}
	if len(kept) == 0 {
		return rest
	}
	slices.Sort(kept)
	return rest + "?" + strings.Join(kept, "&")
}
