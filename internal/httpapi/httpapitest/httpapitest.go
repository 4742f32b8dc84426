// Package httpapitest sends requests to a test server of the HTTP API and reads the whole answer.
package httpapitest

import (
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Do sends method url with the headers given as name, value pairs and
// returns the response and its whole body; a transport error fails t.
func Do(t testing.TB, method, url string, body io.Reader, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	return DoWith(t, http.DefaultClient, method, url, body, hdr...)
}

// DoWith is Do through client c.
func DoWith(t testing.TB, c *http.Client, method, url string, body io.Reader, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// Wire is a client that shows answers as they come: redirects not
// followed, bodies not decompressed (a test asks for identity itself).
var Wire = &http.Client{Transport: &http.Transport{DisableCompression: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Bearer is the header pair of an admin token, for Do.
func Bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// OneByteRanges is a Range header of n one-byte ranges, every other byte
// from 0: what a client amplifying reads sends.
func OneByteRanges(n int) string {
	var b strings.Builder
	b.WriteString("bytes=0-0")
	for i := 1; i < n; i++ {
		s := strconv.Itoa(2 * i)
		b.WriteString("," + s + "-" + s)
	}
	return b.String()
}

// Discard is a ResponseWriter that keeps the status and drops the body,
// as cheap as a writer can be: for benchmarks of handlers without a
// socket.
type Discard struct {
	H      http.Header
	Status int
}

// NewDiscard returns a Discard with an empty header.
func NewDiscard() *Discard { return &Discard{H: http.Header{}} }

func (d *Discard) Header() http.Header { return d.H }

func (d *Discard) WriteHeader(code int) {
	if d.Status == 0 {
		d.Status = code
	}
}

func (d *Discard) Write(p []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	return len(p), nil
}

// WaitGoroutines waits up to 5 s for the number of goroutines to fall
// back to before (a server shut down), and fails t with their stacks if
// it does not.
func WaitGoroutines(t testing.TB, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after the shutdown, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// HalfClose sends request, raw HTTP/1.1 with its CRLFs, on a new TCP
// connection to the server at url (http://host:port), calls waiting (if
// not nil: it returns once the request is held where the test wants it),
// then closes the connection's write side as a client that gives up does
// (net/http reads the FIN as the client gone and cancels the request's
// context), and returns every byte the server sent before it closed or
// reset the connection. It fails t if the server neither answers nor
// closes within 10 s.
func HalfClose(t testing.TB, url, request string, waiting func()) []byte {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	if waiting != nil {
		waiting()
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%q: no answer and no close in 10 s (read %q)", firstLine(request), got)
	}
	return got // a reset (err) counts as a close
}

// firstLine is the request line of a raw request.
func firstLine(request string) string {
	line, _, _ := strings.Cut(request, "\r\n")
	return line
}
