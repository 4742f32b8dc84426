package torture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-media/strata/internal/lab/torture/versions"
)

// EdgeOptions configure the edge torture: a real strata serve in edge
// mode (--upstream /=ORIGIN, a flash file) in front of an origin that
// publishes new versions of its objects while the edge is loaded,
// killed with SIGKILL at random moments and restarted.
type EdgeOptions struct {
	RunOptions
	// Objects is the number of objects at the origin. Default 48.
	Objects int
	// MaxAge is the origin's max-age (whole seconds). Default 2 s.
	MaxAge time.Duration
	// Publish is how often the origin publishes a new version of a
	// random object during the load. Default 100 ms.
	Publish time.Duration
	// Grace and KeepOnError are the edge's --edge-grace and
	// --edge-keep-on-error, the windows past max-age a stale answer is
	// allowed. Defaults 0 (none) and 10 s.
	Grace, KeepOnError time.Duration
	// EdgeArgs are more strata serve flags for the edge, after the
	// torture's (tests give it a lifetime the checks do not allow).
	EdgeArgs []string
}

// EnsureDefaults fills the zero fields of o.
func (o *EdgeOptions) EnsureDefaults() {
	o.ensureDefaults(50, 300*time.Millisecond, 3*time.Second)
	if o.Objects <= 0 {
		o.Objects = 48
	}
	if o.MaxAge < time.Second {
		o.MaxAge = 2 * time.Second
	}
	if o.Publish <= 0 {
		o.Publish = 100 * time.Millisecond
	}
	if o.KeepOnError == 0 {
		o.KeepOnError = 10 * time.Second
	}
}

// errChanged marks a body the edge cut because the object changed at the
// origin while it read its slices.
var errChanged = errors.New("torture: body cut, the object changed")

// staleSlack is the time allowed beyond a window for the clocks' reads:
// the origin notes a publication, the client a request's start.
const staleSlack = 200 * time.Millisecond

// EdgeSummary counts what an edge torture did and checked.
type EdgeSummary struct {
	Cycles     int   // cycles completed (killed, restarted, verified)
	EarlyKills int   // of them, killed again during start-up
	Answers    int64 // answers checked whole, during the loads and after restarts
	Whole      int64 // of them, 200s to GET
	Ranges     int64 // 206s
	Heads      int64 // 200s to HEAD
	Stale      int64 // answers marked X-Strata-Cache: STALE
	Cut        int64 // requests cut by a kill (not checked)
	// CutChanged are bodies cut because the object changed at the origin
	// between the slices the edge read (not checked).
	CutChanged int64
	Bytes      int64 // body bytes compared
	// ByTier are the answers by X-Strata-Tier (ram, ssd, upstream).
	ByTier map[string]int64
	// ByCache are the answers by X-Strata-Cache (HIT, MISS, ...).
	ByCache map[string]int64
	// Recovered are the flash segments (records of stored answers and
	// their slices) recovered at the restarts, summed; FlashAnswers the
	// answers served from flash while checking after the restarts.
	Recovered    int64
	FlashAnswers int64
	// Versions are the versions the origin published, Revalidated the
	// 304s it sent.
	Versions    int
	Revalidated int64
	Elapsed     time.Duration
}

// RunEdge runs the edge torture: opts.Cycles cycles of concurrent GET,
// Range and HEAD requests to the edge while the origin publishes new
// versions, kill -9, fsck of the flash file, sometimes a second kill
// during start-up, a restart, and a read of every object. Every answer
// must be one whole version (its ETag's: size, bytes, Last-Modified;
// never bytes of two, never cut under a 200) and no staler than the
// windows allow: its version current at some moment within max-age
// (plus grace, or keep-on-error for an answer marked STALE) of the
// request. The flash segments recovered at each restart must be those
// fsck found. It stops at the first finding with an error wrapping
// ErrFailed; the edge is killed and Dir kept.
func RunEdge(ctx context.Context, opts EdgeOptions) (EdgeSummary, error) {
	opts.EnsureDefaults()
	start := time.Now()
	if opts.Bin == "" || opts.Dir == "" {
		return EdgeSummary{}, errors.New("torture: Bin and Dir are required")
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return EdgeSummary{}, err
	}
	data := filepath.Join(opts.Dir, "data")
	if _, err := os.Stat(data); err == nil {
		return EdgeSummary{}, fmt.Errorf("torture: %s already has a data directory", opts.Dir)
	}
	e := &edgeTorture{opts: opts, data: data, rng: rand.New(rand.NewPCG(opts.Seed, 0x45444745)),
		origin: versions.New(versions.Options{Objects: opts.Objects, MaxAge: opts.MaxAge, Seed: opts.Seed})}
	e.sum.ByTier, e.sum.ByCache = map[string]int64{}, map[string]int64{}
	if err := e.origin.Start("127.0.0.1:0"); err != nil {
		return e.sum, err
	}
	defer e.origin.Stop()
	defer e.stop()
	if err := e.start(ctx); err != nil {
		return e.sum, err
	}
	e.logf("edge torture: edge %s in front of origin %s (%d objects, max-age %s, a new version every %s), seed %d, %d cycles",
		e.srv.url, e.origin.URL(), opts.Objects, e.origin.MaxAge(), opts.Publish, opts.Seed, opts.Cycles)
	for c := 1; c <= opts.Cycles; c++ {
		if err := e.cycle(ctx, c); err != nil {
			e.sum.Elapsed = time.Since(start)
			if errors.Is(err, ErrFailed) {
				err = fmt.Errorf("cycle %d/%d (seed %d): %w", c, opts.Cycles, opts.Seed, err)
			}
			return e.sum, err
		}
		e.sum.Cycles++
	}
	e.sum.Elapsed = time.Since(start)
	e.sum.Versions = e.origin.Versions()
	e.sum.Revalidated = e.origin.NotModified.Load()
	e.printSummary()
	return e.sum, nil
}

// An edgeTorture is one run's state.
type edgeTorture struct {
	opts   EdgeOptions
	data   string
	rng    *rand.Rand
	origin *versions.Origin
	srv    *server
	mu     sync.Mutex // protects sum's maps and counters written by workers
	sum    EdgeSummary
}

func (e *edgeTorture) logf(format string, args ...any) {
	fmt.Fprintf(e.opts.Log, format+"\n", args...)
}

// edgeArgs are strata serve's flags for the edge: small tiers (3 MiB of
// RAM, 24 MiB of flash in 1 MiB blocks) so that answers go to flash
// within a cycle, 256 KiB slices so that the larger objects are stored
// in several, and a flash threshold above 1 (the machine's one disk is
// shared).
func (e *edgeTorture) edgeArgs() []string {
	args := []string{"serve", "--data", e.data, "--listen", "127.0.0.1:0",
		"--upstream", "/=" + e.origin.URL() + "/",
		"--ram", "3MiB", "--flash-size", "24MiB", "--block-size", "1MiB",
		"--edge-slice-size", "256KiB", "--monitor-period", "20ms", "--threshold", "1.01",
		"--edge-grace", e.opts.Grace.String(), "--edge-keep-on-error", e.opts.KeepOnError.String(),
		"--files-flash-size", "0", "--no-images", "--log-level", "warn"}
	return append(args, e.opts.EdgeArgs...)
}

// start starts the edge and waits for it to answer.
func (e *edgeTorture) start(ctx context.Context) error {
	s, err := startServe(e.opts.Bin, e.edgeArgs(), e.opts.Dir)
	if err != nil {
		return err
	}
	e.srv = s
	return s.ready(ctx)
}

func (e *edgeTorture) stop() {
	if e.srv != nil {
		e.srv.kill()
		e.srv = nil
	}
}

// cycle n: the load for a random time while the origin publishes, kill
// -9, new versions of about half the objects while the edge is down,
// fsck, sometimes a kill during start-up and fsck again, the restart, the
// recovery count and a read of every object.
func (e *edgeTorture) cycle(ctx context.Context, n int) error {
	run := e.opts.MinRun + time.Duration(e.rng.Int64N(int64(e.opts.MaxRun-e.opts.MinRun)+1))
	answers0 := e.answers()
	if err := e.load(ctx, run, n); err != nil {
		return err
	}
	loaded := e.answers() - answers0
	down := 0
	for _, p := range e.origin.Paths() {
		if e.rng.IntN(2) == 0 {
			e.origin.Publish(p)
			down++
		}
	}
	if e.opts.AfterKill != nil {
		if err := e.opts.AfterKill(e.data); err != nil {
			return err
		}
	}
	flash := filepath.Join(e.data, "flash.cache")
	rep, err := fsck(e.opts.Bin, flash)
	if err != nil {
		return err
	}
	early := ""
	if e.rng.Float64() < e.opts.EarlyKill {
		s, err := startServe(e.opts.Bin, e.edgeArgs(), e.opts.Dir)
		if err != nil {
			return fmt.Errorf("%w: restart: %v", ErrFailed, err)
		}
		time.Sleep(time.Duration(e.rng.Int64N(int64(300 * time.Millisecond))))
		s.kill()
		if rep, err = fsck(e.opts.Bin, flash); err != nil {
			return err
		}
		e.sum.EarlyKills++
		early = ", killed again during start-up"
	}
	if err := e.start(ctx); err != nil {
		return fmt.Errorf("%w: restart: %v", ErrFailed, err)
	}
	st, err := e.srv.ssd()
	if err != nil {
		return err
	}
	if st.RecoveredSegments != int64(rep.Segments) || st.CorruptRecords != 0 {
		return failf("the edge recovered %d flash segments (%d corrupt records); fsck found %d live",
			st.RecoveredSegments, st.CorruptRecords, rep.Segments)
	}
	e.sum.Recovered += st.RecoveredSegments
	flashed, err := e.verify(ctx)
	if err != nil {
		return fmt.Errorf("after the restart: %w", err)
	}
	e.logf("cycle %d/%d: load %s (%d answers checked), kill -9%s, %d new versions while down; fsck clean (%d live segments); "+
		"restart recovered %d; read all %d objects (%d from flash)",
		n, e.opts.Cycles, run.Round(time.Millisecond), loaded, early, down, rep.Segments,
		st.RecoveredSegments, len(e.origin.Paths()), flashed)
	return nil
}

func (e *edgeTorture) answers() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sum.Answers
}

// load runs the workers and the origin's publishing for run, then kills
// the edge while the workers are still sending.
func (e *edgeTorture) load(ctx context.Context, run time.Duration, cycle int) error {
	var (
		killed atomic.Bool
		wg     sync.WaitGroup
		mu     sync.Mutex
		first  error
	)
	failed := make(chan struct{})
	var once sync.Once
	pctx, stopPublishing := context.WithCancel(ctx)
	wg.Go(func() { e.origin.Churn(pctx, e.opts.Publish, e.opts.Seed^uint64(cycle)) })
	paths := e.origin.Paths()
	for w := range e.opts.Workers {
		rng := rand.New(rand.NewPCG(e.opts.Seed, uint64(cycle)<<8|uint64(w)))
		zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(paths)-1))
		wg.Go(func() {
			var err error
			for !killed.Load() && err == nil {
				p := paths[zipf.Uint64()]
				switch r := rng.Float64(); {
				case r < 0.7:
					err = e.request(http.MethodGet, p, "")
				case r < 0.9:
					err = e.request(http.MethodGet, p, randomRange(rng, e.origin.MinSize(p)))
				default:
					err = e.request(http.MethodHead, p, "")
				}
				switch {
				case errors.Is(err, errCut) && killed.Load():
					e.mu.Lock()
					e.sum.Cut++
					e.mu.Unlock()
					err = nil
				case errors.Is(err, errChanged):
					err = nil
				case errors.Is(err, errCut):
					err = failf("the edge stopped answering before the kill: %v", err)
				}
			}
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				once.Do(func() { close(failed) })
			}
		})
	}
	select {
	case <-time.After(run):
	case <-failed:
	case <-ctx.Done():
	}
	killed.Store(true)
	e.srv.kill()
	stopPublishing()
	wg.Wait()
	e.srv = nil
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// randomRange is a Range header within the first size bytes: a prefix,
// a middle span or a suffix.
func randomRange(rng *rand.Rand, size int64) string {
	a := rng.Int64N(size)
	b := a + rng.Int64N(min(size-a, 600<<10))
	switch rng.IntN(3) {
	case 0:
		return "bytes=0-" + strconv.FormatInt(b, 10)
	case 1:
		return fmt.Sprintf("bytes=%d-%d", a, b)
	default:
		return "bytes=-" + strconv.FormatInt(b-a+1, 10)
	}
}

// verify reads every object once, whole, and checks it; it returns the
// answers served from flash.
func (e *edgeTorture) verify(ctx context.Context) (int, error) {
	flashed := 0
	for _, p := range e.origin.Paths() {
		if err := ctx.Err(); err != nil {
			return flashed, err
		}
		tier, err := e.do(http.MethodGet, p, "")
		if errors.Is(err, errChanged) { // once: the origin publishes nothing meanwhile
			first := err
			if tier, err = e.do(http.MethodGet, p, ""); err != nil {
				err = fmt.Errorf("%w; the first read: %v", err, first)
			}
		}
		if errors.Is(err, errCut) {
			return flashed, failf("the edge stopped answering: %v", err)
		}
		if err != nil {
			return flashed, err
		}
		if tier == "ssd" {
			flashed++
		}
	}
	e.mu.Lock()
	e.sum.FlashAnswers += int64(flashed)
	e.mu.Unlock()
	return flashed, nil
}

// request is one request of the load.
func (e *edgeTorture) request(method, path, rng string) error {
	_, err := e.do(method, path, rng)
	return err
}

// do sends one request to the edge and checks the answer; it returns the
// tier that served it. A transport error or a body cut short of its
// Content-Length wraps errCut.
func (e *edgeTorture) do(method, path, rng string) (string, error) {
	srv := e.srv
	if srv == nil {
		return "", fmt.Errorf("%w: no edge running", errCut)
	}
	req, err := http.NewRequest(method, srv.url+path, nil)
	if err != nil {
		return "", err
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	start := time.Now()
	resp, err := srv.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w: %s %s: %v", errCut, method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		// A body cut while the edge reads the slices of an object that
		// changed at the origin (a slice with another ETag): the only
		// honest end of a 200 whose header is sent. Allowed when a new
		// version was published within the window before the request
		// or since.
		window := e.origin.MaxAge() + max(e.opts.Grace, e.opts.KeepOnError)
		if e.origin.ChangedAfter(path, start.Add(-window-staleSlack)) {
			e.mu.Lock()
			e.sum.CutChanged++
			e.mu.Unlock()
			return "", fmt.Errorf("%w: %s %s: %d with ETag %s (X-Strata-Cache %s, X-Strata-Tier %s): body cut at %d of %d: %v",
				errChanged, method, path, resp.StatusCode, resp.Header.Get("ETag"), resp.Header.Get("X-Strata-Cache"),
				resp.Header.Get("X-Strata-Tier"), len(body), resp.ContentLength, err)
		}
		return "", fmt.Errorf("%w: %s %s: %d with ETag %s (X-Strata-Cache %s, X-Strata-Tier %s): body cut at %d of %d: %v (the object did not change)",
			errCut, method, path, resp.StatusCode, resp.Header.Get("ETag"), resp.Header.Get("X-Strata-Cache"),
			resp.Header.Get("X-Strata-Tier"), len(body), resp.ContentLength, err)
	}
	a := versions.Answer{Path: path, Method: method, Status: resp.StatusCode, Header: resp.Header,
		ContentLength: resp.ContentLength, Body: body}
	cache, tier := resp.Header.Get("X-Strata-Cache"), resp.Header.Get("X-Strata-Tier")
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		return tier, failf("%s %s (Range %q): %d %s (cache %s): %.200s", method, path, rng, resp.StatusCode,
			http.StatusText(resp.StatusCode), cache, body)
	}
	v, err := e.origin.Check(a)
	if err != nil {
		return tier, failf("%s (Range %q, X-Strata-Cache %s, X-Strata-Tier %s)", err, rng, cache, tier)
	}
	window := e.origin.MaxAge() + e.opts.Grace
	if cache == "STALE" {
		window = e.origin.MaxAge() + max(e.opts.Grace, e.opts.KeepOnError)
	}
	if !e.origin.CurrentAfter(path, v, start.Add(-window-staleSlack)) {
		sup := e.origin.Superseded(path, v)
		return tier, failf("%s %s: version %d (X-Strata-Cache %s, X-Strata-Tier %s, Age %s) was superseded %s before the request, "+
			"beyond the window of %s", method, path, v, cache, tier, resp.Header.Get("Age"),
			start.Sub(sup).Round(time.Millisecond), window)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sum.Answers++
	e.sum.Bytes += int64(len(body))
	e.sum.ByTier[tier]++
	e.sum.ByCache[cache]++
	switch {
	case method == http.MethodHead:
		e.sum.Heads++
	case resp.StatusCode == http.StatusPartialContent:
		e.sum.Ranges++
	default:
		e.sum.Whole++
	}
	if cache == "STALE" {
		e.sum.Stale++
	}
	return tier, nil
}

func (e *edgeTorture) printSummary() {
	s := e.sum
	e.logf("edge torture: %d cycles (%d killed again during start-up) in %s, seed %d", s.Cycles, s.EarlyKills,
		s.Elapsed.Round(time.Second), e.opts.Seed)
	e.logf("  answers    %d checked whole (%d GET 200, %d ranges 206, %d HEAD), %.1f MB compared; wrong 0",
		s.Answers, s.Whole, s.Ranges, s.Heads, float64(s.Bytes)/1e6)
	e.logf("  cache      %s; tiers %s; %d marked STALE (window %s + %s)", counted(s.ByCache), counted(s.ByTier),
		s.Stale, e.opts.MaxAge, max(e.opts.Grace, e.opts.KeepOnError))
	e.logf("  cut        %d requests cut by the kills; %d bodies cut because the object changed between slices",
		s.Cut, s.CutChanged)
	e.logf("  origin     %d versions published, %d revalidations answered 304", s.Versions, s.Revalidated)
	e.logf("  flash      %d segments recovered over the restarts, %d answers from flash reading every object after them",
		s.Recovered, s.FlashAnswers)
	e.logf("  result     every check passed")
}

// counted is "k1 n1, k2 n2" in key order.
func counted(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		if k == "" {
			s += fmt.Sprintf("(none) %d", m[k])
		} else {
			s += fmt.Sprintf("%s %d", k, m[k])
		}
	}
	return s
}
