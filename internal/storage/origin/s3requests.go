package origin

import (
	"net/http"
	"sync/atomic"
)

// S3Requests count the HTTP requests an S3 origin sent to the object
// store, retries included, by what they asked: what a bucket's operator
// is billed for and what a cache in front of it should spare.
type S3Requests struct {
	// Get is object GETs (whole or ranged).
	Get uint64 `json:"get"`
	// Head is HEADs (object stats, bucket checks).
	Head uint64 `json:"head"`
	// List is bucket listings (the catalog).
	List uint64 `json:"list"`
	// Other is any other request.
	Other uint64 `json:"other"`
	// Failed is requests that got no answer or an error status (4xx and
	// 5xx, a missing object's 404 included).
	Failed uint64 `json:"failed"`
}

// Total is every request sent.
func (r S3Requests) Total() uint64 { return r.Get + r.Head + r.List + r.Other }

// countingTransport counts the requests it carries (S3Requests).
type countingTransport struct {
	next                           http.RoundTripper
	get, head, list, other, failed atomic.Uint64
}

// RoundTrip counts r and sends it on.
func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	switch q := r.URL.Query(); {
	case r.Method == http.MethodHead:
		c.head.Add(1)
	case r.Method == http.MethodGet && (q.Has("list-type") || q.Has("prefix") || q.Has("delimiter")):
		c.list.Add(1)
	case r.Method == http.MethodGet:
		c.get.Add(1)
	default:
		c.other.Add(1)
	}
	resp, err := c.next.RoundTrip(r)
	if err != nil || resp.StatusCode >= 400 {
		c.failed.Add(1)
	}
	return resp, err
}

// CloseIdleConnections closes the idle connections of the transport it
// wraps, if it can.
func (c *countingTransport) CloseIdleConnections() {
	if t, ok := c.next.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

func (c *countingTransport) load() S3Requests {
	return S3Requests{Get: c.get.Load(), Head: c.head.Load(), List: c.list.Load(), Other: c.other.Load(), Failed: c.failed.Load()}
}
