package edge

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// ErrPrefixes refuses a SetUpstreams that adds or removes a prefix: the
// routes of the prefixes are mounted once, at start.
var ErrPrefixes = errors.New("edge: the upstream prefixes changed; adding or removing one needs a restart")

// parseRoutes checks the upstreams and returns their routes, longest
// prefix first, with their settings filled from o; their servers have no
// client yet (newClients).
func (o *Options) parseRoutes(ups []Upstream) ([]route, error) {
	var routes []route
	for _, u := range ups {
		rt, err := o.parseUpstream(u)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(routes, func(o route) bool { return o.prefix == rt.prefix }) {
			return nil, errors.New("edge: two upstreams for prefix " + rt.prefix)
		}
		routes = append(routes, rt)
	}
	slices.SortFunc(routes, func(a, b route) int { return cmp.Compare(len(b.prefix), len(a.prefix)) })
	return routes, nil
}

// CheckUpstreamList checks a list of upstreams as New would, with the
// default Options: prefixes, http(s) URLs, one upstream per prefix, and
// settings in range (the error names the one that is not).
func CheckUpstreamList(ups []Upstream) error {
	_, err := (&Options{}).EnsureDefaults().parseRoutes(ups)
	return err
}

// SetUpstreams replaces the upstreams' URLs while the handler serves (a
// config reload): requests that start after it returns fetch from the new
// URLs. The prefixes must stay the same (ErrPrefixes). What was stored
// from an upstream whose URL changed is no longer found: its keys include
// the URL.
func (h *Handler) SetUpstreams(ups []Upstream) error {
	routes, err := h.prepare(ups)
	if err != nil {
		return err
	}
	h.newClients(routes)
	old := h.routes.Swap(&routes)
	closeIdle(*old) // requests in flight on them finish
	return nil
}

// CheckUpstreams reports the error SetUpstreams(ups) would return,
// changing nothing.
func (h *Handler) CheckUpstreams(ups []Upstream) error {
	_, err := h.prepare(ups)
	return err
}

// prepare checks ups against the routes in force and returns its routes.
func (h *Handler) prepare(ups []Upstream) ([]route, error) {
	routes, err := h.opts.parseRoutes(ups)
	if err != nil {
		return nil, err
	}
	had, got := prefixes(*h.routes.Load()), prefixes(routes)
	slices.Sort(had)
	slices.Sort(got)
	if !slices.Equal(had, got) {
		return nil, fmt.Errorf("%w (had %s, got %s)", ErrPrefixes, had, got)
	}
	return routes, nil
}

func prefixes(rs []route) []string {
	p := make([]string, len(rs))
	for i, r := range rs {
		p[i] = r.prefix
	}
	return p
}
