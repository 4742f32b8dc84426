package server

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/origin"
)

// Every capacity-tier failure answers the status its sentinel names, as
// a problem that is never cached; only 503 says when to retry.
func TestCapacityError(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{origin.ErrNotFound, 404},
		{origin.ErrInvalidRange, 416},
		{origin.ErrUnavailable, 503},
		{engine.ErrStopped, 503},
		{origin.ErrTimeout, 504},
		{context.DeadlineExceeded, 504},
		{origin.ErrUpstream, 502},
		{errors.New("disk on fire"), 502},
	} {
		rec := httptest.NewRecorder()
		err := fmt.Errorf("reading v/r/1.m4s: %w", c.err)
		if got := CapacityError(rec, "v/r/1.m4s", err); got != c.code || rec.Code != c.code {
			t.Errorf("%v: %d (written %d), want %d", c.err, got, rec.Code, c.code)
		}
		if _, perr := httpapi.ReadProblem(rec.Result(), rec.Body.Bytes()); perr != nil || rec.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%v: %v, Cache-Control %q", c.err, perr, rec.Header().Get("Cache-Control"))
		}
		if (rec.Header().Get("Retry-After") != "") != (c.code == 503) {
			t.Errorf("%v: Retry-After %q", c.err, rec.Header().Get("Retry-After"))
		}
	}
}
