package httpapi

import (
	"net/http"
)

// CopyHTTP2Writes returns h whose writes of an HTTP/2 request's body hand
// net/http a copy of the bytes. net/http's HTTP/2 writer may still be
// reading a handler's bytes after its Write returned (a stream reset
// while a frame is written), and the bytes of a RAM hit in a memory file
// (decision 0036) are valid only until the handler releases the hit:
// HTTP/1.1 writes are done when Write returns, so they go as they are.
func CopyHTTP2Writes(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			w = &copyingWriter{ResponseWriter: w}
		}
		h.ServeHTTP(w, r)
	})
}

// copyingWriter copies what it is given before writing it.
type copyingWriter struct{ http.ResponseWriter }

func (c *copyingWriter) Write(p []byte) (int, error) {
	return c.ResponseWriter.Write(append([]byte(nil), p...))
}

// Flush flushes the writer under it, as http.Flusher.
func (c *copyingWriter) Flush() {
	http.NewResponseController(c.ResponseWriter).Flush() //nolint:errcheck // as http.Flusher: no error
}

// Unwrap lets http.ResponseController reach the writer under it.
func (c *copyingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
