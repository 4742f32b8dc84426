package app

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
)

// slowBodyAPI is an API with an upload route behind the token "tok" that
// reads its body as the upload routes do, and a long GET that reports
// whether its context ended.
func slowBodyAPI(canceled *bool) http.Handler {
	api := httpapi.New(httpapi.Options{AdminToken: "tok", Logger: quiet})
	api.Mount(httpapi.ModuleFunc(func(m *httpapi.Mounter) {
		m.HandleAdmin("PUT /up", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.Copy(io.Discard, httpapi.Body(w, r, 1<<20)); err != nil {
				httpapi.Error(w, http.StatusBadRequest, "the body did not arrive")
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		m.Handle("GET /long", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
				*canceled = true
			case <-time.After(90 * time.Second): // three body timeouts
			}
			w.WriteHeader(http.StatusNoContent)
		}))
	}))
	return api.Handler()
}

// send writes head on a new connection and returns the response (nil if
// the connection closed first) and the connection.
func (l *pipeListener) send(t *testing.T, head string) (*http.Response, net.Conn) {
	client, server := net.Pipe()
	l.conns <- server
	go io.WriteString(client, head)
	resp, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		return nil, client
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, client
}

// closed reports whether the server closed conn (a read ends at once).
func closed(conn net.Conn) bool {
	_, err := conn.Read(make([]byte, 1))
	return err != nil
}

// TestSlowBodiesAreCut: a client that sends headers and a Content-Length
// but no body is refused at once when it has no token (the 401 waited
// for the body to be drained), cut after the body timeout when it has
// one (it was held forever), and a long bodiless request keeps its
// context past that timeout. Fake time: a bounded
// wait for events, no sleeping.
func TestSlowBodiesAreCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var canceled bool
		ln := newPipeListener()
		tm := TimeoutsConfig{Body: Duration{30 * time.Second}}
		go serveHTTP(t.Context(), ln, slowBodyAPI(&canceled), nil, Options{}, tm, transport{}, quiet)

		start := time.Now()
		resp, conn := ln.send(t, "PUT /up HTTP/1.1\r\nHost: s\r\nContent-Length: 100000\r\n\r\n")
		if resp == nil || resp.StatusCode != 401 || time.Since(start) != 0 {
			t.Fatalf("no token: %v after %v, want 401 at once", resp, time.Since(start))
		}
		if !closed(conn) {
			t.Error("the connection of a refused body stayed open")
		}

		start = time.Now()
		resp, conn = ln.send(t, "PUT /up HTTP/1.1\r\nHost: s\r\nAuthorization: Bearer tok\r\nContent-Length: 100000\r\n\r\n")
		if took := time.Since(start); took != 30*time.Second {
			t.Errorf("a body that never came was given %v, want the body timeout 30s", took)
		}
		if resp != nil && resp.StatusCode != 400 || !closed(conn) {
			t.Errorf("stalled body: %v, connection open: %v", resp, !closed(conn))
		}

		resp, conn = ln.send(t, "GET /long HTTP/1.1\r\nHost: s\r\n\r\n")
		if resp == nil || resp.StatusCode != 204 || canceled {
			t.Errorf("long GET: %v, context canceled %v", resp, canceled)
		}
		conn.Close()
	})
}
