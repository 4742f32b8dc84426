package httpapi

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fastOdd is a FastHandler that misbehaves in the ways a real one can
// (a file whose size changed between its stat and its read, a body on a
// 304, a Connection field of its own): the Front's answers to it must be
// net/http's, byte for byte.
type fastOdd struct{}

func (fastOdd) ServeFast(w http.ResponseWriter, r *http.Request, c CORS) (string, int, *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/plain") // as every real FastHandler: the Front does not sniff
	switch r.URL.Path {
	case "/v/long": // more body than its Content-Length, in one write
		h.Set("Content-Length", "4")
		io.WriteString(w, "abcdSMUGGLED")
	case "/v/long2": // the same in two writes
		h.Set("Content-Length", "4")
		io.WriteString(w, "ab")
		io.WriteString(w, "cdSMUGGLED")
	case "/v/304": // a body on a status that has none
		h.Del("Content-Type")
		h.Set("Etag", `"x"`)
		w.WriteHeader(http.StatusNotModified)
		io.WriteString(w, "SMUGGLED")
		return "GET /v/{id}", http.StatusNotModified, nil
	case "/v/204":
		h.Del("Content-Type")
		w.WriteHeader(http.StatusNoContent)
		io.WriteString(w, "SMUGGLED")
		return "GET /v/{id}", http.StatusNoContent, nil
	case "/v/close": // the handler closes the connection
		h.Set("Connection", "close")
		h.Set("Content-Length", "1")
		io.WriteString(w, "x")
	default:
		h.Set("Content-Length", "4")
		io.WriteString(w, "fast")
	}
	return "GET /v/{id}", http.StatusOK, nil
}

func oddAPI() *API {
	a := New(Options{})
	a.Mount(ModuleFunc(func(m *Mounter) {
		m.Handle("GET /v/{id}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "general") }))
		m.HandleFast("/v/", fastOdd{}, "GET /v/{id}")
	}))
	return a
}

// serveBoth serves a twice on 127.0.0.1, as the node does: with a Front
// in front of net/http, and net/http alone (the oracle). It returns their
// addresses and a stop that shuts both down.
func serveBoth(t *testing.T, a *API, o FrontOptions) (front, plain string, fr *Front, stop func()) {
	t.Helper()
	h := a.FastPath(a.Handler(), nil)
	fr = a.Front(o)
	if fr == nil {
		t.Fatal("no front")
	}
	lf, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hf := &http.Server{Handler: fr.Wrap(h), ConnContext: fr.ConnContext,
		ReadHeaderTimeout: o.ReadHeader, IdleTimeout: o.Idle, WriteTimeout: o.Write}
	hp := &http.Server{Handler: h, ReadHeaderTimeout: o.ReadHeader, IdleTimeout: o.Idle, WriteTimeout: o.Write}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); fr.Serve(lf) }()            //nolint:errcheck
	go func() { defer wg.Done(); hf.Serve(fr.Listener()) }() //nolint:errcheck
	go func() { defer wg.Done(); hp.Serve(lp) }()            //nolint:errcheck
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			fr.Shutdown(ctx) //nolint:errcheck
			hf.Shutdown(ctx) //nolint:errcheck
			hp.Shutdown(ctx) //nolint:errcheck
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return lf.Addr().String(), lp.Addr().String(), fr, stop
}

var wireDate = regexp.MustCompile(`Date: [^\r\n]*\r\n`)

// wire sends raw on a new connection and returns all it reads back until
// the server closes it (or 2 s of silence), the Date fields blanked.
func wire(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	io.Copy(&got, c) //nolint:errcheck // EOF, a reset or the deadline: what came is the answer
	return wireDate.ReplaceAllString(got.String(), "Date: <date>\r\n")
}

func req(path string, fields ...string) string {
	s := "GET " + path + " HTTP/1.1\r\nHost: a\r\n"
	for _, f := range fields {
		s += f + "\r\n"
	}
	return s + "\r\n"
}

// lastReq ends a pipelined burst: net/http answers it and closes.
var lastReq = req("/v/end", "Connection: close")

// TestFrontHostileHandlerAnswers: what a FastHandler writes past its
// Content-Length, or as the body of a 304 or 204, must not reach the
// wire (the client would read it as the answer to its next pipelined
// request: a response desync), and a Connection: close of its own ends
// the connection, exactly as net/http alone answers them.
func TestFrontHostileHandlerAnswers(t *testing.T) {
	front, plain, _, _ := serveBoth(t, oddAPI(), FrontOptions{ReadHeader: time.Second, Idle: time.Second, Write: time.Second})
	for _, path := range []string{"/v/long", "/v/long2", "/v/304", "/v/204", "/v/close"} {
		raw := req(path) + req("/v/ok") + lastReq
		got, want := wire(t, front, raw), wire(t, plain, raw)
		if got != want {
			t.Errorf("%s: the Front answered\n%q\nnet/http alone\n%q", path, got, want)
		}
		if strings.Contains(got, "SMUGGLED") {
			t.Errorf("%s: bytes past the answer's end on the wire", path)
		}
	}
}
