package origin

import (
	"context"
	"errors"
	"net/http"
)

// HTTPStatus is the HTTP status that answers a failed read of a capacity
// store, the one mapping of the segment, file and image routes: 404 for
// a missing object, 416 for a range past its end, 503 for a store that
// cannot be reached (httpapi.Error adds Retry-After), 504 for one that
// did not answer in time, 502 for a bad answer. ok is false when err is
// none of these: the caller maps its own errors, and chooses what an
// unknown one is.
func HTTPStatus(err error) (code int, ok bool) {
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound, true
	case errors.Is(err, ErrInvalidRange):
		return http.StatusRequestedRangeNotSatisfiable, true
	case errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable, true
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, true
	case errors.Is(err, ErrUpstream):
		return http.StatusBadGateway, true
	}
	return 0, false
}
