package server

import (
	"errors"
	"net/http"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/origin"
)

// capacityStatus is the status a failed capacity-tier read answers
// (origin.HTTPStatus; a node shutting down is 503, anything else 502),
// and what the answer says in general terms (the error itself goes to
// the log: it may name hosts and keys).
func capacityStatus(err error) (int, string) {
	code, ok := origin.HTTPStatus(err)
	switch {
	case errors.Is(err, engine.ErrStopped):
		code = http.StatusServiceUnavailable
	case !ok:
		code = http.StatusBadGateway
	}
	switch code {
	case http.StatusNotFound:
		return code, "not found"
	case http.StatusRequestedRangeNotSatisfiable:
		return code, "the range is past the end of the object"
	case http.StatusServiceUnavailable:
		return code, "the capacity tier is unavailable; retry later"
	case http.StatusGatewayTimeout:
		return code, "the capacity tier did not answer in time"
	}
	return code, "the capacity tier read failed"
}

// CapacityError answers a failed capacity-tier read: 404 for a missing
// object, 416 for a range past its end, 503 with Retry-After for a store
// that cannot be reached (or a node shutting down), 504 for a timeout,
// 502 for anything else. Like every problem, it is never cached
// (Cache-Control: no-store).
func CapacityError(w http.ResponseWriter, what string, err error) int {
	code, msg := capacityStatus(err)
	if code == http.StatusNotFound || code == http.StatusRequestedRangeNotSatisfiable {
		msg = what + ": " + msg
	}
	httpapi.Error(w, code, msg)
	return code
}
