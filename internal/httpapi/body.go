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

// CloseAfter makes the connection close after this response, so that a
// body the handler will not read is neither drained nor waited for (a
// client that sends headers and then nothing would hold the response
// until the read timeout, or forever without one).
func CloseAfter(w http.ResponseWriter) { w.Header().Set("Connection", "close") }

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
