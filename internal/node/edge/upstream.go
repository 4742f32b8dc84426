package edge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/core/httpcache"
	"github.com/strata-media/strata/internal/httpapi"
)

// Errors of the edge. An upstream failure answers 502 or 504 (StatusOf)
// and stores nothing.
var (
	// ErrBadGateway reports an upstream that refused the connection,
	// reset it, sent a truncated body or an answer that does not fit the
	// request (a wrong Content-Range).
	ErrBadGateway = errors.New("edge: upstream failed")
	// ErrGatewayTimeout reports an upstream that did not answer in time.
	ErrGatewayTimeout = errors.New("edge: upstream timed out")
	// ErrChanged reports a slice whose validators do not match the rest
	// of the object (RFC 9111 §3.4): the representation changed upstream
	// while it was being fetched.
	ErrChanged = errors.New("edge: representation changed between slices")
	// ErrNoUpstream reports a path no upstream is configured for.
	ErrNoUpstream = errors.New("edge: no upstream for the path")
	// ErrDotSegments reports a request path with "." or ".." segments,
	// refused so that no request reaches outside an upstream's base path.
	ErrDotSegments = errors.New("edge: path with dot segments")
	// ErrOnlyIfCached reports a miss for a request that said
	// only-if-cached (RFC 9111 §5.2.1.7).
	ErrOnlyIfCached = errors.New("edge: not cached and only-if-cached")

	// errNotStored is a loader's answer for an upstream response the
	// policy does not store: the engine inserts nothing, and the caller
	// whose loader ran serves the response it kept.
	errNotStored = errors.New("edge: response not stored")
)

// StatusOf returns the status code an edge error answers: 504 for a
// timeout or only-if-cached, 502 otherwise.
func StatusOf(err error) int {
	switch {
	case errors.Is(err, ErrGatewayTimeout), errors.Is(err, ErrOnlyIfCached):
		return http.StatusGatewayTimeout
	default:
		return http.StatusBadGateway
	}
}

// upstreamFailure wraps a transport error in the edge sentinel it maps to.
func upstreamFailure(err error) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%w: %w", ErrGatewayTimeout, err)
	}
	return fmt.Errorf("%w: %w", ErrBadGateway, err)
}

// newTransport returns the bounded transport of an upstream server with
// the settings u: dial and header timeouts, idle connections kept and
// for how long, and no transparent decompression (bodies are stored as
// the upstream sent them).
func newTransport(u *Upstream) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: u.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext,
		ResponseHeaderTimeout: u.HeaderTimeout,
		MaxIdleConns:          u.MaxIdleConns,
		MaxIdleConnsPerHost:   u.MaxIdleConns,
		IdleConnTimeout:       u.IdleTimeout,
		TLSHandshakeTimeout:   u.ConnectTimeout,
		DisableCompression:    true,
	}
}

// hopByHop lists the fields a proxy never forwards (RFC 9110 §7.6.1).
var hopByHop = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding",
	"Upgrade", "Proxy-Authenticate", "Proxy-Authorization", "Proxy-Authentication-Info",
}

// via is this cache's entry in the Via field of the messages it forwards
// (RFC 9110 §7.6.3: a proxy "MUST send an appropriate Via header field").
const via = "1.1 strata"

// conditionalFields are the request fields the edge answers itself on a
// cached response, and replaces with its own when fetching.
var conditionalFields = []string{
	"Range", "If-Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since",
}

// copyEndToEnd copies src into dst without hop-by-hop fields and the fields
// Connection names; without the conditional ones too unless keepConditional.
func copyEndToEnd(dst, src http.Header, keepConditional bool) {
	for name, v := range src {
		dst[name] = append([]string(nil), v...)
	}
	for _, c := range src.Values("Connection") {
		for _, name := range strings.Split(c, ",") {
			dst.Del(strings.TrimSpace(name))
		}
	}
	for _, name := range hopByHop {
		dst.Del(name)
	}
	if !keepConditional {
		for _, name := range conditionalFields {
			dst.Del(name)
		}
	}
}

// A query is a request as the edge forwards it: the upstream, the target
// below its prefix, and the client's header fields.
type query struct {
	rt     *route
	target string            // escaped path after the prefix, with "?query"
	header http.Header       // the client's request fields; read only
	obj    string            // tier key directory of the object
	policy *httpcache.Policy // the cache rules of the request's path
	// staleOK says a stored copy answers if the upstream fails (a
	// revalidation under keep-on-error): a retry then goes to another
	// server only, never waits a backoff for the same one, since the
	// client has an answer without it.
	staleOK bool
}

// cacheRequest is the request as the caching decisions see it: a HEAD is
// answered from, and fetched as, the GET (nginx's proxy_cache_convert_head).
func (q *query) cacheRequest() httpcache.Request {
	return httpcache.Request{Method: http.MethodGet, Header: q.header}
}

// exchange is one upstream response being read; close releases it.
type exchange struct {
	resp   *http.Response
	cancel context.CancelFunc
	ctx    context.Context // the request's, for the access log
	rt     *route
	srv    *server // the server that answered
}

func (e *exchange) close() {
	e.resp.Body.Close()
	e.cancel()
}

// send issues one upstream GET for q with the extra fields (a Range, a
// revalidation's conditionals). The caller closes the exchange.
func (h *Handler) send(ctx context.Context, q *query, extra http.Header) (*exchange, error) {
	return h.sendRequest(ctx, q, http.MethodGet, nil, 0, extra)
}

// withRange returns extra with Range set to rng.
func withRange(extra http.Header, rng string) http.Header {
	h := extra.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Range", rng)
	return h
}

// sendRequest issues one upstream request for q: method, a body of length
// bytes (-1: unknown), the client's end-to-end fields but its conditionals,
// and the extra fields.
func (h *Handler) sendRequest(ctx context.Context, q *query, method string, body io.Reader, length int64, extra http.Header) (*exchange, error) {
	rt := q.rt
	tries := 1
	if (method == http.MethodGet || method == http.MethodHead) && body == nil {
		tries = rt.set.Attempts
	}
	var prev *server
	var lastErr error
	wait := rt.set.RetryBackoff
	for try := 1; ; try++ {
		srv := h.pick(rt)
		if srv == prev && q.staleOK {
			return nil, lastErr // the stored copy answers at once
		}
		if srv == prev {
			// No other server to try: back off, with jitter.
			t := time.NewTimer(wait/2 + rand.N(wait))
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, upstreamFailure(ctx.Err())
			case <-t.C:
			}
			wait *= 2
		}
		ex, err := h.exchange(ctx, q, srv, method, body, length, extra)
		if try >= tries || ctx.Err() != nil {
			return ex, err
		}
		switch {
		case err == nil && !failureStatus(ex.resp.StatusCode):
			return ex, nil
		case err == nil && len(rt.servers) == 1:
			// A 502, 503 or 504 is the server's answer: relayed, not
			// asked again of the same server (nginx's proxy_next_upstream
			// default, error and timeout only). An origin that sheds load
			// is not asked twice, and its Retry-After reaches the client.
			return ex, nil
		case err == nil:
			err = fmt.Errorf("%w: the upstream answered %s", ErrBadGateway, ex.resp.Status)
			io.Copy(io.Discard, io.LimitReader(ex.resp.Body, 64<<10)) // keep the connection if it is short
			ex.close()
		}
		h.stats.retries.Add(1)
		prev, lastErr = srv, err
	}
}

// exchange sends one upstream request for q to the server srv and
// records the outcome in srv's health.
func (h *Handler) exchange(ctx context.Context, q *query, srv *server, method string, body io.Reader, length int64, extra http.Header) (*exchange, error) {
	reqCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, q.rt.set.FetchTimeout)
	req, err := http.NewRequestWithContext(ctx, method, srv.base.String()+q.target, body)
	if err != nil {
		cancel()
		h.released(srv)
		return nil, fmt.Errorf("%w: %w", ErrBadGateway, err)
	}
	if body != nil {
		req.ContentLength = length
	}
	copyEndToEnd(req.Header, q.header, false)
	for name, v := range extra {
		req.Header[name] = v
	}
	req.Header.Add("Via", via)
	// This cache is a surrogate: origins may aim Surrogate-Control at it.
	req.Header.Add("Surrogate-Capability", httpcache.SurrogateCapability)
	h.stats.upstreamRequests.Add(1)
	start := time.Now()
	resp, err := srv.client.Do(req)
	waited := time.Since(start)
	h.upstreamLatency.Observe(waited.Seconds())
	srv.requests.Add(1)
	srv.waited.Add(uint64(waited))
	httpapi.NoteUpstream(ctx, waited) // for the access log: time to the response's header
	if err != nil {
		cancel()
		h.stats.upstreamErrors.Add(1)
		httpapi.NoteUpstreamResponse(ctx, 0)
		err = upstreamFailure(err)
		if reqCtx.Err() != nil {
			h.released(srv) // the client went away: says nothing of the server
		} else {
			h.failed(q.rt, srv, err)
		}
		return nil, err
	}
	httpapi.NoteUpstreamResponse(ctx, resp.StatusCode)
	if failureStatus(resp.StatusCode) {
		h.failed(q.rt, srv, fmt.Errorf("status %d", resp.StatusCode))
	} else {
		h.succeeded(q.rt, srv)
	}
	return &exchange{resp: resp, cancel: cancel, ctx: ctx, rt: q.rt, srv: srv}, nil
}

// noteBytes counts n body bytes received in ex, in the stats and the
// access log.
func (h *Handler) noteBytes(ex *exchange, n int) {
	h.stats.upstreamBytes.Add(uint64(n))
	httpapi.NoteUpstreamBytes(ex.ctx, int64(n))
}

// readBody reads len(f.body) body bytes into f.body, advancing f.progress
// as they arrive: fewer is a truncated upstream body. The progress ends
// with the outcome.
func (h *Handler) readBody(ex *exchange, f *fetched) error {
	b, got := f.body, 0
	var err error
	for got < len(b) && err == nil {
		var n int
		n, err = ex.resp.Body.Read(b[got:])
		got += n
		if n > 0 && f.progress != nil {
			f.progress.advance(got)
		}
	}
	h.noteBytes(ex, got)
	if got < len(b) {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		h.stats.upstreamErrors.Add(1)
		err = upstreamFailure(fmt.Errorf("body truncated at %d of %d bytes: %w", got, len(b), err))
		h.failed(ex.rt, ex.srv, err)
		if f.progress != nil {
			f.progress.finish(err)
		}
		return err
	}
	return nil
}

// fetched is an upstream response to the first slice's request, read
// whole (or its first slice), with the storage decision taken.
type fetched struct {
	status int
	header http.Header // as stored: a 206 turned into the 200 it is a part of
	body   []byte
	// size is the length of body once read: the whole representation or
	// its first slice; -1 when unknown before reading (a 200 without
	// Content-Length).
	size int64
	// complete is the representation's length: len(body) unless sliced.
	complete int64
	// pass says the response cannot be served from body: a 200 larger than
	// MaxWhole, or a sliced one that is not stored. The caller forwards the
	// client's request instead.
	pass bool
	// reqT and respT are when the request was sent and the response
	// received (RFC 9111 §4.2.3).
	reqT, respT time.Time
	// rec is the record to store, nil when the policy refused; data is its
	// encoding, and rec.body aliases body.
	rec     *record
	data    []byte
	refusal httpcache.Refusal
	// progress tracks the body as it is read, when it is read after the
	// header was announced.
	progress *progress
	// fill is the room body holds in the handler's fillMemory, taken
	// before it was laid out: whoever called fetchHead unrefs it once it
	// no longer needs the bytes (nil: a body read without it).
	fill *fillHold
}

// fetchHead fetches the first want bytes of q (the whole object when it is
// no larger, else its first slice; the whole object too when the upstream
// ignores Range), with cond's conditionals, and decides whether it is
// stored. A 304 comes back unread and unstored. When the response is
// stored and its length known, ready (if not nil) is called before its
// body is read, with f.progress tracking the body as it arrives in f.body
// (the record's own bytes). A body of known length waits for room in the
// handler's fillMemory before it is laid out (f.fill, which the caller
// unrefs).
func (h *Handler) fetchHead(ctx context.Context, q *query, cond http.Header, want int64, ready func(*fetched)) (_ *fetched, err error) {
	reqT := h.opts.Now()
	ex, err := h.send(ctx, q, withRange(cond, "bytes=0-"+strconv.FormatInt(want-1, 10)))
	if err != nil {
		return nil, err
	}
	defer ex.close()
	f := &fetched{status: ex.resp.StatusCode, header: ex.resp.Header, reqT: reqT, respT: h.opts.Now(), size: -1}
	switch f.status {
	case http.StatusNotModified:
		return f, nil
	case http.StatusPartialContent:
		err = h.headSlice(ex, f, want)
	case http.StatusRequestedRangeNotSatisfiable:
		err = h.readEmpty(ex, f)
	default:
		err = h.headWhole(ex, f)
	}
	if err != nil {
		return nil, err
	}
	if f.body != nil || f.pass {
		h.decideStore(q, f) // read already (or passed): encode a copy
		return f, nil
	}
	if f.size < 0 {
		if err := h.readWhole(ex, f); err != nil {
			return nil, err
		}
		h.decideStore(q, f)
		return f, nil
	}
	// A body of known length, not passed (those returned above).
	if f.fill, err = h.acquireFill(ctx, f.size); err != nil {
		return nil, fmt.Errorf("%w: a body of %d bytes: %w", errFillBusy, f.size, err)
	}
	defer func() {
		if err != nil {
			f.fill.unref()
		}
	}()
	h.decideStore(q, f)
	if f.pass {
		f.fill.unref()
		f.fill = nil
		return f, nil
	}
	if f.rec == nil {
		f.body = make([]byte, f.size)
	} else if ready != nil {
		f.progress = newProgress()
		ready(f)
	}
	if err := h.readBody(ex, f); err != nil {
		return nil, err
	}
	if f.rec != nil {
		seal(f.data)
	}
	if f.progress != nil {
		f.progress.finish(nil)
	}
	return f, nil
}

// headSlice checks a 206 to the first request (of want bytes) and turns
// its header into the full response's: status 200, Content-Length the
// complete length (taken from Content-Range), no Content-Range. The body
// to read is the whole representation when it is no longer than want,
// else its first slice (the rest of the response is dropped).
func (h *Handler) headSlice(ex *exchange, f *fetched, want int64) error {
	cr, ok := httpcache.ParseContentRange(ex.resp.Header.Get("Content-Range"))
	if !ok || len(ex.resp.Header.Values("Content-Range")) != 1 || cr.First != 0 || cr.Complete < 0 ||
		cr.Last+1 != min(want, cr.Complete) {
		h.stats.upstreamErrors.Add(1)
		return fmt.Errorf("%w: Content-Range %q for the first slice", ErrBadGateway, ex.resp.Header.Get("Content-Range"))
	}
	if cl := ex.resp.ContentLength; cl >= 0 && cl != cr.Last+1 {
		h.stats.upstreamErrors.Add(1)
		return fmt.Errorf("%w: Content-Length %d for %d bytes", ErrBadGateway, cl, cr.Last+1)
	}
	f.status, f.complete, f.size = http.StatusOK, cr.Complete, cr.Complete
	if cr.Complete > want {
		f.size = min(h.opts.SliceSize, cr.Complete)
	}
	f.header = f.header.Clone()
	f.header.Del("Content-Range")
	f.header.Set("Content-Length", strconv.FormatInt(cr.Complete, 10))
	return nil
}

// readEmpty handles a 416 to the first slice's request: "bytes */0" is an
// empty representation (a range of it cannot be satisfied), anything else
// a bad answer.
func (h *Handler) readEmpty(ex *exchange, f *fetched) error {
	if strings.TrimSpace(ex.resp.Header.Get("Content-Range")) != "bytes */0" {
		h.stats.upstreamErrors.Add(1)
		return fmt.Errorf("%w: 416 for the first slice", ErrBadGateway)
	}
	io.Copy(io.Discard, io.LimitReader(ex.resp.Body, 1<<16))
	f.status, f.body, f.complete, f.size = http.StatusOK, []byte{}, 0, 0
	f.header = f.header.Clone()
	f.header.Del("Content-Range")
	f.header.Set("Content-Length", "0")
	return nil
}

// headWhole looks at a response that is not a slice (a 200 from an
// upstream that ignores Range, an error status): one larger than MaxWhole
// is marked for passing through, one of known length is read whole after
// the storage decision, one of unknown length by readWhole.
func (h *Handler) headWhole(ex *exchange, f *fetched) error {
	cl := ex.resp.ContentLength
	switch {
	case cl > h.opts.MaxWhole:
		f.pass = true
	case cl >= 0:
		f.size, f.complete = cl, cl
		if bodyAllowed(f.status) {
			f.header = f.header.Clone()
			f.header.Set("Content-Length", strconv.FormatInt(cl, 10))
		}
	}
	return nil
}

// readWhole reads a response of unknown length whole, up to MaxWhole;
// a longer one is marked for passing through.
func (h *Handler) readWhole(ex *exchange, f *fetched) error {
	limit := h.opts.MaxWhole
	body, err := io.ReadAll(io.LimitReader(ex.resp.Body, limit+1))
	h.noteBytes(ex, len(body))
	if err != nil {
		h.stats.upstreamErrors.Add(1)
		err = upstreamFailure(fmt.Errorf("body truncated at %d bytes: %w", len(body), err))
		h.failed(ex.rt, ex.srv, err)
		return err
	}
	if int64(len(body)) > limit {
		f.pass = true
		return nil
	}
	f.body, f.complete, f.size = body, int64(len(body)), int64(len(body))
	if bodyAllowed(f.status) {
		f.header = f.header.Clone()
		f.header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	return nil
}

// bodyAllowed reports whether a response with status carries content.
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// decideStore asks the policy whether f is stored (RFC 9111 §3) and, if
// so, lays out its record: f.body then is the record's room for the body
// (a body read already is copied there). A sliced representation is
// stored only when its slices can be checked against each other: it needs
// a strong validator (RFC 9111 §3.4; Combinable of the header with
// itself).
func (h *Handler) decideStore(q *query, f *fetched) {
	sliced := f.size < f.complete
	switch {
	case f.pass:
		f.refusal = "too-large-whole"
		return
	case sliced && !httpcache.Combinable(f.header, f.header):
		f.refusal, f.pass = "no-strong-validator", true
		return
	}
	e, refusal := q.policy.Store(q.cacheRequest(), httpcache.Response{Status: f.status, Header: f.header}, f.reqT, f.respT)
	if refusal != httpcache.Stored {
		f.refusal, f.pass = refusal, sliced
		return
	}
	f.rec = &record{entry: *e, id: rand.Uint64(), complete: f.complete}
	f.data = f.rec.layout(int(f.size))
	if f.body != nil {
		copy(f.rec.body, f.body)
		seal(f.data)
	}
	f.body = f.rec.body
}

// sliceValidators are the fields of a slice's response kept in its record:
// what Combinable compares (RFC 9111 §3.4).
var sliceValidators = []string{"Etag", "Last-Modified", "Date"}

// fetchSlice fetches slice n of the object whose first slice is head, and
// returns its encoded record. The slice must have head's validators and
// complete length; otherwise the representation changed (ErrChanged) and
// nothing is stored.
func (h *Handler) fetchSlice(ctx context.Context, q *query, head *record, size, n int64) ([]byte, error) {
	first := n * size
	last := min(first+size, head.complete) - 1
	ex, err := h.send(ctx, q, withRange(nil, fmt.Sprintf("bytes=%d-%d", first, last)))
	if err != nil {
		return nil, err
	}
	defer ex.close()
	if ex.resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
		// The slice starts past the representation's end: it shrank.
		return nil, fmt.Errorf("%w: slice %d: 416", ErrChanged, n)
	}
	if ex.resp.StatusCode != http.StatusPartialContent {
		h.stats.upstreamErrors.Add(1)
		return nil, fmt.Errorf("%w: status %d for slice %d", ErrBadGateway, ex.resp.StatusCode, n)
	}
	cr, ok := httpcache.ParseContentRange(ex.resp.Header.Get("Content-Range"))
	switch {
	case ok && (cr.Complete != head.complete || !httpcache.Combinable(head.entry.Header, ex.resp.Header)):
		// Checked before the range: a representation that shrank
		// answers a shorter one.
		return nil, fmt.Errorf("%w: slice %d", ErrChanged, n)
	case !ok || cr.First != first || cr.Last != last:
		h.stats.upstreamErrors.Add(1)
		return nil, fmt.Errorf("%w: Content-Range %q for slice %d", ErrBadGateway, ex.resp.Header.Get("Content-Range"), n)
	}
	if cl := ex.resp.ContentLength; cl >= 0 && cl != last-first+1 {
		h.stats.upstreamErrors.Add(1)
		return nil, fmt.Errorf("%w: Content-Length %d for %d bytes", ErrBadGateway, cl, last-first+1)
	}
	fill, err := h.acquireFill(ctx, last-first+1)
	if err != nil {
		return nil, fmt.Errorf("%w: slice %d: %w", errFillBusy, n, err)
	}
	// The engine keeps the slice in RAM's memory file once the load
	// returns, and the readers read it there (GetWithHeld).
	defer fill.unref()
	rec := record{id: head.id, offset: first, complete: head.complete}
	rec.entry.Status = http.StatusPartialContent
	rec.entry.Header = http.Header{}
	for _, name := range sliceValidators {
		if v := ex.resp.Header.Values(name); len(v) > 0 {
			rec.entry.Header[name] = v
		}
	}
	data := rec.layout(int(last - first + 1))
	if err := h.readBody(ex, &fetched{body: rec.body}); err != nil {
		return nil, err
	}
	seal(data)
	return data, nil
}
