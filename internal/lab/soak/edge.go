package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-media/strata/internal/lab/torture/versions"
)

// EdgeOptions configure the soak of an edge: a steady rate of checked GET
// and HEAD requests while its origin publishes new versions and is
// stopped and restarted on a schedule.
type EdgeOptions struct {
	// URL is the edge's base URL, PID its process id (VmRSS sampled).
	URL string
	PID int
	// Bound is the resident memory allowed, bytes.
	Bound int64
	// Origin is the edge's origin, serving; the soak stops and restarts it.
	Origin *versions.Origin
	// Rate is the requests per second, Duration how long.
	Rate     float64
	Duration time.Duration
	// Every OutageEvery the origin is stopped for Outage. Defaults 1 min
	// and 20 s.
	OutageEvery, Outage time.Duration
	// Publish: a new version of a random object this often. Default 1 s.
	Publish time.Duration
	// MaxInFlight bounds the requests in flight; a request due when it is
	// reached is counted as an overrun and not sent. Default 512.
	MaxInFlight int
	Seed        uint64
	// Log receives a progress line every ten seconds (nil: io.Discard).
	Log io.Writer
}

// Causes of an error answer (or none) that the soak tells apart.
// An error with the origin down for an object answered earlier in the
// soak is told apart by the edge's X-Strata-Cache on it: MISS says the
// edge held no copy it could read any more (evicted, or never admitted
// to flash), anything else that it held one and failed to answer it.
const (
	CauseNeverServed = "origin down, object never served before"
	CauseDropped     = "origin down, object served before, no longer held by the edge"
	CauseServed      = "origin down, object served before and held by the edge"
	CauseOriginUp    = "origin up"
	CauseChanged     = "body cut: the object changed between slices"
)

// EdgeResult is an edge soak's outcome.
type EdgeResult struct {
	Rate      float64 `json:"rate_rps"`
	DurationS float64 `json:"duration_s"`
	Requests  int64   `json:"requests"`
	// Answers are the 200s checked whole (bytes, size, Last-Modified,
	// staleness); Wrong those that failed a check.
	Answers int64 `json:"answers_checked"`
	Wrong   int64 `json:"wrong"`
	// WrongExamples are the first wrong answers.
	WrongExamples []string `json:"wrong_examples,omitempty"`
	// Errors are the failed requests by cause, then status ("502",
	// "transport", "cut").
	Errors map[string]map[string]int64 `json:"errors_by_cause"`
	// ErrorExamples are the first errors of each cause: the status, or
	// the client's error, with the edge's X-Strata-Cache.
	ErrorExamples map[string][]string `json:"error_examples,omitempty"`
	Overruns      int64               `json:"overruns"`
	Stale         int64               `json:"stale_answers"`
	ByCache       map[string]int64    `json:"by_cache"`
	ByTier        map[string]int64    `json:"by_tier"`
	// DownAnswers are the answers given while the origin was down.
	DownAnswers int64    `json:"answers_while_origin_down"`
	Outages     int      `json:"outages"`
	Versions    int      `json:"versions_published"`
	P50Ms       float64  `json:"p50_ms"`
	P99Ms       float64  `json:"p99_ms"`
	MaxRSS      int64    `json:"max_rss_bytes"`
	Bound       int64    `json:"bound_bytes"`
	Samples     []sample `json:"-"`
	// Edge is what the edge's /stats said at the end: what it dropped
	// and how its flash reads fared, for the errors of CauseDropped.
	Edge *EdgeStats `json:"edge_stats,omitempty"`
}

// EdgeStats are the counters of the edge's /stats that explain an error
// for an object it served before.
type EdgeStats struct {
	// RAMEvictedUnsaved are objects evicted from RAM without reaching
	// flash; AdmissionRejects blocks flash admission refused;
	// FlashEvicted segments evicted from flash.
	RAMEvictedUnsaved uint64 `json:"ram_evicted_unsaved"`
	AdmissionRejects  uint64 `json:"ssd_admission_rejects"`
	FlashEvicted      uint64 `json:"ssd_evicted_segments"`
	// FlashReadTimeouts are flash reads past the deadline, SkippedReads
	// those not tried (reads late or degraded); LastResort the answers
	// the edge then read from flash anyway, the upstream failing.
	FlashReadTimeouts uint64 `json:"flash_read_timeouts"`
	SkippedReads      uint64 `json:"flash_skipped_reads"`
	LastResort        uint64 `json:"edge_last_resort"`
	StaleServed       uint64 `json:"edge_stale_served"`
	Errors            uint64 `json:"edge_errors"`
}

// readEdgeStats reads EdgeStats from the edge's /stats.
func readEdgeStats(client *http.Client, url string) (*EdgeStats, error) {
	var st struct {
		Edge struct {
			LastResort  uint64 `json:"last_resort"`
			StaleServed uint64 `json:"stale_served"`
			Errors      uint64 `json:"errors"`
		} `json:"edge"`
		RAM struct {
			EvictedUnsaved uint64 `json:"evicted_unsaved"`
		} `json:"ram"`
		SSD struct {
			AdmissionRejects uint64 `json:"admission_rejects"`
			EvictedSegments  uint64 `json:"evicted_segments"`
			Health           struct {
				SkippedReads uint64 `json:"skipped_reads"`
				Read         struct {
					Errors map[string]uint64 `json:"errors"`
				} `json:"read"`
			} `json:"health"`
		} `json:"ssd"`
	}
	resp, err := client.Get(url + "/stats")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("soak: the edge's /stats: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return nil, fmt.Errorf("soak: the edge's /stats: %w", err)
	}
	return &EdgeStats{RAMEvictedUnsaved: st.RAM.EvictedUnsaved, AdmissionRejects: st.SSD.AdmissionRejects,
		FlashEvicted: st.SSD.EvictedSegments, FlashReadTimeouts: st.SSD.Health.Read.Errors["timeout"],
		SkippedReads: st.SSD.Health.SkippedReads, LastResort: st.Edge.LastResort, StaleServed: st.Edge.StaleServed,
		Errors: st.Edge.Errors}, nil
}

// Memory is the resident memory samples as a Result, for its CSV and SVG.
func (r EdgeResult) Memory() Result {
	return Result{Samples: r.Samples, MaxRSS: r.MaxRSS, Bound: r.Bound}
}

// Check fails on a wrong answer, an error of any cause but an object the
// edge did not hold with the origin down (never served, or no longer held:
// CauseDropped) or a body cut because the object changed, an overrun, or
// memory above the bound. An edge answers what it holds whatever its
// origin does: an error for an object it held fails the check.
func (r EdgeResult) Check() error {
	var errs []error
	if r.Wrong > 0 {
		errs = append(errs, fmt.Errorf("%d wrong answers: %v", r.Wrong, r.WrongExamples))
	}
	for cause, by := range r.Errors {
		if cause != CauseNeverServed && cause != CauseDropped && cause != CauseChanged {
			errs = append(errs, fmt.Errorf("errors with cause %q: %v", cause, by))
		}
	}
	if r.Overruns > 0 {
		errs = append(errs, fmt.Errorf("%d requests not sent: too many in flight (the edge or the client fell behind)", r.Overruns))
	}
	if r.MaxRSS > r.Bound {
		errs = append(errs, fmt.Errorf("resident memory reached %s, above the bound %s", mib(r.MaxRSS), mib(r.Bound)))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrFailed, errors.Join(errs...))
	}
	return nil
}

// edgeRun is one soak's shared state.
type edgeRun struct {
	opts   EdgeOptions
	client *http.Client
	served sync.Map // path -> struct{}: answered 200 at least once
	// outage is odd while the origin is down; it counts stops and starts.
	outage atomic.Int64

	mu  sync.Mutex // protects res's maps and counters, lat
	res EdgeResult
	lat []time.Duration
}

// RunEdge runs the edge soak and checks it (EdgeResult.Check).
func RunEdge(ctx context.Context, opts EdgeOptions) (EdgeResult, error) {
	if opts.OutageEvery <= 0 {
		opts.OutageEvery = time.Minute
	}
	if opts.Outage <= 0 {
		opts.Outage = 20 * time.Second
	}
	if opts.Publish <= 0 {
		opts.Publish = time.Second
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 512
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	r := &edgeRun{opts: opts, client: edgeClient()}
	r.res = EdgeResult{Rate: opts.Rate, Bound: opts.Bound, Errors: map[string]map[string]int64{},
		ByCache: map[string]int64{}, ByTier: map[string]int64{}}
	if _, err := RSS(opts.PID); err != nil {
		return r.res, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Duration)
	defer cancel()
	var bg sync.WaitGroup
	start := time.Now()
	bg.Go(func() { opts.Origin.Churn(ctx, opts.Publish, opts.Seed) })
	bg.Go(func() { r.outages(ctx) })
	bg.Go(func() { r.sample(ctx, start) })
	var reqs sync.WaitGroup
	r.load(ctx, start, &reqs)
	reqs.Wait()
	cancel()
	bg.Wait()
	if r.outage.Load()%2 == 1 {
		if err := opts.Origin.Start(""); err != nil {
			return r.res, err
		}
	}
	if st, err := readEdgeStats(r.client, opts.URL); err == nil {
		r.res.Edge = st
	} else {
		fmt.Fprintf(opts.Log, "soak: %v\n", err)
	}
	r.res.DurationS = time.Since(start).Seconds()
	r.res.Versions = opts.Origin.Versions()
	slices.Sort(r.lat)
	if n := len(r.lat); n > 0 {
		r.res.P50Ms = float64(r.lat[n/2]) / 1e6
		r.res.P99Ms = float64(r.lat[n*99/100]) / 1e6
	}
	return r.res, r.res.Check()
}

func edgeClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DisableCompression = true
	tr.MaxIdleConnsPerHost = 256
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// outages stops the origin every OutageEvery (the first after one
// period) and starts it again Outage later.
func (r *edgeRun) outages(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.opts.OutageEvery - r.opts.Outage):
		}
		r.outage.Add(1)
		r.opts.Origin.Stop()
		r.mu.Lock()
		r.res.Outages++
		r.mu.Unlock()
		fmt.Fprintf(r.opts.Log, "soak: origin stopped for %s\n", r.opts.Outage)
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.opts.Outage):
		}
		if err := r.opts.Origin.Start(""); err != nil {
			fmt.Fprintf(r.opts.Log, "soak: restarting the origin: %v\n", err)
			return
		}
		r.outage.Add(1)
		fmt.Fprintln(r.opts.Log, "soak: origin restarted")
	}
}

// sample records the edge's VmRSS every second and logs progress every
// ten.
func (r *edgeRun) sample(ctx context.Context, start time.Time) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		if rss, err := RSS(r.opts.PID); err == nil {
			r.mu.Lock()
			r.res.Samples = append(r.res.Samples, sample{time.Since(start), rss})
			r.res.MaxRSS = max(r.res.MaxRSS, rss)
			if i%10 == 0 {
				fmt.Fprintf(r.opts.Log, "soak: %4.0fs  requests %d  checked %d  wrong %d  errors %d  stale %d  RSS %s (max %s, bound %s)\n",
					time.Since(start).Seconds(), r.res.Requests, r.res.Answers, r.res.Wrong, r.errorsLocked(), r.res.Stale,
					mib(rss), mib(r.res.MaxRSS), mib(r.opts.Bound))
			}
			r.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (r *edgeRun) errorsLocked() int64 {
	n := int64(0)
	for _, by := range r.res.Errors {
		for _, k := range by {
			n += k
		}
	}
	return n
}

// load sends requests at the rate, open loop, until ctx is done.
func (r *edgeRun) load(ctx context.Context, start time.Time, reqs *sync.WaitGroup) {
	rng := rand.New(rand.NewPCG(r.opts.Seed, 0x534f414b))
	paths := r.opts.Origin.Paths()
	zipf := rand.NewZipf(rng, 1.05, 1, uint64(len(paths)-1))
	interval := time.Duration(float64(time.Second) / r.opts.Rate)
	inflight := make(chan struct{}, r.opts.MaxInFlight)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for n := int64(0); ; n++ {
		due := start.Add(time.Duration(n) * interval)
		timer.Reset(time.Until(due))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		p := paths[zipf.Uint64()]
		method := http.MethodGet
		if rng.IntN(10) == 0 {
			method = http.MethodHead
		}
		select {
		case inflight <- struct{}{}:
		default:
			r.mu.Lock()
			r.res.Overruns++
			r.mu.Unlock()
			continue
		}
		reqs.Go(func() {
			defer func() { <-inflight }()
			r.request(method, p)
		})
	}
}

// request sends one request and records its outcome.
func (r *edgeRun) request(method, path string) {
	o := r.opts.Origin
	before := r.outage.Load()
	_, served := r.served.Load(path)
	start := time.Now()
	req, _ := http.NewRequest(method, r.opts.URL+path, nil)
	resp, err := r.client.Do(req)
	var body []byte
	status := ""
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		status = "cut"
		if resp.StatusCode != http.StatusOK {
			status = fmt.Sprint(resp.StatusCode)
		}
	} else {
		status = "transport"
	}
	elapsed := time.Since(start)
	down := before%2 == 1 || r.outage.Load() != before
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.Requests++
	r.lat = append(r.lat, elapsed)
	fail := func(cause string) {
		by := r.res.Errors[cause]
		if by == nil {
			by = map[string]int64{}
			r.res.Errors[cause] = by
		}
		by[status]++
		if len(r.res.ErrorExamples[cause]) < 5 {
			ex := fmt.Sprintf("%s %s after %s: ", method, path, elapsed.Round(time.Millisecond))
			if resp != nil {
				ex += fmt.Sprintf("%s, X-Strata-Cache %q", resp.Status, resp.Header.Get("X-Strata-Cache"))
			}
			if err != nil {
				ex += " " + err.Error()
			}
			if r.res.ErrorExamples == nil {
				r.res.ErrorExamples = map[string][]string{}
			}
			r.res.ErrorExamples[cause] = append(r.res.ErrorExamples[cause], ex)
		}
	}
	switch {
	case err != nil && status == "cut" && !down && o.ChangedAfter(path, time.Time{}):
		// With the origin up the edge cuts a body only when a slice has
		// another version's validators: the object changed since the
		// edge stored its first slice.
		fail(CauseChanged)
		return
	case err != nil || resp.StatusCode != http.StatusOK:
		switch {
		case !down:
			fail(CauseOriginUp)
		case served && resp != nil && resp.Header.Get("X-Strata-Cache") == "MISS":
			fail(CauseDropped)
		case served:
			fail(CauseServed)
		default:
			fail(CauseNeverServed)
		}
		return
	}
	a := versions.Answer{Path: path, Method: method, Status: resp.StatusCode, Header: resp.Header,
		ContentLength: resp.ContentLength, Body: body}
	cache := resp.Header.Get("X-Strata-Cache")
	v, cerr := o.Check(a)
	if cerr == nil && cache != "STALE" && !o.CurrentAfter(path, v, start.Add(-o.MaxAge()-200*time.Millisecond)) {
		cerr = fmt.Errorf("%s %s: version %d (X-Strata-Cache %s, Age %s) superseded %s before the request, beyond max-age",
			method, path, v, cache, resp.Header.Get("Age"), start.Sub(o.Superseded(path, v)).Round(time.Millisecond))
	}
	if cerr != nil {
		r.res.Wrong++
		if len(r.res.WrongExamples) < 5 {
			r.res.WrongExamples = append(r.res.WrongExamples, cerr.Error())
		}
		return
	}
	r.served.Store(path, struct{}{})
	r.res.Answers++
	r.res.ByCache[cache]++
	r.res.ByTier[resp.Header.Get("X-Strata-Tier")]++
	if cache == "STALE" {
		r.res.Stale++
	}
	if down {
		r.res.DownAnswers++
	}
}

// FindEdgeMax is the edge's throughput with the origin up and the cache
// warm: every object read once, then concurrency clients reading the
// objects (checked) as fast as it answers, for d. It returns answers per
// second.
func FindEdgeMax(ctx context.Context, url string, o *versions.Origin, concurrency int, d time.Duration, seed uint64) (float64, error) {
	client := edgeClient()
	get := func(p string) error {
		resp, err := client.Get(url + p)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		_, err = o.Check(versions.Answer{Path: p, Method: http.MethodGet, Status: resp.StatusCode, Header: resp.Header,
			ContentLength: resp.ContentLength, Body: b})
		return err
	}
	for _, p := range o.Paths() {
		if err := get(p); err != nil {
			return 0, fmt.Errorf("soak: warming the edge: %w", err)
		}
	}
	var n atomic.Int64
	var wg sync.WaitGroup
	var first atomic.Value
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	paths := o.Paths()
	for w := range concurrency {
		rng := rand.New(rand.NewPCG(seed, uint64(w)))
		zipf := rand.NewZipf(rng, 1.05, 1, uint64(len(paths)-1))
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := get(paths[zipf.Uint64()]); err != nil {
					if ctx.Err() == nil {
						first.CompareAndSwap(nil, err)
					}
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return 0, fmt.Errorf("soak: finding the maximum: %w", err)
	}
	return float64(n.Load()) / d.Seconds(), nil
}

// SortedCauses are the error causes in name order, for printing.
func (r EdgeResult) SortedCauses() []string {
	var c []string
	for k := range r.Errors {
		c = append(c, k)
	}
	sort.Strings(c)
	return c
}
