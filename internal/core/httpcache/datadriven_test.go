package httpcache

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// t0 is the origin of the scripts' clock; {N} in a header value is the
// HTTP-date N seconds after it.
var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// TestDataDriven runs the golden files in testdata/. Each file is a script
// against one Policy and at most one stored entry, on a clock that starts
// at t0 and moves only with tick:
//
//	options [max-size=<bytes>] [fraction=<f>] [heuristic-max=<dur>]
//	        [set-cookie=store|strip|skip] [partial] [keep-on-error=<dur>]
//	        [default-ttl=<dur>] [heuristic-min=<dur>] [ttl=<dur>]
//	        [max-ttl=<dur>] [immutable] [grace=<dur>]
//	tick <dur>                        advances the clock
//	store [status=200] [method=GET] [delay=<dur>]
//	    input: "> Name: value" request fields, "Name: value" response fields;
//	    the request left delay before now, the response arrived now.
//	    Prints the stored entry, or why it was not stored.
//	get [method=GET]                  input: request fields; prints Decide
//	miss                              input: request fields; prints Miss
//	error [status=<n>]                input: request fields; prints whether
//	                                  the entry may answer for a failed upstream
//	conditional                       prints the revalidation fields
//	304 [delay=<dur>]                 input: the 304's fields; prints whether it
//	                                  selects the entry, then the refreshed entry
//	head [delay=<dur>]                input: a HEAD response's fields; prints the
//	                                  refreshed entry, or that it must go
//	headers                           prints the fields sent with a hit now
//	vary                              input: request fields; prints the key
//	combinable                        input: two header blocks split by "--"
//	invalidate method=<m> url=<u> status=<n>
//	                                  input: response fields; prints the URIs
//
// Regenerate with go test -run TestDataDriven -rewrite.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &harness{p: NewPolicy(Options{}), now: t0}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return h.run(t, d)
		})
	})
}

type harness struct {
	p   *Policy
	e   *Entry
	now time.Time
}

func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "options":
		return h.cmdOptions(t, d)
	case "tick":
		dur, err := time.ParseDuration(d.CmdArgs[0].Key)
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
		h.now = h.now.Add(dur)
		return fmt.Sprintf("now=%s", h.now.Sub(t0))
	case "store":
		return h.cmdStore(t, d)
	case "get", "miss", "error":
		return h.cmdRequest(t, d)
	case "conditional":
		return fmtHeader(h.entry(t, d).Conditional())
	case "304", "head":
		return h.cmd304(t, d)
	case "headers":
		return fmtHeader(h.entry(t, d).ResponseHeader(h.now))
	case "vary":
		_, req := parseHeaders(t, d.Input)
		names, _ := ParseVary(h.entry(t, d).Header)
		return fmt.Sprintf("key: %s\nmatches: %v", VaryKey(names, req), h.e.MatchesVary(req))
	case "combinable":
		a, b, _ := strings.Cut(d.Input, "\n--\n")
		_, ha := parseHeaders(t, a)
		_, hb := parseHeaders(t, b)
		return fmt.Sprint(Combinable(ha, hb))
	case "invalidate":
		return h.cmdInvalidate(t, d)
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}

func (h *harness) cmdOptions(t *testing.T, d *datadriven.TestData) string {
	o := Options{
		MaxObjectSize:     arg(t, d, "max-size", int64(0)),
		HeuristicFraction: arg(t, d, "fraction", 0.0),
		HeuristicMax:      arg(t, d, "heuristic-max", time.Duration(0)),
		StorePartial:      d.HasArg("partial"),
		KeepOnError:       arg(t, d, "keep-on-error", time.Duration(0)),
		DefaultTTL:        arg(t, d, "default-ttl", time.Duration(0)),
		HeuristicMin:      arg(t, d, "heuristic-min", time.Duration(0)),
		TTL:               arg(t, d, "ttl", time.Duration(0)),
		MaxTTL:            arg(t, d, "max-ttl", time.Duration(0)),
		Immutable:         d.HasArg("immutable"),
		Grace:             arg(t, d, "grace", time.Duration(0)),
	}
	// The files test the RFC's behaviour unless they name a policy.
	p, err := ParseSetCookiePolicy(arg(t, d, "set-cookie", "store"))
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	o.SetCookie = p
	h.p, h.e = NewPolicy(o), nil
	return fmt.Sprintf("%+v", h.p.Options())
}

func (h *harness) cmdStore(t *testing.T, d *datadriven.TestData) string {
	req, respH := parseHeaders(t, d.Input)
	r := Request{Method: arg(t, d, "method", "GET"), Header: req}
	resp := Response{Status: arg(t, d, "status", 200), Header: respH}
	delay := arg(t, d, "delay", time.Duration(0))
	e, refusal := h.p.Store(r, resp, h.now.Add(-delay), h.now)
	if refusal != Stored {
		return "not stored: " + string(refusal)
	}
	h.e = e
	return fmtEntry(e, h.now)
}

func (h *harness) cmdRequest(t *testing.T, d *datadriven.TestData) string {
	_, req := parseHeaders(t, d.Input)
	r := Request{Method: arg(t, d, "method", "GET"), Header: req}
	switch d.Cmd {
	case "miss":
		dec := Miss(r)
		return fmt.Sprintf("%s (%s)", dec.Action, dec.Reason)
	case "error":
		status := arg(t, d, "status", 0)
		ok, why := h.p.ServeOnError(h.entry(t, d), r, status, h.now)
		if ok {
			return "serve stale (" + why + ")"
		}
		return "error (" + why + ")"
	}
	e := h.entry(t, d)
	dec := h.p.Decide(e, r, h.now)
	// A driver's shortcut, the entry's fields parsed once, decides the
	// same in every case.
	ps := e.Parse()
	if parsed := h.p.DecideParsed(e, &ps, r, h.now); parsed != dec {
		t.Errorf("%s: DecideParsed %+v, Decide %+v", d.Pos, parsed, dec)
	}
	return fmt.Sprintf("%s (%s) age=%s", dec.Action, dec.Reason, dec.Age)
}

func (h *harness) cmd304(t *testing.T, d *datadriven.TestData) string {
	_, resp := parseHeaders(t, d.Input)
	e := h.entry(t, d)
	delay := arg(t, d, "delay", time.Duration(0))
	if d.Cmd == "head" {
		n, ok := h.p.FreshenFromHead(e, resp, h.now.Add(-delay), h.now)
		if !ok {
			return "changed: drop the entry"
		}
		h.e = n
		return fmtEntry(h.e, h.now)
	}
	if !e.Matches304(resp) {
		return "no match"
	}
	h.e = h.p.Freshen(e, resp, h.now.Add(-delay), h.now)
	return fmtEntry(h.e, h.now)
}

func (h *harness) cmdInvalidate(t *testing.T, d *datadriven.TestData) string {
	_, resp := parseHeaders(t, d.Input)
	u, err := url.Parse(arg(t, d, "url", ""))
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	uris := Invalidations(arg(t, d, "method", "POST"), u, arg(t, d, "status", 200), resp)
	if len(uris) == 0 {
		return "none"
	}
	return strings.Join(uris, "\n")
}

func (h *harness) entry(t *testing.T, d *datadriven.TestData) *Entry {
	if h.e == nil {
		t.Fatalf("%s: no stored entry", d.Pos)
	}
	return h.e
}

// fmtEntry prints what the decisions read of an entry.
func fmtEntry(e *Entry, now time.Time) string {
	s := fmt.Sprintf("stored status=%d lifetime=%s age=%s", e.Status, e.Lifetime, e.Age(now))
	if e.Heuristic {
		s += " heuristic"
	}
	if e.Variant != "" {
		s += " variant=" + e.Variant
	}
	return s + "\n" + fmtHeader(e.Header)
}

// fmtHeader prints fields sorted by name, lines of one name in order.
func fmtHeader(h http.Header) string {
	var lines []string
	for _, name := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[name] {
			lines = append(lines, name+": "+v)
		}
	}
	if len(lines) == 0 {
		return "(none)"
	}
	return strings.Join(lines, "\n")
}

var dateRef = regexp.MustCompile(`\{(-?\d+)\}`)

// parseHeaders reads "> Name: value" lines into req and "Name: value"
// lines into resp (the request fields of store, or the only fields of the
// other commands); {N} becomes an HTTP-date.
func parseHeaders(t *testing.T, input string) (req, resp http.Header) {
	req, resp = http.Header{}, http.Header{}
	for _, line := range strings.Split(input, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		target := resp
		if rest, ok := strings.CutPrefix(line, "> "); ok {
			target, line = req, rest
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("bad header line %q", line)
		}
		value = dateRef.ReplaceAllStringFunc(strings.TrimPrefix(value, " "), func(m string) string {
			n, _ := strconv.Atoi(m[1 : len(m)-1])
			return t0.Add(time.Duration(n) * time.Second).Format(http.TimeFormat)
		})
		target.Add(name, value)
	}
	return req, resp
}

// arg returns the command argument key scanned into a T, or def.
func arg[T any](t *testing.T, d *datadriven.TestData, key string, def T) T {
	d.MaybeScanArgs(t, key, &def)
	return def
}
