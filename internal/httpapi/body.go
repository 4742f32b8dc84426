package httpapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// DefaultBodyStall is how long a request body may go without a byte
// arriving when the server has not said otherwise (WithBodyStall).
const DefaultBodyStall = time.Minute

type bodyStallKey struct{}

// WithBodyStall returns ctx carrying d, the longest a request body may
// go without progress: the server sets it on every request from its
// configured read timeout, and Body's reads move the deadline on by it.
func WithBodyStall(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, bodyStallKey{}, d)
}

func bodyStall(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(bodyStallKey{}).(time.Duration); ok && d > 0 {
		return d
	}
	return DefaultBodyStall
}

// Body returns r's body, at most limit bytes (http.MaxBytesReader: a
// *http.MaxBytesError past it), read under a deadline that each read
// moves on by the body stall (WithBodyStall): an upload takes as long as
// its size needs, one that stops sending ends. (Once the body has been
// read to its end, net/http lifts the deadline: the work after it,
// packaging a video, keeps the request's context.)
func Body(w http.ResponseWriter, r *http.Request, limit int64) io.Reader {
	return &progressBody{r: http.MaxBytesReader(w, r.Body, limit), rc: http.NewResponseController(w),
		stall: bodyStall(r.Context())}
}

// progressBody moves the connection's read deadline on while bytes
// arrive.
type progressBody struct {
	r     io.Reader
	rc    *http.ResponseController
	stall time.Duration
}

func (p *progressBody) Read(b []byte) (int, error) {
	p.rc.SetReadDeadline(time.Now().Add(p.stall)) //nolint:errcheck // not every writer has deadlines (tests)
	return p.r.Read(b)
}

// RefusedLinger is how long the connection of a refused body stays open
// after the answer (CloseAfter): long enough for the bytes of a small body
// already on their way to arrive and be read, so that the close is a FIN
// after them and not a reset that could cut the answer short; short
// enough that a client that sends headers and no body holds nothing.
const RefusedLinger = time.Second

// CloseAfter makes the connection close after this response, within
// RefusedLinger: for a body the handler will not read. Connection: close
// alone does not do it: net/http reads and discards a small unread body
// (under 256 KiB) after the handler returns, whatever the answer says,
// and a client that sends headers and then nothing held the connection
// until the read timeout (forever without one). The read deadline ends
// that read; the answer, already written, is not delayed.
func CloseAfter(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	// Not every writer has deadlines (a test's recorder): then nothing to end.
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(RefusedLinger)) //nolint:errcheck
}

// CheckLength refuses, with 413 and before a byte of it is read, a body
// whose declared Content-Length is above limit, and returns false. A
// body without a declared length is bounded by Body as it is read.
func CheckLength(w http.ResponseWriter, r *http.Request, limit int64) bool {
	if r.ContentLength <= limit {
		return true
	}
	CloseAfter(w)
	Error(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a body of %d bytes: the limit is %d", r.ContentLength, limit))
	return false
}
