package httpapi

import (
	"context"
	"errors"
	"net/http"
)

// AbortIfGone ends the handler without an answer when r's client has gone
// away. net/http cancels a request's context when its client closes the
// connection, or half-closes it: the FIN after a request reads as a
// client that gave up. A handler that then returned without writing would
// get net/http's implicit 200 with an empty body, which a cache in front
// could keep as the object; one that wrote an error would write it to
// nobody. The panic with http.ErrAbortHandler, which net/http (and the
// Front) recover without logging, closes the connection with no status.
//
// A context that ran out of time (context.DeadlineExceeded) is not a
// client gone: the handler answers it (504) as usual.
func AbortIfGone(r *http.Request) {
	if ClientGone(r) {
		panic(http.ErrAbortHandler)
	}
}

// ClientGone reports whether r's context was canceled: its client went
// away (or the server is closing the connection).
func ClientGone(r *http.Request) bool {
	return errors.Is(r.Context().Err(), context.Canceled)
}
