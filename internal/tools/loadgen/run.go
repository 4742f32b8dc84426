package loadgen

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// pcgStream is the second PCG seed word: Config.Seed alone picks the run.
const pcgStream = 0x5354524154410000 // "STRATA"

// Run reads the catalog at cfg.URL and runs one open-loop load run at
// cfg.Rate for cfg.Warmup + cfg.Duration. It returns when every request it
// sent has finished (each is bounded by its timeout). When ctx is cancelled
// it stops sending, aborts the requests in flight, and returns the report
// so far (Interrupted set) with an error wrapping ctx.Err(). Errors before
// the run wrap ErrConfig, ErrBadURL, ErrUnreachable, ErrCatalog or
// ErrEmptyCatalog.
func Run(ctx context.Context, cfg Config) (Report, error) {
	s, err := newSession(ctx, cfg)
	if err != nil {
		return Report{}, err
	}
	defer s.close()
	return s.run(ctx, s.cfg.Rate)
}

// A session is a validated config, its HTTP client and the workload plan,
// shared by the runs of a FindMax search.
type session struct {
	cfg       Config
	base      string
	client    *http.Client
	ownClient bool
	plan      *plan
}

// newSession validates cfg and reads the catalog.
func newSession(ctx context.Context, cfg Config) (*session, error) {
	cfg.EnsureDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	base, _ := baseURL(cfg.URL) // validated
	s := &session{cfg: cfg, base: base, client: cfg.Client}
	if s.client == nil {
		s.client, s.ownClient = newClient(cfg.MaxInflight), true
	}
	p, err := newPlan(ctx, s.client, base, cfg.catalogURL(base), cfg.Popularity)
	if err != nil {
		s.close()
		return nil, err
	}
	s.plan = p
	return s, nil
}

// close releases the session's idle connections if it owns the client.
func (s *session) close() {
	if s.ownClient {
		s.client.CloseIdleConnections()
	}
}

// newClient returns a keep-alive client that can hold maxInflight
// connections to one server open between requests.
func newClient(maxInflight int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil // measure the server, not a proxy from the environment
	t.MaxIdleConns = maxInflight
	t.MaxIdleConnsPerHost = maxInflight
	t.DisableCompression = true // count the bytes the server sends
	return &http.Client{Transport: t}
}

// run is one load run at rate.
func (s *session) run(ctx context.Context, rate float64) (Report, error) {
	r := &runner{s: s, cfg: &s.cfg, rate: rate, rec: newRecorder(s.plan),
		sem: make(chan struct{}, s.cfg.MaxInflight)}
	r.begin(ctx)
	stop := r.startProgress()
	elapsed := r.schedule(ctx)
	r.wg.Wait()
	stop()
	rep := r.report(ctx, elapsed)
	if err := ctx.Err(); err != nil {
		rep.Interrupted = true
		return rep, fmt.Errorf("loadgen: run interrupted: %w", err)
	}
	return rep, nil
}

// A runner is one run in progress.
type runner struct {
	s    *session
	cfg  *Config
	rate float64
	rec  *recorder
	sem  chan struct{} // one token per request in flight
	wg   sync.WaitGroup
	// start is when request 0 was due.
	start time.Time
	// before is the server's stats at the start of the measured window;
	// written by begin's goroutine, read after wg.Wait.
	before     map[string]float64
	sent, done atomic.Int64
	// viewers draws the requests when Config.Viewers is set; nil: each
	// request drawn on its own.
	viewers *viewers
}

// begin marks the start of the run and snapshots the server's stats at the
// start of the measured window: now, or in the background when warmup ends.
func (r *runner) begin(ctx context.Context) {
	if r.cfg.Warmup == 0 {
		r.before = serverStats(ctx, r.s.client, r.s.base)
		r.start = time.Now()
		return
	}
	r.start = time.Now()
	r.wg.Go(func() {
		if sleep(ctx, r.cfg.Warmup) {
			r.before = serverStats(ctx, r.s.client, r.s.base)
		}
	})
}

// sleep waits d or until ctx is done, and reports whether it waited d.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// schedule issues request k at start + k/rate until the run's end or until
// ctx is done, and returns the length of the measured window. It never
// waits for a response: the load is open-loop (FlashStream §5.1).
func (r *runner) schedule(ctx context.Context) time.Duration {
	rng := rand.New(rand.NewPCG(r.cfg.Seed, pcgStream))
	if r.cfg.Viewers > 0 {
		r.viewers = newViewers(r.s.plan, r.cfg.Viewers, rng, 0)
	}
	warm, end := r.cfg.Warmup, r.cfg.Warmup+r.cfg.Duration
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for k := 0; ; k++ {
		due := time.Duration(math.Round(float64(k) * float64(time.Second) / r.rate))
		if due >= end {
			return r.cfg.Duration
		}
		if !r.waitUntil(ctx, timer, due) {
			return min(max(time.Since(r.start)-warm, 0), r.cfg.Duration)
		}
		r.issue(ctx, rng, due, due >= warm)
	}
}

// waitUntil sleeps until due after start, and reports false if ctx is
// done first.
func (r *runner) waitUntil(ctx context.Context, timer *time.Timer, due time.Duration) bool {
	wait := time.Until(r.start.Add(due))
	if wait <= 0 {
		return ctx.Err() == nil
	}
	timer.Reset(wait)
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// issue draws the next request and sends it in its own goroutine, or
// records it as dropped when MaxInflight requests are in flight: a request
// is never delayed, which would make the load closed-loop.
func (r *runner) issue(ctx context.Context, rng *rand.Rand, due time.Duration, measured bool) {
	var q request
	if r.viewers != nil {
		q = r.viewers.pick(rng, r.cfg.released(due))
	} else {
		q = r.s.plan.pickShifted(rng, r.cfg.released(due))
	}
	r.sent.Add(1)
	select {
	case r.sem <- struct{}{}:
	default:
		r.finish(result{rank: q.rank, measured: measured, deadline: q.deadline, err: errDropped})
		return
	}
	if measured {
		r.rec.lagged(time.Since(r.start.Add(due)))
	}
	r.wg.Go(func() {
		res := r.fetch(ctx, q, measured)
		<-r.sem
		r.finish(res)
	})
}

// finish records a finished request.
func (r *runner) finish(res result) {
	r.rec.add(res)
	r.done.Add(1)
}

// fetch sends q and reads its body to the end.
func (r *runner) fetch(ctx context.Context, q request, measured bool) result {
	res := result{rank: q.rank, measured: measured, deadline: q.deadline}
	rctx, cancel := context.WithTimeout(ctx, r.timeout(q))
	defer cancel()
	t0 := time.Now()
	res.bytes, res.err = r.get(rctx, q.url)
	res.latency = time.Since(t0)
	// A request cut off because the run was cancelled says nothing about
	// the server.
	res.aborted = res.err != nil && ctx.Err() != nil
	return res
}

// timeout is how long q may take before it is abandoned.
func (r *runner) timeout(q request) time.Duration {
	if r.cfg.Timeout > 0 {
		return r.cfg.Timeout
	}
	return TimeoutFactor * q.deadline
}

// get GETs u and reads the body to the end, returning the bytes read. A
// non-2xx status is an error, reported after the body is drained so the
// connection is kept alive.
func (r *runner) get(ctx context.Context, u string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	resp, err := r.s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return n, err
	}
	if resp.StatusCode/100 != 2 {
		return n, statusError(resp.StatusCode)
	}
	return n, nil
}

// startProgress calls cfg.Progress every ProgressInterval until the
// returned stop is called; stop waits for the goroutine to end.
func (r *runner) startProgress() (stop func()) {
	fn := r.cfg.Progress
	if fn == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(r.cfg.ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fn(r.progress())
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// progress is a snapshot of the run.
func (r *runner) progress() Progress {
	el := time.Since(r.start)
	measured, misses := r.rec.measured()
	return Progress{Elapsed: el, Warmup: el < r.cfg.Warmup, Sent: r.sent.Load(),
		Done: r.done.Load(), InFlight: len(r.sem), Measured: measured, Misses: misses}
}

// report finishes the run's report, with the server's view when it has one.
func (r *runner) report(ctx context.Context, elapsed time.Duration) Report {
	rep := r.rec.report(elapsed)
	rep.URL, rep.RateRPS, rep.Seed = r.s.base, r.rate, r.cfg.Seed
	rep.Popularity, rep.ZipfS = r.cfg.Popularity.String(), r.cfg.Popularity.S()
	rep.CatalogTitles, rep.WarmupS = len(r.s.plan.targets), r.cfg.Warmup.Seconds()
	rep.Viewers = r.cfg.Viewers
	if r.before != nil {
		after := serverStats(context.WithoutCancel(ctx), r.s.client, r.s.base)
		rep.Server = statsDelta(r.before, after)
	}
	return rep
}
