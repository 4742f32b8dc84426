package origin

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// HTTPStatus maps each store failure, wrapped or not, to its status, and
// leaves every other error to the caller.
func TestHTTPStatus(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
		ok   bool
	}{
		{ErrNotFound, 404, true},
		{ErrInvalidRange, 416, true},
		{ErrUnavailable, 503, true},
		{ErrTimeout, 504, true},
		{context.DeadlineExceeded, 504, true},
		{ErrUpstream, 502, true},
		{errors.New("disk on fire"), 0, false},
		{context.Canceled, 0, false},
	} {
		for _, err := range []error{c.err, fmt.Errorf("reading k: %w", c.err)} {
			if code, ok := HTTPStatus(err); code != c.code || ok != c.ok {
				t.Errorf("%v: %d %v, want %d %v", err, code, ok, c.code, c.ok)
			}
		}
	}
}
