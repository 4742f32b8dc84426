package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/front"
)

// serveHTTP serves h on ln until ctx is done, then drains requests for up
// to o.Drain. Connections still busy then (long whole-file streams) are
// closed, and it waits up to o.Wait for their handlers to return, so that
// the caller closes the engine and devices only under handlers that have
// finished. On a plain listener, newFront (if it returns a Front) answers the
// plain segment reads and hands the other connections to net/http.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler, newFront func(TimeoutsConfig, func(int)) *front.Front,
	o Options, t TimeoutsConfig, tr transport, log *slog.Logger) error {
	var running handlers
	t = t.withDefaults()
	var fr *front.Front
	if tr.tls == nil && newFront != nil {
		fr = newFront(t, running.add)
	}
	if fr != nil {
		h = fr.Wrap(h)
	}
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			running.add(1)
			defer running.add(-1)
			if r.Body != http.NoBody { // nothing to read, no stall: no copy of r
				r = r.WithContext(httpapi.WithBodyStall(r.Context(), t.Body.Duration))
			}
			h.ServeHTTP(w, r)
		}),
		// Headers must arrive promptly, and a body may go without a byte
		// for Body at most (uploads move the deadline on as they read,
		// httpapi.Body), so slow clients hold nothing for long. Once a
		// request is read whole, net/http lifts the read deadline: a long
		// response keeps its context. A response has Write, except
		// whole-file streams, which move their deadline on while the
		// client reads.
		ReadHeaderTimeout: t.ReadHeader.Duration,
		ReadTimeout:       t.Body.Duration,
		WriteTimeout:      t.Write.Duration,
		IdleTimeout:       t.Idle.Duration,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		TLSConfig:         tr.tls,
		Protocols:         tr.protocols(),
	}
	errc := make(chan error, 1)
	go func() {
		switch {
		case tr.tls != nil:
			errc <- hs.ServeTLS(front.Lingering(ln), "", "") // the certificate comes from TLSConfig
		case fr != nil:
			hs.ConnContext = fr.ConnContext
			go fr.Serve(ln) //nolint:errcheck // its failure ends hs.Serve with it
			errc <- hs.Serve(fr.Listener())
		default:
			// Its closes linger as the Front's do (front.Lingering): a
			// malformed request never cuts the answer before it.
			errc <- hs.Serve(front.Lingering(ln))
		}
	}()
	select {
	case err := <-errc:
		// The listener failed: the connections already open still have
		// handlers running over the tiers the caller closes next.
		if fr != nil {
			fr.Close()
		}
		hs.Close()
		if waitErr := running.wait(o.Wait, log); waitErr != nil {
			return fmt.Errorf("serving: %w (and %v)", err, waitErr)
		}
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	dctx, cancel := context.WithTimeout(context.Background(), o.Drain)
	defer cancel()
	var ferr error
	if fr != nil {
		ferr = fr.Shutdown(dctx) // first: no more connections handed to hs
	}
	err := cmp.Or(hs.Shutdown(dctx), ferr)
	<-errc // Serve has returned http.ErrServerClosed
	if err == nil {
		return nil
	}
	log.Warn("requests still running after the drain period; closing their connections", "drain", o.Drain)
	if fr != nil {
		fr.Close()
	}
	hs.Close()
	return running.wait(o.Wait, log)
}

// handlers counts running handlers; wait blocks until none is left. It is
// not a sync.WaitGroup because a handler may start, on a connection
// accepted just before the close, while wait is waiting.
type handlers struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n reaches 0; nil while n is 0
}

func (h *handlers) add(d int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 && d > 0 {
		h.idle = make(chan struct{})
	}
	h.n += d
	if h.n == 0 {
		close(h.idle)
		h.idle = nil
	}
}

// wait waits up to d for the running handlers to return.
func (h *handlers) wait(d time.Duration, log *slog.Logger) error {
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	for {
		h.mu.Lock()
		n, idle := h.n, h.idle
		h.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-idle:
		case <-timeout.C:
			log.Warn("handlers still running; closing the tiers under them", "handlers", n, "waited", d)
			return fmt.Errorf("shutdown: %d handlers still running after the drain and %v", n, d)
		}
	}
}

// servePprof serves net/http/pprof's handlers on their own listener, so
// they are never exposed on the public address; stop closes it.
func servePprof(addr string, log *slog.Logger) (stop func() error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--debug-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Warn("debug listener", "addr", addr, "err", err)
		}
	}()
	return func() error { err := hs.Close(); <-done; return err }, nil
}
