package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"strings"
)

// problemWriter passes a handler's response through, except a plain-text
// error (what http.Error writes: the mux's 404 and 405, http.ServeContent's
// 416 and 412), which it turns into a problem with the text as detail:
// every error leaves in one format.
type problemWriter struct {
	http.ResponseWriter
	code   int          // the error being captured; 0: passing through
	text   bytes.Buffer // its body, up to MaxDetail
	passed bool         // the header has gone out unchanged
	relay  bool         // the answer is another server's: never captured
	status int          // the status sent (or captured); 0: none yet
	route  string       // the pattern of the route that answered; "": none
}

// Relay marks the answer written to w as another server's, relayed as it
// came (a proxy's): an error status with a text/plain body is passed
// through, not turned into a problem details body. The handler calls it
// before it writes; on a writer that is not the API's, it does nothing.
func Relay(w http.ResponseWriter) {
	for {
		if p, ok := w.(*problemWriter); ok {
			p.relay = true
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

func (p *problemWriter) WriteHeader(code int) {
	if p.passed || p.code != 0 {
		return
	}
	if code >= 200 || code == http.StatusSwitchingProtocols {
		p.status = code
	}
	if code >= 400 && !p.relay && strings.HasPrefix(p.Header().Get("Content-Type"), "text/plain") {
		p.code = code
		return
	}
	p.passed = true
	p.ResponseWriter.WriteHeader(code)
}

func (p *problemWriter) Write(b []byte) (int, error) {
	if !p.passed && p.code == 0 {
		p.WriteHeader(http.StatusOK)
	}
	if p.code != 0 {
		if room := MaxDetail - p.text.Len(); room > 0 {
			p.text.Write(b[:min(len(b), room)])
		}
		return len(b), nil
	}
	return p.ResponseWriter.Write(b)
}

// ReadFrom keeps the underlying writer's sendfile path for file bodies.
func (p *problemWriter) ReadFrom(r io.Reader) (int64, error) {
	if !p.passed && p.code == 0 {
		p.WriteHeader(http.StatusOK)
	}
	if p.code != 0 {
		return io.Copy(io.Discard, r)
	}
	return io.Copy(p.ResponseWriter, r)
}

// Flush sends buffered data to the client, unless an error is captured.
func (p *problemWriter) Flush() {
	if p.code != 0 {
		return
	}
	if !p.passed {
		p.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(p.ResponseWriter).Flush() //nolint:errcheck // as http.Flusher: no error to report
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (p *problemWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// finish writes the captured error, if any.
func (p *problemWriter) finish() {
	if p.code != 0 {
		Error(p.ResponseWriter, p.code, strings.TrimSpace(p.text.String()))
	}
}
