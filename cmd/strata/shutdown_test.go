package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunHTTPShutdownWaitsForHandlers: a stream still running after the
// drain period has its connection closed, and runHTTP returns only once
// its handler has returned, so the devices under it close after it.
func TestRunHTTPShutdownWaitsForHandlers(t *testing.T) {
	shortShutdown(t, 200*time.Millisecond, 5*time.Second)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var returned atomic.Bool
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			time.Sleep(50 * time.Millisecond) // cleanup that still uses the tiers
			returned.Store(true)
		}()
		close(started)
		buf := make([]byte, 32<<10)
		for i := 0; i < 100000; i++ { // bounded: about 3 GB at most
			if _, err := w.Write(buf); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(time.Millisecond)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- runHTTP(ctx, ln, h, slog.New(slog.NewTextHandler(io.Discard, nil))) }()

	resp, err := http.Get("http://" + ln.Addr().String() + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	go io.Copy(io.Discard, resp.Body) // a client that keeps reading
	<-started
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("runHTTP: %v", err)
		}
		if !returned.Load() {
			t.Fatal("runHTTP returned while a handler was still running")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("runHTTP did not return")
	}
}

// TestRunHTTPShutdownReportsStuckHandlers: a handler that does not return
// after its connection is closed makes the shutdown an error.
func TestRunHTTPShutdownReportsStuckHandlers(t *testing.T) {
	shortShutdown(t, 50*time.Millisecond, 100*time.Millisecond)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release // stuck in I/O that ignores the connection
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- runHTTP(ctx, ln, h, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	go http.Get("http://" + ln.Addr().String() + "/stuck")
	<-started
	cancel()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("runHTTP returned nil with a handler still running")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("runHTTP did not return")
	}
}

// shortShutdown sets runHTTP's grace periods for one test.
func shortShutdown(t *testing.T, drain, wait time.Duration) {
	oldDrain, oldWait := shutdownDrain, shutdownWait
	shutdownDrain, shutdownWait = drain, wait
	t.Cleanup(func() { shutdownDrain, shutdownWait = oldDrain, oldWait })
}
