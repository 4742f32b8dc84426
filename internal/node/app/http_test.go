package app

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pipeListener hands out in-memory connections, so that the HTTP server
// runs inside a synctest bubble (net.Pipe blocks durably; sockets do not).
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error { l.once.Do(func() { close(l.closed) }); return nil }

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// get sends GET path on a new connection and reads the response head;
// the body is drained until the connection closes.
func (l *pipeListener) get(t *testing.T, path string) net.Conn {
	client, server := net.Pipe()
	l.conns <- server
	go io.WriteString(client, "GET "+path+" HTTP/1.1\r\nHost: strata\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, resp.Body)
	return client
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

var quiet = slog.New(slog.DiscardHandler)

// serving starts serveHTTP of h with o on a pipe listener: it returns the
// listener, the cancel of serveHTTP's context and its result.
func serving(h http.Handler, o Options) (*pipeListener, context.CancelFunc, <-chan error) {
	ln := newPipeListener()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- serveHTTP(ctx, ln, h, nil, o, TimeoutsConfig{}, transport{}, quiet) }()
	return ln, cancel, errc
}

// TestServeHTTPWaitsForHandlers: a stream still running after the drain
// period has its connection closed, and serveHTTP returns only once its
// handler has returned, so the devices under it close after it.
func TestServeHTTPWaitsForHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var returned bool // set by the handler, read after serveHTTP returns
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("first bytes of a long stream"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()    // the connection is closed
			time.Sleep(time.Second) // cleanup that still uses the tiers
			returned = true
		})
		ln, cancel, errc := serving(h, Options{Drain: time.Minute, Wait: 5 * time.Second})
		conn := ln.get(t, "/stream")
		defer conn.Close()
		start := time.Now()
		cancel()
		if err := <-errc; err != nil {
			t.Fatalf("serveHTTP: %v", err)
		}
		if !returned {
			t.Fatal("serveHTTP returned while a handler was still running")
		}
		if took := time.Since(start); took != time.Minute+time.Second {
			t.Errorf("shutdown took %v, want the drain period and the handler's cleanup", took)
		}
	})
}

// TestServeHTTPReportsStuckHandlers: a handler that does not return
// after its connection is closed makes the shutdown an error after
// Options.Wait.
func TestServeHTTPReportsStuckHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-release // stuck in I/O that ignores the connection
		})
		ln, cancel, errc := serving(h, Options{Drain: time.Second, Wait: 3 * time.Second})
		conn := ln.get(t, "/stuck")
		defer conn.Close()
		start := time.Now()
		cancel()
		if err := <-errc; err == nil {
			t.Fatal("serveHTTP returned nil with a handler still running")
		}
		if took := time.Since(start); took != 4*time.Second {
			t.Errorf("gave up after %v, want drain + wait = 4s", took)
		}
		close(release)
	})
}

// TestServeHTTPIdleShutdown: with no request running, shutdown returns
// at once.
func TestServeHTTPIdleShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := newPipeListener()
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			errc <- serveHTTP(ctx, ln, http.NotFoundHandler(), nil, Options{Drain: time.Minute, Wait: time.Minute}, TimeoutsConfig{}, transport{}, quiet)
		}()
		synctest.Wait()
		start := time.Now()
		cancel()
		if err := <-errc; err != nil || time.Since(start) != 0 {
			t.Fatalf("idle shutdown: %v after %v", err, time.Since(start))
		}
	})
}
