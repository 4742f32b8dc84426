package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/strata-media/strata/internal/ident"
)

// Whole-file sessions (strata bench --files): viewers arrive open-loop,
// a Poisson process at Rate, each picks a file by the popularity law over
// Files (the first the most popular) and plays it from its first byte to
// its last at Bitrate, one GET, never reading ahead of its play-out clock:
// the VoD paper's workload (§6) against a live /files tier. A viewer the
// server refuses (503: no device has the bandwidth, Algorithm 2) is
// rejected; one that falls behind its clock by more than Stall stalled.

// Defaults of FilesConfig.
const (
	DefaultFilesBitrate = 245_000 // the VoD paper's 245 KB/s
	DefaultFilesStall   = 2 * time.Second
	DefaultFilesViewers = 4096
)

// FilesConfig describes a run of whole-file sessions. Zero fields but URL
// and Files take their defaults.
type FilesConfig struct {
	// URL is the server's base URL; files are GET URL/files/{id}.
	URL string
	// Files are the file ids, most popular first.
	Files []string
	// Rate is the viewers arriving per second (Poisson). Default 1.
	Rate float64
	// Bitrate is each viewer's play-out rate, bytes/s. Default 245 KB/s.
	Bitrate float64
	// Duration is the measured window; Warmup comes before it, with
	// viewers arriving at Rate but not counted. Default 60 s and 0.
	Duration, Warmup time.Duration
	// Popularity is the law files are drawn by. Default the VoD paper's
	// s = 0.271.
	Popularity Law
	// Seed seeds arrivals and draws. Default 1.
	Seed uint64
	// MaxViewers bounds viewers playing at once; an arrival beyond it is
	// an error. Default 4096.
	MaxViewers int
	// Stall is how far behind its play-out clock a viewer may fall
	// before it counts as stalled. Default 2 s.
	Stall time.Duration
	// Client sends the requests. Default: a client for MaxViewers
	// connections.
	Client *http.Client
	// Progress, if set, is called about once a second.
	Progress func(FilesProgress)
}

// FilesProgress is a snapshot of a files run.
type FilesProgress struct {
	Elapsed                      time.Duration
	Warmup                       bool
	Arrived, Playing, Rejected   int64
	Completed, Stalled, ErrorsIn int64
}

// FilesReport is the outcome of a files run over its measured window.
type FilesReport struct {
	URL        string  `json:"url"`
	Files      int     `json:"files"`
	RatePerS   float64 `json:"rate_per_s"`
	BitrateBps float64 `json:"bitrate_bps"`
	Popularity string  `json:"popularity"`
	Seed       uint64  `json:"seed"`
	DurationS  float64 `json:"duration_s"`
	WarmupS    float64 `json:"warmup_s"`
	// Arrivals counts viewers arriving in the window; each was Admitted
	// (200), Rejected (503) or an error (anything else, or beyond
	// MaxViewers).
	Arrivals int `json:"arrivals"`
	Admitted int `json:"admitted"`
	Rejected int `json:"rejected"`
	Errors   int `json:"errors"`
	// RejectRatio is Rejected / Arrivals: the paper's rejection
	// probability.
	RejectRatio float64 `json:"reject_ratio"`
	// Completed counts admitted viewers (of the window) that played their
	// file to the end before the run ended; Stalled those that fell behind
	// their clock by more than Stall (completed or not).
	Completed int `json:"completed"`
	Stalled   int `json:"stalled"`
	// MeanPlaying is the time-averaged number of viewers playing over the
	// window (warmup viewers still playing included); PeakPlaying its peak.
	MeanPlaying float64 `json:"mean_playing"`
	PeakPlaying int     `json:"peak_playing"`
	// MBPerS is the body bytes all viewers read in the window, per second.
	MBPerS float64 `json:"mb_per_s"`
	// Server is the change of the server's GET /stats numbers over the
	// window (keyed by dotted path, e.g. "files.served_bytes.ram").
	Server      map[string]float64 `json:"server,omitempty"`
	Interrupted bool               `json:"interrupted,omitempty"`
}

// EnsureDefaults fills c's zero fields.
func (c *FilesConfig) EnsureDefaults() {
	if c.Rate == 0 {
		c.Rate = 1
	}
	if c.Bitrate == 0 {
		c.Bitrate = DefaultFilesBitrate
	}
	if c.Duration == 0 {
		c.Duration = time.Minute
	}
	if c.Popularity.IsZero() {
		c.Popularity = Exponent(0.271)
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.MaxViewers == 0 {
		c.MaxViewers = DefaultFilesViewers
	}
	if c.Stall == 0 {
		c.Stall = DefaultFilesStall
	}
}

func (c *FilesConfig) validate() error {
	switch {
	case len(c.Files) == 0:
		return fmt.Errorf("%w: no files to play", ErrConfig)
	case !(c.Rate > 0) || math.IsInf(c.Rate, 0) || !(c.Bitrate > 0) || math.IsInf(c.Bitrate, 0):
		return fmt.Errorf("%w: rate %v and bitrate %v must be > 0", ErrConfig, c.Rate, c.Bitrate)
	case c.Duration < 0 || c.Warmup < 0 || c.Stall < 0 || c.MaxViewers < 0:
		return fmt.Errorf("%w: negative duration, warmup, stall or viewers", ErrConfig)
	}
	for _, f := range c.Files {
		if err := ident.ValidName(f); err != nil {
			return fmt.Errorf("%w: file %q: %v", ErrConfig, f, err)
		}
	}
	if err := c.Popularity.check(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	_, err := baseURL(c.URL)
	return err
}

// filesRun is one files run in progress.
type filesRun struct {
	cfg    FilesConfig
	base   string
	client *http.Client
	start  time.Time
	wg     sync.WaitGroup
	slots  chan struct{}

	arrived, playing, rejected, completed, stalled, errs atomic.Int64

	mu sync.Mutex // protects the fields below
	// counts of viewers arriving in the window
	arrivals, admitted, rej, errors, done, stall int
	bytes                                        int64
	// playing over time: the integral of viewers playing over the window
	area    float64
	last    time.Time
	now     int
	peak    int
	measure bool
}

// RunFiles runs whole-file sessions against cfg.URL for Warmup +
// Duration, then ends the viewers still playing and returns the report.
// When ctx is cancelled it stops early with the report so far
// (Interrupted) and an error wrapping ctx.Err().
func RunFiles(ctx context.Context, cfg FilesConfig) (FilesReport, error) {
	cfg.EnsureDefaults()
	if err := cfg.validate(); err != nil {
		return FilesReport{}, err
	}
	base, _ := baseURL(cfg.URL)
	r := &filesRun{cfg: cfg, base: base, client: cfg.Client, slots: make(chan struct{}, cfg.MaxViewers)}
	if r.client == nil {
		r.client = viewerClient(cfg.MaxViewers)
		defer r.client.CloseIdleConnections()
	}
	z, err := cfg.Popularity.sampler(len(cfg.Files))
	if err != nil {
		return FilesReport{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, pcgStream))
	vctx, stopViewers := context.WithCancel(ctx)
	defer stopViewers()
	var before map[string]float64
	if cfg.Warmup == 0 {
		before = serverStats(ctx, r.client, base)
	}
	r.start, r.last = time.Now(), time.Now()
	r.measure = cfg.Warmup == 0
	progress := r.progress(ctx)
	end := cfg.Warmup + cfg.Duration
	due := time.Duration(0)
	for {
		due += time.Duration(rng.ExpFloat64() / cfg.Rate * float64(time.Second))
		file := cfg.Files[z.Draw(rng)]
		if !r.measure && due >= cfg.Warmup && due < end {
			if !sleep(ctx, time.Until(r.start.Add(cfg.Warmup))) {
				break
			}
			before = serverStats(ctx, r.client, base)
			r.mu.Lock()
			r.measure, r.last = true, time.Now()
			r.mu.Unlock()
		}
		if due >= end || !sleep(ctx, time.Until(r.start.Add(due))) {
			break
		}
		r.arrive(vctx, file)
	}
	if ctx.Err() == nil {
		sleep(ctx, time.Until(r.start.Add(end)))
	}
	rep := r.report(ctx, before)
	stopViewers()
	r.wg.Wait()
	progress()
	if ctx.Err() != nil {
		rep.Interrupted = true
		return rep, fmt.Errorf("loadgen: files run interrupted: %w", ctx.Err())
	}
	return rep, nil
}

// ViewerBuffer is the receive buffer of a viewer's connection, bytes: a
// player reading at its bitrate holds about this much ahead, and the
// server's stream is where its client is, not megabytes ahead in socket
// buffers (loopback's grow to several MB, a whole short file).
const ViewerBuffer = 128 << 10

// viewerClient is newClient whose connections have ViewerBuffer receive
// buffers.
func viewerClient(n int) *http.Client {
	c := newClient(n)
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) { setRcvBuf(fd, ViewerBuffer) })
		}}
	c.Transport.(*http.Transport).DialContext = d.DialContext
	return c
}

// progress calls cfg.Progress about once a second until the returned
// function is called.
func (r *filesRun) progress(ctx context.Context) func() {
	if r.cfg.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				el := time.Since(r.start)
				r.cfg.Progress(FilesProgress{Elapsed: el, Warmup: el < r.cfg.Warmup, Arrived: r.arrived.Load(),
					Playing: r.playing.Load(), Rejected: r.rejected.Load(), Completed: r.completed.Load(),
					Stalled: r.stalled.Load(), ErrorsIn: r.errs.Load()})
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// arrive starts a viewer of file.
func (r *filesRun) arrive(ctx context.Context, file string) {
	r.arrived.Add(1)
	r.mu.Lock()
	measured := r.measure
	if measured {
		r.arrivals++
	}
	r.mu.Unlock()
	select {
	case r.slots <- struct{}{}:
	default:
		r.errs.Add(1)
		r.count(measured, func() { r.errors++ })
		return
	}
	r.wg.Go(func() {
		defer func() { <-r.slots }()
		r.view(ctx, file, measured)
	})
}

func (r *filesRun) count(measured bool, f func()) {
	if measured {
		r.mu.Lock()
		f()
		r.mu.Unlock()
	}
}

// playingChange moves the number of viewers playing by d, integrating it
// over the window.
func (r *filesRun) playingChange(d int) {
	r.playing.Add(int64(d))
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.measure {
		r.area += float64(r.now) * now.Sub(r.last).Seconds()
	}
	r.last, r.now = now, r.now+d
	r.peak = max(r.peak, r.now)
}

// view plays file from its first byte at the bitrate.
func (r *filesRun) view(ctx context.Context, file string, measured bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/files/"+url.PathEscape(file), nil)
	if err != nil {
		r.errs.Add(1)
		r.count(measured, func() { r.errors++ })
		return
	}
	resp, err := r.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			r.errs.Add(1)
			r.count(measured, func() { r.errors++ })
		}
		return
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable:
		r.rejected.Add(1)
		r.count(measured, func() { r.rej++ })
		return
	case resp.StatusCode != http.StatusOK:
		r.errs.Add(1)
		r.count(measured, func() { r.errors++ })
		return
	}
	r.count(measured, func() { r.admitted++ })
	r.playingChange(1)
	defer r.playingChange(-1)
	start := time.Now()
	buf := make([]byte, 32<<10)
	var got int64
	stalled := false
	for {
		n, err := resp.Body.Read(buf)
		got += int64(n)
		r.mu.Lock()
		if r.measure {
			r.bytes += int64(n)
		}
		r.mu.Unlock()
		clock := time.Duration(float64(got) / r.cfg.Bitrate * float64(time.Second))
		if behind := time.Since(start) - clock; !stalled && behind > r.cfg.Stall && err == nil {
			stalled = true
			r.stalled.Add(1)
			r.count(measured, func() { r.stall++ })
		}
		if errors.Is(err, io.EOF) {
			r.completed.Add(1)
			r.count(measured, func() { r.done++ })
			return
		}
		if err != nil {
			if ctx.Err() == nil {
				r.errs.Add(1)
				r.count(measured, func() { r.errors++ })
			}
			return
		}
		if !sleep(ctx, clock-time.Since(start)) {
			return
		}
	}
}

// report is the window's outcome, taken when it ends.
func (r *filesRun) report(ctx context.Context, before map[string]float64) FilesReport {
	after := serverStats(context.WithoutCancel(ctx), r.client, r.base)
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.measure {
		r.area += float64(r.now) * now.Sub(r.last).Seconds()
		r.last = now
	}
	window := max(now.Sub(r.start)-r.cfg.Warmup, 0).Seconds()
	rep := FilesReport{URL: r.base, Files: len(r.cfg.Files), RatePerS: r.cfg.Rate, BitrateBps: r.cfg.Bitrate,
		Popularity: r.cfg.Popularity.String(), Seed: r.cfg.Seed, DurationS: window, WarmupS: r.cfg.Warmup.Seconds(),
		Arrivals: r.arrivals, Admitted: r.admitted, Rejected: r.rej, Errors: r.errors,
		Completed: r.done, Stalled: r.stall, PeakPlaying: r.peak, Server: statsDelta(before, after)}
	if r.arrivals > 0 {
		rep.RejectRatio = float64(r.rej) / float64(r.arrivals)
	}
	if window > 0 {
		rep.MeanPlaying = r.area / window
		rep.MBPerS = float64(r.bytes) / 1e6 / window
	}
	return rep
}

// WriteText writes the report as a table (strata bench --files).
func (r FilesReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "bench %s --files: %g viewers/s over %d files by %s at %.0f B/s, %s measured (warmup %s), seed %d\n",
		r.URL, r.RatePerS, r.Files, r.Popularity, r.BitrateBps, seconds(r.DurationS), seconds(r.WarmupS), r.Seed)
	if r.Interrupted {
		fmt.Fprintln(w, "  interrupted: the report covers the run so far")
	}
	fmt.Fprintf(w, "  viewers     %d arrived, %d admitted, %d rejected (%.1f%%), %d errors\n",
		r.Arrivals, r.Admitted, r.Rejected, 100*r.RejectRatio, r.Errors)
	fmt.Fprintf(w, "  playing     %.1f mean, %d peak; %d played to the end, %d stalled\n", r.MeanPlaying, r.PeakPlaying, r.Completed, r.Stalled)
	fmt.Fprintf(w, "  throughput  %.2f MB/s\n", r.MBPerS)
	keys := make([]string, 0, len(r.Server))
	for k := range r.Server {
		if len(k) > 6 && k[:6] == "files." && r.Server[k] != 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  server      %-40s %s\n", k, delta(k, r.Server[k]))
	}
}
