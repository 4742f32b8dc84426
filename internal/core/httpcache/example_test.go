package httpcache_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/strata-media/strata/internal/core/httpcache"
)

// The edge driver's round: store an upstream response, decide for later
// requests, revalidate when stale, refresh the entry from the 304.
func Example() {
	p := httpcache.NewPolicy(httpcache.Options{})
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	req := httpcache.Request{Method: "GET", Header: http.Header{}}

	resp := httpcache.Response{Status: 200, Header: http.Header{
		"Cache-Control": {"max-age=60, stale-if-error=600"},
		"Etag":          {`"v1"`},
	}}
	e, refusal := p.Store(req, resp, t0, t0.Add(20*time.Millisecond))
	if refusal != httpcache.Stored {
		fmt.Println("not stored:", refusal)
		return
	}

	now := t0.Add(30 * time.Second)
	d := httpcache.Decide(e, req, now)
	fmt.Println(d.Action, "Age:", e.AgeHeader(now))

	now = t0.Add(90 * time.Second)
	d = httpcache.Decide(e, req, now)
	fmt.Println(d.Action, e.Conditional())

	// The upstream is down: stale-if-error lets the entry answer.
	ok, why := p.ServeOnError(e, req, 0, now)
	fmt.Println("serve on error:", ok, why)

	// The upstream answers 304: the entry is fresh again.
	nm := http.Header{"Etag": {`"v1"`}, "Cache-Control": {"max-age=120"}}
	if e.Matches304(nm) {
		e = p.Freshen(e, nm, now, now)
	}
	fmt.Println(httpcache.Decide(e, req, now.Add(time.Minute)).Action)
	// Output:
	// fresh Age: 30
	// revalidate map[If-None-Match:["v1"]]
	// serve on error: true stale-if-error
	// fresh
}
