package edge

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/strata-media/strata/internal/core/httpcache"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/engine"
)

// serving is one client request being answered.
type serving struct {
	h *Handler
	w http.ResponseWriter
	r *http.Request
	q query
	// noRelay: a copy the engine sheds is not relayed (its relay failed
	// upstream, or the relays were all busy): it is read past the read
	// limit (engine.FindLastResort), else loaded.
	noRelay bool
}

// found is what a lookup of a variant's first slice found.
type found struct {
	v         string  // variant key directory
	rec       *record // nil when not stored
	tier      string  // HeaderTier value
	loaded    bool    // rec is the response this request fetched
	coalesced bool    // rec was fetched for a concurrent request
	// uncached is this request's own response, which is not stored.
	uncached *fetched
	// passOn says the response fetched for a concurrent request is not
	// stored: this request must be forwarded on its own.
	passOn bool
	// relay says flash holds the first slice but the engine shed its
	// read (engine.Found.Shed): the request is relayed from the
	// upstream, nothing stored (relay).
	relay bool
	// stream tracks the body of rec while this request fetches it.
	stream *progress
	// release, with stream, lets go of the engine's load of the body
	// (engine.Hold): it goes on while a client reads it.
	release func()
	// cookies are the Set-Cookie fields of the response this request
	// fetched itself, which the stored copy may lack (httpcache strips
	// them): given to this client only, never to one served from a copy.
	cookies http.Header
	// held is the engine's answer rec was decoded from, which holds a
	// flash hit's buffer that rec.body aliases: released (done) once the
	// answer is written.
	held engine.Result
	// fill, with stream, is this answer's hold on the room the body
	// being read holds in the handler's fillMemory (nil if the load was
	// over already): released (done) once it has written the body.
	fill *fillHold
}

// ownCookies returns the cookie fields of f's upstream header.
func ownCookies(f *fetched) http.Header {
	var c http.Header
	for _, name := range []string{"Set-Cookie", "Set-Cookie2"} {
		if v := f.header.Values(name); len(v) > 0 {
			if c == nil {
				c = http.Header{}
			}
			c[name] = v
		}
	}
	return c
}

// addOwnCookies gives the client whose request fetched the response the
// cookies its origin set, where the stored copy's fields lack them.
func addOwnCookies(hdr, cookies http.Header) {
	for name, v := range cookies {
		if len(hdr.Values(name)) == 0 {
			hdr[name] = v
		}
	}
}

// serve answers the request. The anchor variant (the first response stored
// for the path) says which request fields select a variant (RFC 9111 §4.1);
// a request it does not match is looked up under its own secondary key.
func (s *serving) serve() {
	f, err := s.lookup(variantKey(s.q.obj, ""))
	if err == nil && f.rec != nil && !f.rec.entry.MatchesVary(s.r.Header) {
		names, _ := httpcache.ParseVary(f.rec.entry.Header)
		f.letGo()
		f.done()
		f, err = s.lookup(variantKey(s.q.obj, httpcache.VaryKey(names, s.r.Header)))
	}
	if err != nil {
		if !errors.Is(err, engine.ErrBusy) {
			// The engine held nothing it could read, nor the upstream
			// an answer: the error says it held no copy.
			s.w.Header().Set(HeaderCache, CacheMiss)
		}
		s.fail(err)
		return
	}
	defer f.done()
	// A client that has gone lets go of the load it started or joined (the
	// last one to go abandons it upstream). One whose answer is complete
	// (a HEAD, or the whole body sent) keeps its hold: the load finishes
	// and is stored, as a miss the client did not walk away from should.
	defer func() {
		if s.r.Context().Err() != nil {
			f.letGo()
		}
	}()
	s.use(f)
}

// letGo releases f's hold on the load of its stream, if any.
func (f *found) letGo() {
	if f.release != nil {
		f.release()
		f.release = nil
	}
}

// done returns the flash hit buffer f's record lies in, once its answer
// is written: nothing of f.rec.body may be used after.
func (f *found) done() {
	f.held.Release()
	f.held = engine.Result{}
	f.fill.unref()
	f.fill = nil
}

// headLoad is what the loader of a first slice did for one lookup.
type headLoad struct {
	ran atomic.Bool // the engine called this lookup's loader
	// f is written by the loader, read once GetWith returned or once
	// the loader announced the body (streaming).
	f atomic.Pointer[fetched]
	// streaming is set when the loader announced a stored response whose
	// body is being read: GetWith then returns early (its context is
	// canceled) and the request answers as the body arrives.
	streaming atomic.Bool
	// release is the loader's hold on its load for this request, taken
	// before it announces (the request leaves GetWith then, and streams):
	// lookup takes it (take), or releases it if the request has gone.
	release atomic.Pointer[func()]
}

// taken marks headLoad.release taken by lookup: a hold the loader takes
// after it is released at once.
var taken = func() {}

// keep stores the loader's hold, or releases it if lookup is done.
func (l *headLoad) keep(release func()) {
	if !l.release.CompareAndSwap(nil, &release) {
		release()
	}
}

// take returns the loader's hold (nil if none), and makes any later one
// be released at once.
func (l *headLoad) take() func() {
	if p := l.release.Swap(&taken); p != nil && p != &taken {
		return *p
	}
	return nil
}

// loader returns the engine loader that fetches the first slice for this
// request into l, and inserts its record only when the policy stores it.
// With announce, the loader calls it once a stored response's body starts
// arriving, and registers the response under key for other plain GETs
// (joinStream) until the load ends.
func (s *serving) loader(key string, l *headLoad, announce func()) engine.Loader {
	return func(ctx context.Context) ([]byte, error) {
		l.ran.Store(true)
		if httpcache.Miss(s.q.cacheRequest()).Action == httpcache.GatewayTimeout {
			return nil, ErrOnlyIfCached
		}
		var ready func(*fetched)
		if announce != nil {
			ready = func(f *fetched) {
				if f.status != http.StatusOK {
					return
				}
				// The load goes on while a client reads the body: this
				// one (it leaves GetWith now) and those that join it.
				release, ok := engine.Hold(ctx)
				if !ok {
					return // abandoned: nobody is to read it
				}
				l.keep(release)
				f.progress.hold, f.progress.loaded = engine.Holder(ctx), engine.LoadDone(ctx)
				l.f.Store(f)
				l.streaming.Store(true)
				s.h.addStream(key, f)
				announce()
			}
		}
		f, err := s.h.fetchHead(ctx, &s.q, nil, s.h.firstRequest(&s.q), ready)
		if p := l.f.Load(); p != nil && l.streaming.Load() {
			s.h.dropStream(key, p)
		}
		if err != nil {
			return nil, err
		}
		// The engine copies the bytes into RAM's memory file as this
		// returns, and answers from there; the streams still reading
		// them hold their own references.
		defer f.fill.unref()
		l.f.Store(f)
		if f.rec == nil {
			return nil, errNotStored
		}
		return f.data, nil
	}
}

// lookup returns the first slice of variant v from the engine, fetching
// it on a miss, once for all concurrent requests; a record that does not
// decode is dropped and fetched again. For a plain GET or HEAD
// (streamable), a miss this request fetches returns as soon as the
// response's body starts arriving, with found.stream tracking it.
func (s *serving) lookup(v string) (*found, error) {
	key := sliceKey(v, 0)
	for attempt := 0; ; attempt++ {
		var l headLoad
		ctx, announce := s.r.Context(), func() {}
		if streamable(s.r) {
			if f := s.joinStream(v, key); f != nil {
				return f, nil
			}
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			announce = cancel
		} else {
			announce = nil
		}
		res, err := s.getWith(ctx, key, s.loader(key, &l, announce))
		leader := l.ran.Load()
		release := l.take()
		if err != nil && l.streaming.Load() && s.r.Context().Err() == nil && release != nil {
			f := l.f.Load()
			s.h.noteTags(v, f.rec)
			return &found{v: v, rec: f.rec, tier: "upstream", loaded: true, stream: f.progress, release: release, cookies: ownCookies(f), fill: f.fill.tryRef()}, nil
		}
		if release != nil {
			release() // not streamed after all
		}
		if held, ok := s.lastResort(key, err, leader, &l); ok {
			// The engine missed a copy it holds (a flash read past its
			// deadline, or skipped): with the upstream failing, it
			// answers, as any stored response does (stale if it is).
			res, err, leader = held, nil, false
		}
		switch {
		case errors.Is(err, errNotStored) && leader:
			return &found{v: v, uncached: l.f.Load()}, nil
		case errors.Is(err, errNotStored):
			return &found{v: v, passOn: true}, nil
		case errors.Is(err, errRelay):
			return &found{v: v, relay: true}, nil
		case err != nil:
			return nil, err
		case leader:
			f := l.f.Load()
			s.h.noteTags(v, f.rec)
			return &found{v: v, rec: inFile(f, res), tier: "upstream", loaded: true, cookies: ownCookies(f), held: res}, nil
		}
		rec, err := decodeStored(res.Data, res.Tier)
		if err == nil && attempt == 0 && s.h.banned(rec) {
			// A tag of it was purged after it was fetched: fetch it anew.
			res.Release()
			if ierr := s.h.invalidate(v); ierr != nil {
				return nil, ierr
			}
			continue
		}
		if err == nil {
			s.h.noteTags(v, rec)
			return &found{v: v, rec: rec, tier: tierName(res.Tier), coalesced: res.Tier == tier.Miss, held: res}, nil
		}
		res.Release()
		s.h.stats.corrupt.Add(1)
		s.h.log.Warn("dropping a corrupt edge record", "key", key, "err", err)
		if ierr := s.h.invalidate(v); ierr != nil || attempt > 0 {
			return nil, errors.Join(err, ierr)
		}
	}
}

// inFile returns f's record with its body in the memory file the engine
// kept its bytes in (res.RAM, a copy of f.data), so that the heap's copy
// goes as soon as the load is over; f's own record when RAM kept none.
func inFile(f *fetched, res engine.Result) *record {
	if res.RAM == nil || len(res.Data) != len(f.data) {
		return f.rec
	}
	r := *f.rec
	end := len(f.data) - recordSumLen // the body ends where the checksum begins
	r.body = res.Data[end-len(f.rec.body) : end : end]
	return &r
}

// lastResort returns the copy the engine holds of key when the load of a
// miss failed upstream (a transport error, a 5xx the policy does not
// store, only-if-cached): a flash copy the engine counted a miss (its
// read passed the deadline, or reads were skipped) is read however long
// the device takes (engine.FindLastResort), since the upstream cannot
// answer. ok is false when the load did not fail so, or nothing is held.
func (s *serving) lastResort(key string, err error, leader bool, l *headLoad) (engine.Result, bool) {
	switch {
	case err == nil:
		return engine.Result{}, false
	case errors.Is(err, errNotStored):
		if f := l.f.Load(); !leader || f == nil || !httpcache.UpstreamFailed(f.status) {
			return engine.Result{}, false
		}
	case !errors.Is(err, ErrBadGateway) && !errors.Is(err, ErrGatewayTimeout) && !errors.Is(err, ErrOnlyIfCached):
		return engine.Result{}, false
	}
	f := s.h.eng.FindLastResort(s.r.Context(), key)
	if f.Data == nil {
		f.Release()
		return engine.Result{}, false
	}
	s.h.stats.lastResort.Add(1)
	return f.Result, true
}

// use answers from what lookup found, as httpcache.Decide says.
func (s *serving) use(f *found) {
	h := s.h
	switch {
	case f.uncached != nil:
		s.respondUncached(f.uncached)
		return
	case f.passOn:
		s.pass()
		return
	case f.relay:
		s.relay()
		return
	case f.stream != nil:
		s.respondStream(f, f.stream)
		return
	case f.loaded:
		h.stats.misses.Add(1)
		s.respond(f.rec, &f.rec.entry, f, CacheMiss)
		return
	}
	e := h.current(f.v, f.rec)
	s.decided(f, e, s.q.policy.Decide(e, s.q.cacheRequest(), h.opts.Now()))
}

// decided answers with the stored response f, whose current entry is e,
// as the decision d says (RFC 9111 §4, RFC 5861).
func (s *serving) decided(f *found, e *httpcache.Entry, d httpcache.Decision) {
	h := s.h
	switch d.Action {
	case httpcache.Fresh:
		h.stats.hits.Add(1)
		status := CacheHit
		if f.coalesced {
			h.stats.coalesced.Add(1)
			status = CacheCoalesced
		}
		s.respond(f.rec, e, f, status)
	case httpcache.Stale:
		h.stats.stale.Add(1)
		s.respond(f.rec, e, f, CacheStale)
	case httpcache.StaleRevalidate:
		h.stats.stale.Add(1)
		h.background(s.q, f.v, f.rec, e)
		s.respond(f.rec, e, f, CacheStale)
	case httpcache.Revalidate:
		s.revalidate(f, e)
	case httpcache.GatewayTimeout:
		s.fail(ErrOnlyIfCached)
	default:
		s.pass()
	}
}

// revalidation is the outcome of a conditional request.
type revalidation struct {
	// entry is the stored entry refreshed by a 304.
	entry *httpcache.Entry
	// fresh is the new response that replaced the stored one; its rec is
	// nil when it is not stored.
	fresh *fetched
	// err is why the upstream gave no usable answer.
	err error
}

// failedStatus is the status ServeOnError weighs: 0 without an answer.
func (rv *revalidation) failedStatus() (int, bool) {
	switch {
	case rv.err != nil:
		return 0, true
	case rv.fresh != nil && httpcache.UpstreamFailed(rv.fresh.status):
		return rv.fresh.status, true
	}
	return 0, false
}

// revalidate sends a conditional request for the stored response f (RFC
// 9111 §4.3), one for all the requests that need it at once, and answers.
func (s *serving) revalidate(f *found, e *httpcache.Entry) {
	h := s.h
	leader := false
	v, _, _ := h.reval.Do(f.v+"\x00"+strconv.FormatUint(f.rec.id, 36), func() (any, error) {
		leader = true
		// Others may wait for this revalidation: the client going away
		// does not cancel it.
		return h.revalidate(context.WithoutCancel(s.r.Context()), &s.q, f.v, f.rec, e), nil
	})
	rv := v.(*revalidation)
	if status, failed := rv.failedStatus(); failed {
		switch ok, _ := s.q.policy.ServeOnError(e, s.q.cacheRequest(), status, h.opts.Now()); {
		case ok:
			h.stats.stale.Add(1)
			s.respond(f.rec, e, f, CacheStale)
		case rv.err != nil:
			// A copy is held, but it may not answer stale.
			s.w.Header().Set(HeaderCache, CacheExpired)
			s.fail(rv.err)
		case leader:
			s.respondUncached(rv.fresh) // the upstream's error, as it sent it
		default:
			s.pass()
		}
		return
	}
	switch {
	case rv.entry != nil:
		s.respond(f.rec, rv.entry, f, CacheRevalidated)
	case rv.fresh.rec != nil && (leader || rv.fresh.rec.entry.MatchesVary(s.r.Header)):
		h.stats.misses.Add(1)
		s.respond(rv.fresh.rec, &rv.fresh.rec.entry, &found{v: f.v, tier: "upstream"}, CacheExpired)
	case leader:
		s.respondUncached(rv.fresh)
	default:
		// Not stored, or another variant than this request's: the
		// response was the leader's.
		s.pass()
	}
}

// revalidate sends the conditional request for rec, stored under the
// variant directory v with the current entry e: a 304 refreshes it
// (Policy.Freshen), a new storable response replaces it, any other answer
// but an upstream failure drops it.
func (h *Handler) revalidate(ctx context.Context, q *query, v string, rec *record, e *httpcache.Entry) *revalidation {
	// A revalidation that ended between the caller's decision and this
	// one's start may have refreshed the entry already.
	if n := h.current(v, rec); n != e && q.policy.Decide(n, q.cacheRequest(), h.opts.Now()).Action == httpcache.Fresh {
		return &revalidation{entry: n}
	}
	h.stats.revalidations.Add(1)
	if ok, _ := q.policy.ServeOnError(e, q.cacheRequest(), http.StatusBadGateway, h.opts.Now()); ok {
		q.staleOK = true
		defer func() { q.staleOK = false }()
	}
	f, err := h.fetchHead(ctx, q, e.Conditional(), h.firstRequest(q), nil)
	if err != nil {
		return &revalidation{err: err}
	}
	if f.status == http.StatusNotModified && e.Matches304(f.header) {
		n := q.policy.Freshen(e, f.header, f.reqT, f.respT)
		h.setRefreshed(v, rec.id, n)
		h.stats.revalidated.Add(1) // after the refresh: a caller that waits on the counter sees the new entry
		return &revalidation{entry: n}
	}
	if f.status == http.StatusNotModified {
		// A 304 for another representation (RFC 9111 §4.3.4): fetch anew.
		if f, err = h.fetchHead(ctx, q, nil, h.firstRequest(q), nil); err != nil {
			return &revalidation{err: err}
		}
	}
	// The body is read: its room goes back before replace waits for a
	// load slot (with every slot held by loads waiting for fill room, a
	// revalidation holding room while it waited for one stalled both).
	f.fill.unref()
	f.fill = nil
	if httpcache.UpstreamFailed(f.status) {
		return &revalidation{fresh: f}
	}
	if err := h.replace(ctx, v, f); err != nil {
		h.log.Warn("replacing an edge entry", "key", v, "err", err)
	}
	return &revalidation{fresh: f}
}

// replace drops the variant under v and stores f's record in its place.
func (h *Handler) replace(ctx context.Context, v string, f *fetched) error {
	if err := h.invalidate(v); err != nil {
		return err
	}
	if f.rec == nil {
		return nil
	}
	h.noteTags(v, f.rec)
	res, err := h.eng.GetWithHeld(ctx, sliceKey(v, 0), func(context.Context) ([]byte, error) { return f.data, nil })
	res.Release() // held, not copied: nothing of it is used
	return err
}

// background revalidates rec in a goroutine the handler owns (RFC 5861
// §3), unless MaxBackground are running or the handler is closed. q's
// header is copied: the client's request ends before the revalidation.
func (h *Handler) background(q query, v string, rec *record, e *httpcache.Entry) {
	select {
	case h.bg <- struct{}{}:
	default:
		return
	}
	h.life.Lock()
	defer h.life.Unlock()
	if h.life.closed {
		<-h.bg
		return
	}
	q.header = q.header.Clone()
	h.life.wg.Add(1)
	go func() {
		defer h.life.wg.Done()
		defer func() { <-h.bg }()
		h.reval.Do(v+"\x00"+strconv.FormatUint(rec.id, 36), func() (any, error) {
			return h.revalidate(h.life.ctx, &q, v, rec, e), nil
		})
	}()
}

// respond answers with the stored record rec and the entry e (the stored
// one or a refreshed one): e's fields with the current Age (RFC 9111 §4),
// the tier and cache status, and the body, ranges and client conditionals
// answered by http.ServeContent.
func (s *serving) respond(rec *record, e *httpcache.Entry, f *found, status string) {
	hdr := s.w.Header()
	copyResponseHeader(hdr, e.ResponseHeader(s.h.opts.Now()))
	addOwnCookies(hdr, f.cookies)
	hdr.Set(HeaderTier, f.tier)
	hdr.Set(HeaderCache, status)
	var body io.ReadSeeker = bytes.NewReader(rec.body)
	var sr *sliceReader
	if int64(len(rec.body)) < rec.complete {
		sr = &sliceReader{s: s, v: f.v, head: rec, size: int64(len(rec.body)), cur: -1}
		body = sr
	}
	if _, ranged := s.r.Header["Range"]; ranged {
		// A multipart answer is read by a goroutine of ServeContent's
		// that can outlive it (a client that went away): it must read
		// nothing of a flash hit buffer once it went back to the pool,
		// nor take a slice's after sr's last close.
		g := &engine.GuardedReader{R: body}
		if sr != nil {
			g.OnClose = sr.close
		}
		defer g.Close()
		body = g
	} else if sr != nil {
		defer sr.close()
	}
	s.writeBody(e.Status, rec.complete, body)
}

// respondUncached answers with this request's own response, which is not
// stored: whole when it was read whole, else forwarded anew.
func (s *serving) respondUncached(f *fetched) {
	if f.pass {
		s.pass()
		return
	}
	s.h.stats.passes.Add(1)
	hdr := s.w.Header()
	copyResponseHeader(hdr, f.header)
	hdr.Set(HeaderTier, "upstream")
	hdr.Set(HeaderCache, CachePass)
	s.writeBody(f.status, f.complete, bytes.NewReader(f.body))
}

// writeBody writes status and body, with the header already set. A 200
// goes through http.ServeContent, which answers Range, If-None-Match,
// If-Modified-Since and HEAD from the header's ETag and Last-Modified.
func (s *serving) writeBody(status int, size int64, body io.ReadSeeker) {
	hdr := s.w.Header()
	if status != http.StatusOK {
		if bodyAllowed(status) {
			hdr.Set("Content-Length", itoa(size))
		}
		s.w.WriteHeader(status)
		if s.r.Method != http.MethodHead && bodyAllowed(status) {
			io.Copy(s.w, body)
		}
		return
	}
	if _, ok := hdr["Content-Type"]; !ok {
		hdr["Content-Type"] = nil // no sniffing: the upstream sent none
	}
	lm, _ := httpcache.ParseHTTPDate(hdr.Get("Last-Modified"))
	http.ServeContent(s.w, s.r, "", lm, body)
}

// unsentFields are stored fields the edge does not send as stored: the
// length and range fields http.ServeContent computes.
var unsentFields = []string{"Content-Length", "Content-Range", "Accept-Ranges"}

// copyResponseHeader sets src's end-to-end fields in dst.
func copyResponseHeader(dst, src http.Header) {
	tmp := http.Header{}
	copyEndToEnd(tmp, src, true)
	for _, name := range unsentFields {
		tmp.Del(name)
	}
	for name, v := range tmp {
		dst[name] = v
	}
	dst.Add("Via", via)
}

// pass forwards the client's request as it is, method, body, Range and
// conditionals included, and streams the answer back without storing it.
// It returns the upstream's status and header, ok false when the upstream
// failed.
func (s *serving) pass() (status int, header http.Header, ok bool) {
	s.h.stats.passes.Add(1)
	return s.forwardAs(CachePass, nil)
}

// copyBuffers are the buffers answers forwarded from the upstream are
// copied through (forwardAs): a relayed request is as common as a flash
// hit while the device is overloaded, and io.Copy's own would be 32 KiB
// of garbage for each.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// errRelay is a lookup whose stored copy the engine shed (relayable).
var errRelay = errors.New("edge: stored copy shed by the overloaded flash device")

// relayable reports whether a lookup whose stored copy the engine shed
// is relayed from the upstream rather than loaded: a GET or HEAD that
// may go upstream (not only-if-cached), unless a relay of it failed.
func (s *serving) relayable() bool {
	return !s.noRelay && (s.r.Method == http.MethodGet || s.r.Method == http.MethodHead) &&
		httpcache.Miss(s.q.cacheRequest()).Action != httpcache.GatewayTimeout
}

// relay answers a request whose stored copy flash holds but the engine
// did not read, its device overloaded (engine.Found.Shed): the request
// goes upstream as it is and the answer streams back, nothing stored (the
// copy stays on flash, a load would be thrown away), so that the misses
// an overloaded device sheds cost neither a load slot nor fill memory,
// only the upstream's time. If the upstream fails (no answer, or a 500,
// 502, 503 or 504: httpcache.UpstreamFailed), the request is served
// again without relaying (serveHeld). At most Options.MaxRelays relay at
// once: past them the request is served the same way, so that an
// overloaded device does not pass its whole load on to the upstream
// (what then reaches the upstream is what any miss may: a load, bounded
// by the engine's loads at once).
func (s *serving) relay() {
	release := func() {}
	if r := s.h.relays; r != nil {
		select {
		case r <- struct{}{}:
			held := true
			release = func() { // once: a failed relay gives it back before serving again
				if held {
					held = false
					<-r
				}
			}
			defer release()
		default:
			s.h.stats.relaysFull.Add(1)
			s.serveHeld()
			return
		}
	}
	s.h.stats.relayed.Add(1)
	if _, _, ok := s.forwardAs(CacheMiss, func() {
		release()
		s.serveHeld()
	}); ok {
		s.h.stats.misses.Add(1)
	}
}

// serveHeld serves a shed request again without relaying it: its copy is
// read past the read limit, within the engine's LastResortReadDeadline
// (engine.FindLastResort, in getWith), else loaded as any miss is.
func (s *serving) serveHeld() {
	s.noRelay = true
	s.serve()
}

// forwardAs forwards the client's request as it is and streams the answer
// back, with cache status status; failed, if set, answers instead when
// the upstream fails (see relay).
func (s *serving) forwardAs(cacheStatus string, failed func()) (status int, header http.Header, ok bool) {
	h := s.h
	hdr := http.Header{}
	for _, name := range conditionalFields {
		if v := s.r.Header.Values(name); len(v) > 0 {
			hdr[name] = v
		}
	}
	var body io.Reader
	if s.r.ContentLength != 0 {
		body = s.r.Body
	}
	ex, err := h.sendRequest(s.r.Context(), &s.q, s.r.Method, body, s.r.ContentLength, hdr)
	if failed != nil && s.r.Context().Err() == nil && (err != nil || httpcache.UpstreamFailed(ex.resp.StatusCode)) {
		if err == nil {
			io.Copy(io.Discard, io.LimitReader(ex.resp.Body, 64<<10)) // keep the connection if it is short
			ex.close()
		}
		failed()
		return 0, nil, false
	}
	if err != nil {
		s.fail(err)
		return 0, nil, false
	}
	defer ex.close()
	copyEndToEnd(s.w.Header(), ex.resp.Header, true)
	s.w.Header().Add("Via", via)
	s.w.Header().Set(HeaderTier, "upstream")
	s.w.Header().Set(HeaderCache, cacheStatus)
	s.w.WriteHeader(ex.resp.StatusCode)
	buf := copyBuffers.Get().(*[]byte)
	n, err := io.CopyBuffer(s.w, ex.resp.Body, *buf)
	copyBuffers.Put(buf)
	h.noteBytes(ex, int(n))
	if err != nil {
		h.stats.errors.Add(1)
		panic(http.ErrAbortHandler) // the client must see the body cut short
	}
	return ex.resp.StatusCode, ex.resp.Header, true
}

// forward passes a request of another method than GET and HEAD upstream
// and drops what its answer invalidates (RFC 9111 §4.4): the target, and
// the Location and Content-Location of the same origin that lie under an
// upstream of this handler.
func (s *serving) forward() {
	status, header, ok := s.pass()
	if !ok {
		return
	}
	target := &url.URL{Scheme: "http", Host: s.r.Host, Path: s.r.URL.Path, RawPath: s.r.URL.RawPath, RawQuery: s.r.URL.RawQuery}
	if s.r.TLS != nil {
		target.Scheme = "https"
	}
	for _, uri := range httpcache.Invalidations(s.r.Method, target, status, header) {
		u, err := url.Parse(uri)
		if err != nil {
			continue
		}
		p := u.EscapedPath()
		if u.RawQuery != "" {
			p += "?" + u.RawQuery
		}
		if err := s.h.purgeObject(p); err != nil && !errors.Is(err, ErrNoUpstream) {
			s.h.log.Warn("invalidating after an unsafe method", "uri", uri, "err", err)
		}
	}
}

// fail answers an edge error with its status (StatusOf) and, as every
// Strata route does, a problem; its detail names the sentinel only,
// not the upstream's address.
func (s *serving) fail(err error) {
	httpapi.AbortIfGone(s.r) // nobody to answer: never an error written to no one
	s.h.stats.errors.Add(1)
	if errors.Is(err, engine.ErrBusy) {
		// Flash held it, but the hits in flight hold flash_hit_memory:
		// not the upstream's failure, a 503 with Retry-After as the
		// videos path answers.
		writeError(s.w, http.StatusServiceUnavailable, errHitsBusy)
		return
	}
	if errors.Is(err, errFillBusy) {
		writeError(s.w, http.StatusServiceUnavailable, errFillBusy)
		return
	}
	if !errors.Is(err, ErrOnlyIfCached) {
		s.h.log.Debug("edge request failed", "path", s.r.URL.Path, "err", err)
	}
	writeError(s.w, StatusOf(err), publicError(err))
}

// errHitsBusy is the detail of a flash hit answered 503 (engine.ErrBusy).
var errHitsBusy = errors.New("too many answers from flash are being sent; retry later")

// writeError answers err as every Strata route does: an RFC 9457 problem,
// never cached.
func writeError(w http.ResponseWriter, code int, err error) {
	httpapi.Error(w, code, err.Error())
}

// publicError returns the edge sentinel err wraps, for clients.
func publicError(err error) error {
	for _, e := range []error{ErrGatewayTimeout, ErrOnlyIfCached, ErrChanged, ErrCorrupt} {
		if errors.Is(err, e) {
			return e
		}
	}
	return ErrBadGateway
}

// sliceReader reads a sliced representation, fetching (through the
// engine) only the slices the reads reach: http.ServeContent seeks to each
// range it answers.
type sliceReader struct {
	s    *serving
	v    string  // variant key directory
	head *record // slice 0
	size int64   // slice size: the length of slice 0
	off  int64
	cur  int64  // index of data's slice, -1 for none
	data []byte // body of slice cur
	// held is the engine's answer data lies in (a flash hit's buffer),
	// released when the next slice replaces it and by close.
	held engine.Result
}

// close releases the buffer of the slice read last: call it once the
// answer is written.
func (r *sliceReader) close() {
	r.held.Release()
	r.held, r.data, r.cur = engine.Result{}, nil, -1
}

// Seek implements io.Seeker.
func (r *sliceReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.head.complete
	}
	if offset < 0 {
		return 0, errors.New("edge: seek before the start")
	}
	r.off = offset
	return offset, nil
}

// Read implements io.Reader.
func (r *sliceReader) Read(p []byte) (int, error) {
	if r.off >= r.head.complete {
		return 0, io.EOF
	}
	n := r.off / r.size
	if n != r.cur {
		r.close()
		data, held, err := r.s.slice(r.v, r.head, r.size, n)
		if err != nil {
			r.s.h.stats.errors.Add(1)
			return 0, err
		}
		r.cur, r.data, r.held = n, data, held
	}
	k := copy(p, r.data[r.off-n*r.size:])
	r.off += int64(k)
	return k, nil
}

// slice returns the body of slice n (n > 0: slice 0 is head) of the
// object under v, from the engine or the upstream. A stored slice that
// does not decode or does not match head (Combinable, offsets, lengths)
// is dropped and fetched again; a fetched one that does not match means the
// representation changed, and the whole variant is dropped. The body
// lies in held's flash hit buffer, if any: the caller releases it once
// the body is written.
func (s *serving) slice(v string, head *record, size, n int64) (body []byte, held engine.Result, err error) {
	if n == 0 {
		return head.body, engine.Result{}, nil
	}
	key := sliceKey(v, n)
	want := min(size, head.complete-n*size)
	for attempt := 0; ; attempt++ {
		res, err := s.h.eng.GetWithHeld(s.r.Context(), key, func(ctx context.Context) ([]byte, error) {
			return s.h.fetchSlice(ctx, &s.q, head, size, n)
		})
		if errors.Is(err, ErrChanged) {
			s.h.invalidate(v)
		}
		if errors.Is(err, ErrBadGateway) || errors.Is(err, ErrGatewayTimeout) {
			// The upstream failed on a miss: a copy the engine missed
			// (a flash read past its deadline) answers, as for the first
			// slice (lastResort).
			if f := s.h.eng.FindLastResort(s.r.Context(), key); f.Data != nil {
				s.h.stats.lastResort.Add(1)
				res, err = f.Result, nil
			} else {
				f.Release()
			}
		}
		if err != nil {
			res.Release()
			return nil, engine.Result{}, err
		}
		rec, err := decodeStored(res.Data, res.Tier)
		if err == nil && rec.offset == n*size && rec.complete == head.complete &&
			int64(len(rec.body)) == want && httpcache.Combinable(head.entry.Header, rec.entry.Header) {
			return rec.body, res, nil
		}
		res.Release()
		if err != nil {
			s.h.stats.corrupt.Add(1)
		}
		if ierr := s.h.eng.Invalidate(key); ierr != nil || attempt > 0 {
			s.h.invalidate(v)
			return nil, engine.Result{}, errors.Join(ErrChanged, err, ierr)
		}
	}
}
