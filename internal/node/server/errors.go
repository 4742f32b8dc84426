package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/origin"
)

// RetryAfter is the Retry-After of a 503 for a capacity tier that cannot
// be reached: long enough for a restarting store, short enough for a
// player's retry.
const RetryAfter = 5 * time.Second

// capacityStatus is the status a failed capacity-tier read answers, and
// what the answer says in general terms (the error itself goes to the
// log: it may name hosts and keys).
func capacityStatus(err error) (int, string) {
	switch {
	case errors.Is(err, origin.ErrNotFound):
		return http.StatusNotFound, "not found"
	case errors.Is(err, origin.ErrInvalidRange):
		return http.StatusRequestedRangeNotSatisfiable, "the range is past the end of the object"
	case errors.Is(err, origin.ErrUnavailable), errors.Is(err, engine.ErrStopped):
		return http.StatusServiceUnavailable, "the capacity tier is unavailable; retry later"
	case errors.Is(err, origin.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, "the capacity tier did not answer in time"
	}
	return http.StatusBadGateway, "the capacity tier read failed"
}

// CapacityError answers a failed capacity-tier read: 404 for a missing
// object, 416 for a range past its end, 503 with Retry-After for a store
// that cannot be reached (or a node shutting down), 504 for a timeout,
// 502 for anything else. Like every problem, it is never cached
// (Cache-Control: no-store).
func CapacityError(w http.ResponseWriter, what string, err error) int {
	code, msg := capacityStatus(err)
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(int(RetryAfter.Seconds())))
	}
	if code == http.StatusNotFound || code == http.StatusRequestedRangeNotSatisfiable {
		msg = what + ": " + msg
	}
	httpapi.Error(w, code, msg)
	return code
}
