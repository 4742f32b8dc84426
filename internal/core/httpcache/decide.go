package httpcache

import (
	"net/http"
	"time"
)

// An Action is what the driver does with a request (RFC 9111 §4).
type Action int

const (
	// Fetch: forward the request upstream as it is; nothing stored can
	// answer it (RFC 9111 §4: no stored response matches).
	Fetch Action = iota + 1
	// Fresh: answer with the stored response (RFC 9111 §4.2).
	Fresh
	// Stale: answer with the stored response although it is stale, as the
	// request's max-stale allows (RFC 9111 §5.2.1.2, §4.2.4).
	Stale
	// StaleRevalidate: answer with the stored stale response and
	// revalidate it in the background (RFC 5861 §3).
	StaleRevalidate
	// Revalidate: send a conditional request upstream (Conditional) before
	// answering; a 304 refreshes the entry (Policy.Freshen), another
	// response replaces it (RFC 9111 §4.3).
	Revalidate
	// GatewayTimeout: answer 504 without contacting upstream; the request
	// said only-if-cached and nothing stored satisfies it (RFC 9111
	// §5.2.1.7).
	GatewayTimeout
)

var actionNames = [...]string{"?", "fetch", "fresh", "stale", "stale-while-revalidate", "revalidate", "gateway-timeout"}

// String names the action, as logs and golden files print it.
func (a Action) String() string {
	if a < 0 || int(a) >= len(actionNames) {
		return "?"
	}
	return actionNames[a]
}

// A Decision is the answer of Decide: how a stored response is used (RFC
// 9111 §4).
type Decision struct {
	// Action is what to do.
	Action Action
	// Age is the entry's current age (RFC 9111 §4.2.3).
	Age time.Duration
	// Reason names the rule that decided, for logs and tests.
	Reason string
}

// Miss decides for a request with no stored response: fetch it, or answer
// 504 when the request said only-if-cached (RFC 9111 §5.2.1.7).
func Miss(req Request) Decision {
	if requestCC(req.Header).Has("only-if-cached") {
		return Decision{Action: GatewayTimeout, Reason: "only-if-cached"}
	}
	return Decision{Action: Fetch, Reason: "miss"}
}

// Decide says how a stored entry can answer req at now (RFC 9111 §4, with
// RFC 5861 §3 and RFC 8246). The driver looks the entry up by the request's
// primary and secondary keys; Decide checks the rest of §4: variant, method,
// Authorization (§3.5), no-cache in either message, the request's max-age,
// min-fresh and max-stale (§5.2.1), freshness, must-revalidate,
// proxy-revalidate and s-maxage forbidding stale use (§4.2.4),
// stale-while-revalidate, and only-if-cached turning every upstream trip
// into a 504.
func Decide(e *Entry, req Request, now time.Time) Decision {
	return decideWith(nil, e, req, now)
}

// Decide is the package's Decide with the policy's rules: Immutable
// counts as the response's immutable directive, and Grace serves a stale
// response while it is revalidated (as stale-while-revalidate would) when
// the RFC's rules alone would revalidate it first.
func (p *Policy) Decide(e *Entry, req Request, now time.Time) Decision {
	return decideWith(&p.opts, e, req, now)
}

// Parsed is what the decisions read of an entry's stored fields, parsed
// once: a driver answering many requests from one entry keeps it beside
// the entry (Entry.Parse) and decides with DecideParsed. An entry
// refreshed by a 304 is another entry, with fields of its own.
type Parsed struct {
	// InitialAge is the entry's (Entry.InitialAge).
	InitialAge time.Duration
	// CC is its stored Cache-Control.
	CC CacheControl
}

// Parse returns what the decisions read of e's stored fields.
func (e *Entry) Parse() Parsed {
	return Parsed{InitialAge: e.InitialAge(), CC: responseCC(e.Header)}
}

// DecideParsed is Decide for an entry whose stored fields ps has parsed
// (ps is e.Parse()): the same decision, without parsing them again.
func (p *Policy) DecideParsed(e *Entry, ps *Parsed, req Request, now time.Time) Decision {
	d, ok := reusable(e, req)
	if !ok {
		return d
	}
	return decideAt(&p.opts, e, ps.CC, req, d, e.AgeFrom(ps.InitialAge, now))
}

// decideWith is Decide with the rules of o (nil: none).
func decideWith(o *Options, e *Entry, req Request, now time.Time) Decision {
	d, ok := reusable(e, req)
	if !ok {
		return d
	}
	return decideAt(o, e, responseCC(e.Header), req, d, e.Age(now))
}

// decideAt is decideWith for a reusable entry (d, from reusable) of age
// and stored Cache-Control cc.
func decideAt(o *Options, e *Entry, cc CacheControl, req Request, d Decision, age time.Duration) Decision {
	d.Age = age
	d.Action, d.Reason = decide(o, e, cc, req, d.Age)
	if requestCC(req.Header).Has("only-if-cached") && (d.Action == Revalidate || d.Action == Fetch) {
		d.Action, d.Reason = GatewayTimeout, "only-if-cached, "+d.Reason
	}
	return d
}

// reusable applies the rules that make the entry unusable for req whatever
// its age: another variant (§4.1) or a method other than GET and HEAD
// (§4: "the presented target URI and that of the stored response match"
// and "the request method associated with the stored response allows it to
// be used for the presented request").
func reusable(e *Entry, req Request) (Decision, bool) {
	d := Decision{Action: Fetch}
	switch {
	case req.Method != http.MethodGet && req.Method != http.MethodHead:
		d.Reason = "method"
	case !e.MatchesVary(req.Header):
		d.Reason = "vary mismatch"
	default:
		return d, true
	}
	if requestCC(req.Header).Has("only-if-cached") {
		d.Action = GatewayTimeout
	}
	return d, false
}

// decide returns the action for an entry of the given age.
func decide(o *Options, e *Entry, cc CacheControl, req Request, age time.Duration) (Action, string) {
	rcc := requestCC(req.Header)
	fresh := e.Lifetime > age
	immutable := cc.Has("immutable") || o != nil && o.Immutable
	switch {
	case req.Header.Get("Authorization") != "" && !sharedByOrigin(cc) && !cc.Has("must-revalidate"):
		return Revalidate, "authorization"
	case cc.Unqualified("no-cache"):
		return Revalidate, "response no-cache"
	case rcc.Has("no-cache"):
		return Revalidate, "request no-cache"
	case fresh && immutable:
		// RFC 8246 §2: an immutable response is not revalidated while
		// fresh on a reload (request max-age=0); a force reload sends
		// no-cache, handled above.
		return Fresh, "immutable"
	}
	if a, why := requestLimits(e, rcc, age); a != 0 {
		return a, why
	}
	if fresh {
		return Fresh, "fresh"
	}
	a, why := staleAction(cc, rcc, age-e.Lifetime)
	if a == Revalidate && why == "stale" && o != nil && o.Grace > 0 && age-e.Lifetime <= o.Grace {
		return StaleRevalidate, "grace"
	}
	return a, why
}

// requestLimits applies the request's max-age and min-fresh (RFC 9111
// §5.2.1.1, §5.2.1.3); zero when neither rules the entry out. An invalid
// argument is taken as zero, the restrictive reading.
func requestLimits(e *Entry, rcc CacheControl, age time.Duration) (Action, string) {
	if v, arg := rcc.Seconds("max-age"); arg != Absent && age > v {
		return Revalidate, "request max-age"
	}
	if v, arg := rcc.Seconds("min-fresh"); arg != Absent && e.Lifetime-age < v {
		return Revalidate, "request min-fresh"
	}
	return 0, ""
}

// staleAction decides for a stale entry: must-revalidate, proxy-revalidate
// and s-maxage forbid serving it stale (§4.2.4, §5.2.2.2, §5.2.2.8,
// §5.2.2.10); otherwise the request's max-stale (§5.2.1.2) or the
// response's stale-while-revalidate (RFC 5861 §3) may allow it.
func staleAction(cc, rcc CacheControl, staleness time.Duration) (Action, string) {
	if forbidsStale(cc) {
		return Revalidate, "stale, must revalidate"
	}
	if d, ok := rcc.Get("max-stale"); ok {
		if !d.HasValue {
			return Stale, "max-stale"
		}
		if v, arg := rcc.Seconds("max-stale"); arg == Valid && staleness <= v {
			return Stale, "max-stale"
		}
	}
	if v, arg := cc.Seconds("stale-while-revalidate"); arg == Valid && staleness <= v {
		return StaleRevalidate, "stale-while-revalidate"
	}
	return Revalidate, "stale"
}

// forbidsStale reports whether the response forbids a shared cache to use
// it stale (RFC 9111 §4.2.4: "a must-revalidate response directive, or an
// applicable s-maxage or proxy-revalidate response directive").
func forbidsStale(cc CacheControl) bool {
	return cc.Has("must-revalidate") || cc.Has("proxy-revalidate") || cc.Has("s-maxage")
}

// UpstreamFailed reports whether an upstream outcome counts as an error
// for stale-if-error (RFC 5861 §4: "any situation that would result in a
// 500, 502, 503, or 504 HTTP response status code"); status is 0 when the
// upstream did not answer (refused, reset, timed out).
func UpstreamFailed(status int) bool {
	switch status {
	case 0, 500, 502, 503, 504:
		return true
	}
	return false
}

// ServeOnError reports whether the stored entry may answer req at now in
// place of a failed upstream (status as in UpstreamFailed), and the rule
// that decided. A response that forbids stale use never does (RFC 9111
// §4.2.4; §5.2.2.2: a must-revalidate response "MUST generate an error
// response rather than reuse the stale response" when disconnected; a
// response's no-cache likewise). Otherwise, in this order: the request's
// stale-if-error covering the entry's staleness allows it (RFC 5861 §4);
// the response's stale-if-error, when present, decides alone (the origin
// chose its window); a request's no-cache refuses it (the client asked for
// a validated answer, RFC 9111 §5.2.1.4); else the policy's KeepOnError
// window decides. A fresh entry counts as zero seconds stale.
func (p *Policy) ServeOnError(e *Entry, req Request, status int, now time.Time) (bool, string) {
	if !UpstreamFailed(status) {
		return false, "not an upstream failure"
	}
	if _, ok := reusable(e, req); !ok {
		return false, "not reusable"
	}
	cc, rcc := responseCC(e.Header), requestCC(req.Header)
	if forbidsStale(cc) || cc.Unqualified("no-cache") {
		return false, "must revalidate"
	}
	staleness := max(0, e.Age(now)-e.Lifetime)
	if v, arg := rcc.Seconds("stale-if-error"); arg == Valid && staleness <= v {
		return true, "request stale-if-error"
	}
	if v, arg := cc.Seconds("stale-if-error"); arg != Absent {
		if arg == Valid && staleness <= v {
			return true, "stale-if-error"
		}
		return false, "past stale-if-error"
	}
	if rcc.Has("no-cache") {
		return false, "request no-cache"
	}
	if p.opts.KeepOnError < 0 {
		return false, "keep-on-error off"
	}
	if staleness <= p.opts.KeepOnError {
		return true, "keep-on-error"
	}
	return false, "past keep-on-error"
}
