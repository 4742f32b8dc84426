package front

import (
	"io"
	"net/http"
)

// countingWriter records the status and counts the body bytes a handler
// of a handed-over connection writes (Wrap: is the answer complete?).
type countingWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (c *countingWriter) WriteHeader(code int) {
	if c.status == 0 && code >= 200 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(p)
	c.bytes += int64(n)
	return n, err
}

// ReadFrom keeps the connection's sendfile path for whole files.
func (c *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	var n int64
	var err error
	if rf, ok := c.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(struct{ io.Writer }{c.ResponseWriter}, r) // Write only: no recursion
	}
	c.bytes += n
	return n, err
}

// Flush flushes the response if the writer under it can.
func (c *countingWriter) Flush() {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	http.NewResponseController(c.ResponseWriter).Flush() //nolint:errcheck // as http.Flusher: no error
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
