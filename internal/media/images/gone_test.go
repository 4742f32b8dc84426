package images

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/origin"
)

// A client that half-closes after asking for an IIIF size never derived,
// which waits for a render slot, gets no answer: the connection closes
// without a status, never net/http's implicit empty 200 (which a cache
// in front could store as the image).
func TestClientGoneGetsNoAnswer(t *testing.T) {
	st := openTestStore(t, nil)
	if _, _, err := st.Ingest("m", encodeTestPNG(t, testPhoto(300, 200, 10))); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Options{Tier: tier.Options{RAMBytes: 32 << 20}, Logger: quietLogger()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	h := NewHandler(st, eng, HandlerOptions{IIIF: IIIFOptions{MaxConcurrent: 1}})
	api := httpapi.New(httpapi.Options{AdminToken: testToken, Logger: quietLogger()})
	if err := api.Mount(h); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(api.Handler())
	t.Cleanup(ts.Close)
	h.renders <- struct{}{}           // every render slot taken
	t.Cleanup(func() { <-h.renders }) // first: the derivation runs
	waiting := func() {               // until the request's load waits for a slot
		for deadline := time.Now().Add(10 * time.Second); eng.Stats().Origin.Loads == 0; {
			if time.Now().After(deadline) {
				t.Fatal("the request never waited for a render slot")
			}
			time.Sleep(time.Millisecond)
		}
	}

	got := httpapitest.HalfClose(t, ts.URL, "GET /iiif/3/m/full/77,/0/default.jpg HTTP/1.1\r\nHost: strata\r\n\r\n", waiting)
	if len(got) != 0 {
		t.Fatalf("a client gone got %q; want the connection closed without an answer", got)
	}
}

// The image routes answer the bucket's failures as the segment and file
// routes do (origin.HTTPStatus), and every 503 says when to retry.
func TestFailStatus(t *testing.T) {
	h := NewHandler(openTestStore(t, nil), nil, HandlerOptions{})
	for _, c := range []struct {
		err  error
		code int
	}{
		{origin.ErrUnavailable, 503},
		{ErrClosed, 503},
		{ErrChanged, 503},
		{origin.ErrTimeout, 504},
		{context.DeadlineExceeded, 504},
		{origin.ErrUpstream, 502},
		{ErrMissingObject, 502},
		{origin.ErrNotFound, 404},
		{ErrNotFound, 404},
		{errors.New("badger: disk on fire"), 500},
	} {
		rec := httptest.NewRecorder()
		h.fail(rec, httptest.NewRequest("GET", "/images/a/small", nil), fmt.Errorf("images: reading a: %w", c.err))
		if rec.Code != c.code || (rec.Header().Get("Retry-After") != "") != (c.code == 503) {
			t.Errorf("%v: %d, Retry-After %q; want %d, Retry-After on a 503", c.err, rec.Code, rec.Header().Get("Retry-After"), c.code)
		}
	}
}
