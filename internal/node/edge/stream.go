package edge

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/strata-media/strata/internal/core/httpcache"
)

// progress tracks a body being read from the upstream into its record, so
// that the request that fetches it answers its client as the bytes
// arrive, instead of after the whole body (first byte after about one
// upstream round trip). The bytes below n are final.
type progress struct {
	mu   sync.Mutex
	cond sync.Cond
	n    int   // body bytes read
	done bool  // no more bytes will come
	err  error // why the body is incomplete, when done early
	// hold holds the engine's load of the body for a client that joins
	// it (engine.Holder), and loaded is closed once that load is over
	// (engine.LoadDone); both set before the response is announced.
	hold   func() (release func(), ok bool)
	loaded <-chan struct{}
}

func newProgress() *progress {
	p := &progress{}
	p.cond.L = &p.mu
	return p
}

// advance records that the first n body bytes are in place.
func (p *progress) advance(n int) {
	p.mu.Lock()
	p.n = n
	p.mu.Unlock()
	p.cond.Broadcast()
}

// finish records the end of the body: err nil when it is complete. Only
// the first call counts.
func (p *progress) finish(err error) {
	p.mu.Lock()
	if !p.done {
		p.done, p.err = true, err
	}
	p.mu.Unlock()
	p.cond.Broadcast()
}

// wait blocks until more than have bytes are in place, the body ended or
// ctx is done. It returns the bytes in place, and the error that ended the
// body early (or ctx's); n == have with a nil error means the body is
// complete.
func (p *progress) wait(ctx context.Context, have int) (int, error) {
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.mu.Unlock()
		p.cond.Broadcast()
	})
	defer stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.n <= have && !p.done && ctx.Err() == nil {
		p.cond.Wait()
	}
	switch {
	case p.n > have:
		return p.n, nil
	case p.err != nil:
		return p.n, p.err
	case !p.done:
		return p.n, ctx.Err()
	}
	return p.n, nil
}

// streamable reports whether the client's request is answered by the
// whole stored response as it is (a GET or HEAD without Range or
// conditionals): then it is answered while its fetch is in progress.
func streamable(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	for _, name := range conditionalFields {
		if _, ok := r.Header[name]; ok {
			return false
		}
	}
	return true
}

// firstRequest is how many bytes the first upstream request of q asks
// for: a whole object up to MaxWhole in one request when the client asked
// for all of it (a full GET of a segment is one upstream exchange), the
// first slice when it asked for a range (nginx's slice module: a seek
// pulls only the slices it covers).
func (h *Handler) firstRequest(q *query) int64 {
	if _, ok := q.header["Range"]; ok {
		return h.opts.SliceSize
	}
	return max(h.opts.MaxWhole, h.opts.SliceSize)
}

// respondStream answers a plain GET or HEAD (streamable) with the response
// this request is fetching, rec, its body arriving as p says: the stored
// header, then the bytes as they come, then the further slices of a
// sliced object. An upstream body cut short cuts the client's short too
// (nothing of it is stored).
func (s *serving) respondStream(f *found, p *progress) {
	rec := f.rec
	status := CacheMiss
	if f.coalesced {
		s.h.stats.hits.Add(1)
		s.h.stats.coalesced.Add(1)
		status = CacheCoalesced
	} else {
		s.h.stats.misses.Add(1)
	}
	hdr := s.w.Header()
	copyResponseHeader(hdr, rec.entry.ResponseHeader(s.h.opts.Now()))
	addOwnCookies(hdr, f.cookies)
	hdr.Set(HeaderTier, f.tier)
	hdr.Set(HeaderCache, status)
	if _, ok := hdr["Content-Type"]; !ok {
		hdr["Content-Type"] = nil // no sniffing: the upstream sent none
	}
	normalizeLastModified(hdr) // as when the whole body is there (writeBody)
	hdr.Set("Accept-Ranges", "bytes")
	hdr.Set("Content-Length", strconv.FormatInt(rec.complete, 10))
	if rec.complete == 0 && s.r.Method != http.MethodHead {
		// An empty body: the header is the last byte, so the record is
		// stored before it goes (as for the last bytes below).
		s.settle(p)
	}
	s.w.WriteHeader(http.StatusOK)
	if s.r.Method == http.MethodHead {
		return
	}
	ctx := s.r.Context()
	fl, _ := s.w.(http.Flusher)
	sent := 0
	for sent < len(rec.body) {
		n, err := p.wait(ctx, sent)
		if err != nil {
			s.h.stats.errors.Add(1)
			panic(http.ErrAbortHandler) // the client must see the body cut short
		}
		if n == len(rec.body) {
			s.settle(p)
		}
		if _, err := s.w.Write(rec.body[sent:n]); err != nil {
			return // the client went away; the fetch goes on for the cache
		}
		if fl != nil {
			fl.Flush()
		}
		sent = n
	}
	// The first slice is written: its heap bytes are no longer this
	// answer's (the further slices take room of their own).
	f.fill.unref()
	f.fill = nil
	if int64(sent) < rec.complete {
		r := &sliceReader{s: s, v: f.v, head: rec, size: int64(len(rec.body)), cur: -1, off: int64(sent)}
		defer r.close()
		if _, err := io.Copy(s.w, r); err != nil {
			panic(http.ErrAbortHandler)
		}
	}
}

// addStream registers f, a stored response whose body is being read, under
// the tier key of its first slice; dropStream removes it once the load
// ended (the engine holds the record then, or nothing).
func (h *Handler) addStream(key string, f *fetched) {
	h.streams.Lock()
	h.streams.m[key] = f
	h.streams.Unlock()
}

func (h *Handler) dropStream(key string, f *fetched) {
	h.streams.Lock()
	if h.streams.m[key] == f {
		delete(h.streams.m, key)
	}
	h.streams.Unlock()
}

// joinStream returns what a plain GET for the first slice key of variant v
// finds in a response being fetched for another request: nil unless one
// is, it selects this request's variant (Vary) and it is fresh for it.
func (s *serving) joinStream(v, key string) *found {
	s.h.streams.Lock()
	f := s.h.streams.m[key]
	s.h.streams.Unlock()
	if f == nil || !f.rec.entry.MatchesVary(s.r.Header) ||
		s.q.policy.Decide(&f.rec.entry, s.q.cacheRequest(), s.h.opts.Now()).Action != httpcache.Fresh {
		return nil
	}
	// The load goes on while this client reads it, even if the client
	// that began it goes away.
	release, ok := f.progress.hold()
	if !ok {
		return nil // abandoned: its body will not come
	}
	return &found{v: v, rec: f.rec, tier: "upstream", coalesced: true, stream: f.progress, release: release, fill: f.fill.tryRef()}
}

// settle waits until the engine's load of the body p tracks is over (its
// record inserted, or not), so that a request this client sends once it
// has the last byte finds it stored (HIT, not a second flight). It waits
// for that load only (engine.LoadDone): it takes no load slot (with every
// slot held by loads waiting for fill memory, a stream waiting for one
// held up the very room they waited for) and joins no other client's
// load of the same key.
func (s *serving) settle(p *progress) {
	if p.loaded == nil {
		return
	}
	select {
	case <-p.loaded:
	case <-s.r.Context().Done():
	}
}
