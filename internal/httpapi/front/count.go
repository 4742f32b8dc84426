package front

import (
	"io"
	"net/http"
)

// A CountingWriter records the status and counts the body bytes a
// handler writes: the Front's, to know whether a handed-over connection's
// answer is complete (Wrap), and the access log's.
type CountingWriter struct {
	http.ResponseWriter
	Status int   // the status sent, 0 before the header
	Bytes  int64 // the body bytes written
}

func (c *CountingWriter) WriteHeader(code int) {
	if c.Status == 0 && code >= 200 {
		c.Status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *CountingWriter) Write(p []byte) (int, error) {
	if c.Status == 0 {
		c.Status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(p)
	c.Bytes += int64(n)
	return n, err
}

// ReadFrom keeps the connection's sendfile path for whole files.
func (c *CountingWriter) ReadFrom(r io.Reader) (int64, error) {
	if c.Status == 0 {
		c.Status = http.StatusOK
	}
	var n int64
	var err error
	if rf, ok := c.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(struct{ io.Writer }{c.ResponseWriter}, r) // Write only: no recursion
	}
	c.Bytes += n
	return n, err
}

// Flush flushes the response if the writer under it can.
func (c *CountingWriter) Flush() {
	if c.Status == 0 {
		c.Status = http.StatusOK
	}
	http.NewResponseController(c.ResponseWriter).Flush() //nolint:errcheck // as http.Flusher: no error
}

// Unwrap lets http.ResponseController reach the connection's writer
// (whole-file streams move their write deadline on).
func (c *CountingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
