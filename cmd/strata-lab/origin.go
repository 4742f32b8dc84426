package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/strata-media/strata/internal/lab/wanorigin"
)

// originSynopsis is origin's usage line.
const originSynopsis = "[--listen ADDR] [--delay D] [--bandwidth RATE] [--link RATE] [--titles N] [--segment-durations LIST] [--max-length D] [--max-age D] [--catalog-max-age D] [--seed N]"

// runOrigin serves a neutral WAN-like origin of a synthetic DASH library
// for benchmarking caches in front of it (scripts/peers).
func runOrigin(args []string, stdout, stderr io.Writer) error {
	listen, lib, srv, err := parseOrigin(args, stderr)
	if err != nil {
		return err
	}
	return serveOrigin(listen, srv, lib, stdout)
}

// parseOrigin turns origin's arguments into its listen address, library
// and handler.
func parseOrigin(args []string, stderr io.Writer) (string, *wanorigin.Library, http.Handler, error) {
	fs := newFlags("origin", originSynopsis, stderr)
	listen := fs.String("listen", "127.0.0.1:8090", "HTTP listen address")
	var opts wanorigin.Options
	fs.DurationVar(&opts.Delay, "delay", 40*time.Millisecond, "delay before each response's header (the WAN round trip)")
	fs.DurationVar(&opts.MaxAge, "max-age", 24*time.Hour, "Cache-Control max-age of the media, whole seconds (short: copies in the caches expire during a run)")
	fs.DurationVar(&opts.CatalogMaxAge, "catalog-max-age", time.Second, "Cache-Control max-age of the catalog (GET /videos), whole seconds")
	bw := fs.String("bandwidth", "100Mbit", "bandwidth of each response, bits/s (e.g. 100Mbit, 1Gbit; 0: no cap)")
	link := fs.String("link", "0", "bandwidth of all responses together, bits/s (0: no cap)")
	titles := fs.Int("titles", 8, "titles per segment duration (five renditions each)")
	durs := fs.String("segment-durations", "2s,6s,10s", "segment durations, one dataset of titles each")
	var lo wanorigin.LibraryOptions
	fs.DurationVar(&lo.MaxLength, "max-length", time.Hour, "cap on a title's length (the DASH sources run 10 to 97 minutes)")
	fs.Uint64Var(&lo.Seed, "seed", 1, "library seed")
	fs.IntVar(&opts.MaxInflight, "max-inflight", wanorigin.DefaultMaxInflight, "responses generated at once; more get 503")
	if err := parseFlags(fs, args); err != nil {
		return "", nil, nil, err
	}
	var err error
	if opts.Bandwidth, err = parseBits(*bw); err != nil {
		return "", nil, nil, fmt.Errorf("%w: --bandwidth: %w", errUsage, err)
	}
	if opts.Link, err = parseBits(*link); err != nil {
		return "", nil, nil, fmt.Errorf("%w: --link: %w", errUsage, err)
	}
	for name, d := range map[string]time.Duration{"--max-age": opts.MaxAge, "--catalog-max-age": opts.CatalogMaxAge} {
		if d < time.Second || d%time.Second != 0 {
			return "", nil, nil, fmt.Errorf("%w: %s %v: a whole number of seconds, at least 1s", errUsage, name, d)
		}
	}
	lo.TitlesPerDuration = *titles
	if lo.SegmentDurations, err = parseDurations(*durs); err != nil {
		return "", nil, nil, fmt.Errorf("%w: --segment-durations: %w", errUsage, err)
	}
	lib, err := wanorigin.NewLibrary(lo)
	if err != nil {
		return "", nil, nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	srv, err := wanorigin.New(lib, opts)
	if err != nil {
		return "", nil, nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	return *listen, lib, srv, nil
}

// serveOrigin listens on addr until interrupted.
func serveOrigin(addr string, h http.Handler, lib *wanorigin.Library, stdout io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "origin: %d titles, %.2f GiB of segments, on http://%s (counters at %s)\n",
		len(lib.Titles()), float64(lib.Bytes())/(1<<30), ln.Addr(), wanorigin.StatsPath)
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// parseBits parses a rate in bits/s ("100Mbit", "1Gbit", "500kbit",
// "2e6") into bytes/s.
func parseBits(s string) (float64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "/s"), "bit")
	mult := 1.0
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1e3, strings.TrimSuffix(t, "k")
	case strings.HasSuffix(t, "m"):
		mult, t = 1e6, strings.TrimSuffix(t, "m")
	case strings.HasSuffix(t, "g"):
		mult, t = 1e9, strings.TrimSuffix(t, "g")
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || !(f >= 0 && f <= 1e6) { // NaN fails too
		return 0, fmt.Errorf("invalid rate %q (e.g. 100Mbit)", s)
	}
	return f * mult / 8, nil
}

// parseDurations parses a comma-separated list of positive durations.
func parseDurations(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("invalid duration %q", f)
		}
		out = append(out, d)
	}
	return out, nil
}
