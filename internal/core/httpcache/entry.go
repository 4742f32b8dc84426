package httpcache

import (
	"net/http"
	"strconv"
	"time"
)

// An Entry is a stored response without its body (RFC 9111 §3): what the
// decisions need to reuse, revalidate and refresh it. Its fields are plain data so the
// driver can persist them beside the body.
type Entry struct {
	// Status is the stored response's status code.
	Status int
	// Header holds the stored response fields (see Policy.Store).
	Header http.Header
	// RequestTime is when the request that produced the response (or the
	// last 304 that refreshed it) was sent (RFC 9111 §4.2.3 request_time).
	RequestTime time.Time
	// ResponseTime is when that response was received (response_time).
	ResponseTime time.Time
	// Lifetime is the freshness lifetime computed when the entry was stored
	// or last refreshed (RFC 9111 §4.2.1).
	Lifetime time.Duration
	// Heuristic says Lifetime is a heuristic one (RFC 9111 §4.2.2).
	Heuristic bool
	// Variant is the secondary key of the request that produced the
	// response, from the stored Vary (RFC 9111 §4.1; see VaryKey).
	Variant string
}

// Store returns the entry to keep for resp, received for req between
// requestTime and responseTime, or why it may not be stored (RFC 9111 §3).
func (p *Policy) Store(req Request, resp Response, requestTime, responseTime time.Time) (*Entry, Refusal) {
	if r := p.Storable(req, resp); r != Stored {
		return nil, r
	}
	e := &Entry{
		Status:       resp.Status,
		Header:       p.storedHeader(resp.Header, responseTime),
		RequestTime:  requestTime,
		ResponseTime: responseTime,
	}
	names, _ := ParseVary(e.Header)
	e.Variant = VaryKey(names, req.Header)
	e.Lifetime, e.Heuristic = p.FreshnessLifetime(e.Status, e.Header)
	return e, Stored
}

// FreshnessLifetime returns the freshness lifetime of a response with
// status and stored header h (RFC 9111 §4.2.1), for a shared cache: the
// first of Surrogate-Control's max-age aimed at this cache (see
// surrogateCC), s-maxage, max-age, Expires - Date; without any, a heuristic
// (§4.2.2) when the status is heuristically cacheable or the response is
// public, zero otherwise. A freshness directive or Expires that is present
// but invalid gives zero: already expired (§4.2.1, §5.3).
//
// The operator's rules then apply (Options): TTL replaces the lifetime,
// MaxTTL caps it.
func (p *Policy) FreshnessLifetime(status int, h http.Header) (lifetime time.Duration, heuristic bool) {
	lifetime, heuristic = p.originLifetime(status, h)
	if p.opts.TTL > 0 {
		lifetime = p.opts.TTL
	}
	if p.opts.MaxTTL > 0 {
		lifetime = min(lifetime, p.opts.MaxTTL)
	}
	return lifetime, heuristic
}

// originLifetime is the lifetime the origin's fields give (RFC 9111
// §4.2.1), with the heuristic of §4.2.2 (or DefaultTTL) when they give none.
func (p *Policy) originLifetime(status int, h http.Header) (lifetime time.Duration, heuristic bool) {
	if v, arg := surrogateCC(h).Seconds("max-age"); arg != Absent {
		return v, false
	}
	cc := responseCC(h)
	for _, name := range []string{"s-maxage", "max-age"} {
		if v, arg := cc.Seconds(name); arg != Absent {
			return v, false
		}
	}
	date, dateArg := headerDate(h, "Date")
	if expires, arg := headerDate(h, "Expires"); arg != Absent {
		if arg == Invalid || dateArg != Valid {
			return 0, false
		}
		return max(0, expires.Sub(date)), false
	}
	if !heuristicStatus[status] && !cc.Has("public") {
		return 0, false
	}
	if p.opts.DefaultTTL > 0 {
		return p.opts.DefaultTTL, true
	}
	return p.heuristic(h, date, dateArg), true
}

// heuristic is the lifetime RFC 9111 §4.2.2 suggests: a fraction of the
// time since Last-Modified, capped; zero without a usable Last-Modified.
func (p *Policy) heuristic(h http.Header, date time.Time, dateArg Arg) time.Duration {
	lm, arg := headerDate(h, "Last-Modified")
	if arg != Valid || dateArg != Valid || p.opts.HeuristicFraction < 0 {
		return 0
	}
	d := time.Duration(float64(date.Sub(lm)) * p.opts.HeuristicFraction)
	return min(max(p.opts.HeuristicMin, d), p.opts.HeuristicMax).Truncate(time.Second)
}

// Age returns the current age of the entry at now (RFC 9111 §4.2.3):
//
//	apparent_age = max(0, response_time - date_value)
//	response_delay = response_time - request_time
//	corrected_age_value = age_value + response_delay
//	corrected_initial_age = max(apparent_age, corrected_age_value)
//	resident_time = now - response_time
//	current_age = corrected_initial_age + resident_time
//
// A missing or invalid Date gives an apparent age of zero; a missing or
// invalid Age field an age_value of zero (§5.1).
func (e *Entry) Age(now time.Time) time.Duration {
	return e.AgeFrom(e.InitialAge(), now)
}

// InitialAge returns the entry's corrected_initial_age (RFC 9111 §4.2.3):
// its age when it was received, from its stored fields and times alone.
// A driver that answers many requests from one entry computes it once
// (parsing the stored Date and Age) and its age at each request with
// AgeFrom; a refreshed entry (Refresh) has another.
func (e *Entry) InitialAge() time.Duration {
	var apparent time.Duration
	if date, arg := headerDate(e.Header, "Date"); arg == Valid {
		apparent = max(0, e.ResponseTime.Sub(date))
	}
	ageValue, _ := ParseAge(e.Header)
	corrected := ageValue + max(0, e.ResponseTime.Sub(e.RequestTime))
	return max(apparent, corrected)
}

// AgeFrom returns the entry's current_age at now (Age) from its
// InitialAge, initial: initial plus the resident time.
func (e *Entry) AgeFrom(initial time.Duration, now time.Time) time.Duration {
	return initial + max(0, now.Sub(e.ResponseTime))
}

// Fresh reports whether the entry is fresh at now (RFC 9111 §4.2:
// freshness_lifetime > current_age).
func (e *Entry) Fresh(now time.Time) bool { return e.Lifetime > e.Age(now) }

// AgeHeader returns the Age field value to send with the entry at now (RFC
// 9111 §5.1): whole seconds, rounded down, at most 2^31.
func (e *Entry) AgeHeader(now time.Time) string {
	return AgeField(e.Age(now))
}

// AgeField returns the Age field value of a current age (AgeHeader).
func AgeField(age time.Duration) string {
	return strconv.FormatInt(int64(min(age, maxDelta)/time.Second), 10)
}

// ResponseHeader returns the header fields to send with the entry at now:
// the stored ones with Age replaced by the current age (RFC 9111 §4: "the
// cache MUST generate an Age header field ... replacing any present in the
// response").
func (e *Entry) ResponseHeader(now time.Time) http.Header {
	h := e.Header.Clone()
	h.Set("Age", e.AgeHeader(now))
	return h
}
