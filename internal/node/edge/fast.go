package edge

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/strata-media/strata/internal/core/httpcache"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi/front"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/ramfile"
	"github.com/strata-media/strata/internal/storage/store"
)

// ServeFast answers the edge's common case without the API's layers
// (front.FastHandler): a plain GET or HEAD (no Range, no conditional;
// whatever else the request says, Cache-Control, Pragma, Authorization,
// Vary'd fields, httpcache.Decide weighs as the general path does) of a
// stored 200 that is fresh for it, held whole in its first slice, in RAM
// or on flash, without a Content-Encoding. Its answer is the one
// ServeHTTP's respond and http.ServeContent would make, field for field.
//
// Everything else goes to the general path, with the engine's answers to
// the lookups made here attached (withFinds), so that the tiers are asked
// once per key, as the general path alone asks them.
func (h *Handler) ServeFast(w http.ResponseWriter, r *http.Request, c front.CORS) (string, int, *http.Request) {
	return h.serveFast(w, r, c, "")
}

// Prompt reports that ServeFast never waits for an upstream
// (front.Prompt): a miss, a stale record or one being fetched it hands
// back; a flash hit waits only for the node's own hit memory and device,
// within the engine's bounds (HitQueueWait, the read deadline).
func (h *Handler) Prompt() bool { return true }

// Prompt is the Handler's (front.Prompt).
func (f fastRoute) Prompt() bool { return true }

var (
	_ front.Prompt = (*Handler)(nil)
	_ front.Prompt = fastRoute{}
)

// fastRoute is the Handler's FastHandler for one mounted prefix: its
// answers are counted under the route the general path counts them
// under, the prefix's GET pattern, whichever upstream a reload has put
// under it since.
type fastRoute struct {
	h     *Handler
	route string
}

func (f fastRoute) ServeFast(w http.ResponseWriter, r *http.Request, c front.CORS) (string, int, *http.Request) {
	return f.h.serveFast(w, r, c, f.route)
}

// serveFast is ServeFast, counted under route ("": the upstream's).
func (h *Handler) serveFast(w http.ResponseWriter, r *http.Request, c front.CORS, route string) (string, int, *http.Request) {
	if !fastRequest(r) {
		return "", 0, r
	}
	rt, rest, ok := h.match(r.URL.EscapedPath())
	if !ok {
		return "", 0, r
	}
	q := h.newQuery(rt, rest, r)
	// fs holds the lookups' flash hit buffers: released once the answer
	// is written, or handed with the request to the general path (a
	// copy: fs itself stays on the stack).
	var fs lookups
	var rb record        // the record of a RAM hit remembered (fastDecoded)
	key := q.obj + "a/0" // sliceKey(variantKey(q.obj, ""), 0), in one string
	v := key[:len(key)-1]
	// A flash hit of verified records goes out from the device where the
	// writer can send a file (the Front, plain TCP, a GET): only the
	// record's body, its header read to decide (decision 0031).
	fw, _ := w.(front.FileWriter)
	file := fw != nil && r.Method == http.MethodGet && fw.CanSendFile()
	rec, dr, res, ok := h.fastLookup(r.Context(), &fs, key, &rb, file)
	if ok && !rec.entry.MatchesVary(r.Header) {
		names, _ := httpcache.ParseVary(rec.entry.Header)
		v = variantKey(q.obj, httpcache.VaryKey(names, r.Header))
		rec, dr, res, ok = h.fastLookup(r.Context(), &fs, sliceKey(v, 0), &rb, file)
	}
	if !ok || h.banned(rec) {
		return "", 0, fs.attach(r)
	}
	now := h.opts.Now()
	e := h.current(v, rec)
	// A record remembered from RAM, not refreshed by a 304 since: its
	// age from the initial age parsed once, its fields made once.
	remembered := dr != nil && e == &rec.entry
	n := int64(len(rec.body))
	if res.File != nil {
		n = res.File.Len()
	}
	if e.Status != http.StatusOK || n != rec.complete || len(e.Header["Content-Encoding"]) > 0 {
		return "", 0, fs.attach(r)
	}
	var d httpcache.Decision
	if remembered {
		d = q.policy.DecideParsed(e, &dr.parsed, q.cacheRequest(), now)
	} else {
		d = q.policy.Decide(e, q.cacheRequest(), now)
	}
	if d.Action != httpcache.Fresh {
		return "", 0, fs.attach(r)
	}
	h.stats.hits.Add(1)
	// A RAM hit of a remembered record: the header the Front laid out for
	// the record's last hit, if it still holds (laidKey), or this
	// one's, kept for the next.
	var lw front.LaidWriter
	var lk laidKey
	var body front.FileBody // what a laid header goes with
	switch {
	case !remembered || !file:
	case res.File != nil:
		body = res.File
	case res.RAM != nil:
		body = res.RAM.Range(bodyOffset(res.Data, rec.body), int64(len(rec.body)))
	}
	if body != nil {
		lw, _ = w.(front.LaidWriter)
	}
	if lw != nil {
		lk = laidKey{age: -1, cors: c, origin: r.Header.Get("Origin")}
		if dr.age {
			lk.age = int64(d.Age / time.Second)
		}
		if l := dr.laid.Get(lk); l != nil {
			if _, _, ok := lw.SendFileLaid(l, body); ok {
				fs.release()
				return cmp.Or(route, "GET "+rt.prefix), http.StatusOK, nil
			}
		}
	}
	hdr := w.Header()
	c.Apply(hdr, r)
	if remembered {
		for _, f := range dr.sent {
			hdr[f.name] = f.values
		}
		if dr.age {
			hdr["Age"] = dr.ageField(d.Age)
		}
	} else {
		fastHeader(hdr, e, rec.complete, tierName(res.Tier), now)
	}
	w.WriteHeader(http.StatusOK)
	switch {
	case r.Method == http.MethodHead:
	case res.File != nil:
		fw.SendFile(res.File) //nolint:errcheck // a failed send closes the connection
	case file && res.RAM != nil:
		// A RAM hit in a memory file: the body's range of it, sent
		// without a copy (decision 0036).
		fw.SendFile(res.RAM.Range(bodyOffset(res.Data, rec.body), int64(len(rec.body)))) //nolint:errcheck // as above
	default:
		w.Write(rec.body) //nolint:errcheck // a client that went away is not an error of ours
	}
	if lw != nil {
		if l, ok := lw.Laid(); ok {
			dr.laid.Keep(lk, l)
		}
	}
	fs.release() // a flash hit's buffer or pin, or a memory file, once written
	return cmp.Or(route, "GET "+rt.prefix), http.StatusOK, nil
}

// A laidKey is what the header laid out for a hit of a remembered
// record (front.Laid) was made of besides the record: the Age in seconds
// (-1: none), the CORS policy and the request's Origin.
type laidKey struct {
	age    int64
	cors   front.CORS // comparable: the Front's policies are
	origin string
}

// bodyOffset is where body, a slice of data, starts in it.
func bodyOffset(data, body []byte) int64 { return int64(cap(data) - cap(body)) }

// fastHeader sets in hdr the fields of a fresh hit on e, the stored
// response of complete bytes, served from tier at now: those respond and
// http.ServeContent set on a plain GET (writeBody), all but CORS's.
func fastHeader(hdr http.Header, e *httpcache.Entry, complete int64, tier string, now time.Time) {
	copyResponseHeader(hdr, e.ResponseHeader(now))
	hdr.Set(HeaderTier, tier)
	hdr.Set(HeaderCache, CacheHit)
	if _, ok := hdr["Content-Type"]; !ok {
		hdr["Content-Type"] = nil // no sniffing: the upstream sent none
	}
	normalizeLastModified(hdr)
	hdr.Set("Accept-Ranges", "bytes")
	hdr.Set("Content-Length", itoa(complete))
}

// normalizeLastModified writes hdr's Last-Modified as http.ServeContent
// does (writeBody): in the IMF-fixdate format, from a date in any of the
// formats RFC 9110 allows, unless it is the zero time or the Unix epoch.
func normalizeLastModified(hdr http.Header) {
	if lm, _ := httpcache.ParseHTTPDate(hdr.Get("Last-Modified")); !lm.IsZero() && !lm.Equal(time.Unix(0, 0)) {
		hdr.Set("Last-Modified", lm.UTC().Format(http.TimeFormat))
	}
}

// fastRequest reports whether r may be answered by ServeFast: a GET or
// HEAD without a body, Range or conditional fields (http.ServeContent
// answers those), on a path the mux serves as it is (no empty, "." or
// ".." segment, which it would redirect or ServeHTTP refuse).
func fastRequest(r *http.Request) bool {
	if !streamable(r) || r.ContentLength != 0 {
		return false
	}
	p := r.URL.Path
	return !strings.Contains(p, "//") && !dotSegments(p)
}

// fastLookup looks up key, the first slice of a variant, for ServeFast and
// records the engine's answer in fs, which holds a flash hit's buffer
// (engine.FindHeld: the record aliases it) until released. ok is false
// when it is not a stored record held in RAM or on flash (a miss, a
// corrupt record, a response being fetched: the general path takes
// those). dr is what is remembered of a record in RAM, nil for one read
// from flash; rec is then rb, filled in. With file, a flash hit of
// verified records may come pinned on the device instead
// (engine.FindHeldFile): res.File, narrowed to the record's body, and
// rec without its body.
func (h *Handler) fastLookup(ctx context.Context, fs *lookups, key string, rb *record, file bool) (rec *record, dr *decodedRecord, res engine.Result, ok bool) {
	h.streams.Lock()
	_, fetching := h.streams.m[key]
	h.streams.Unlock()
	if fetching {
		return nil, nil, res, false
	}
	var f engine.Found
	if file {
		f = h.eng.FindHeldFile(ctx, key)
	} else {
		f = h.eng.FindHeld(ctx, key)
	}
	if f.File != nil {
		if dr := h.flashDecoded.get(f.File); dr != nil {
			// No header read took hit memory: the ends' buffer is
			// taken now, before the answer begins (a full hit memory
			// goes to the general path, which answers 503).
			if err := f.File.ReadMem(); err != nil {
				f.Release()
				return nil, nil, res, false
			}
			*rb = dr.rec
			fs.add(key, f)
			return rb, dr, f.Result, true
		}
		rec, pre, err := fileRecord(f.File)
		if err == nil {
			fs.add(key, f)
			if pre > flashRecordMaxHead {
				return rec, nil, f.Result, true
			}
			dr := h.flashDecoded.remember(f.File, newDecoded(rec, int(pre), int(f.File.Size()), f.Tier))
			*rb = dr.rec
			return rb, dr, f.Result, true
		}
		if errors.Is(err, engine.ErrBusy) || ctx.Err() != nil {
			// No hit memory for its header, past the queue's wait: nor
			// for all of it. The general path asks once more and
			// answers 503.
			f.Release()
			return nil, nil, res, false
		}
		// A header past the first chunk: the buffered hit.
		if f, ok = inMemory(f); !ok {
			return nil, nil, res, false
		}
	}
	fs.add(key, f)
	if f.Data == nil {
		return nil, nil, res, false
	}
	rec, dr, err := fastDecoded.decode(f.Data, f.RAM, f.Tier, rb)
	if err != nil {
		return nil, nil, res, false
	}
	return rec, dr, f.Result, true
}

// fileHead is how much of a pinned record fileRecord reads first: its
// header, whatever its fields, in one aligned read, most times.
const fileHead = 2048

// fileRecord reads the header of the record pinned on the device by hit
// and narrows hit to the record's body (without the record's checksum:
// its flash records are verified, decision 0030). The record has no body.
func fileRecord(hit *store.FileHit) (rec *record, pre int64, err error) {
	head, err := hit.Head(fileHead)
	if err != nil {
		return nil, 0, err
	}
	rec, pre, err = decodeRecordHead(head, hit.Size())
	if err == errShortHead {
		if head, err = hit.Head(int(pre)); err != nil {
			return nil, 0, err
		}
		rec, pre, err = decodeRecordHead(head, hit.Size())
	}
	if err != nil {
		return nil, 0, err
	}
	if !hit.Window(pre, hit.Size()-pre-recordSumLen) {
		return nil, 0, ErrCorrupt
	}
	return rec, pre, nil
}

// flashRecordsMax bounds the records flashDecoded remembers, and
// flashRecordMaxHead the stored header of one it remembers (a larger one
// is decoded at each hit): each holds its fields about twice (the stored
// ones, those sent and a laid header), so at most about 32 MiB in all.
const (
	flashRecordsMax    = 4096
	flashRecordMaxHead = 4 << 10
)

// flashRecords remember what was decoded of records hit on one cache's
// flash (Handler.flashDecoded), by their segment's key, generation and
// size (store.FileHit.Record): the bytes a block write stored never
// change while the process runs, and a record written again is written
// under a new generation. The next hit
// of the record then reads no header from the device, nor parses it, and
// sends the header laid out for the last hit while it holds, as a RAM
// hit does. Only verified records are pinned (decision 0030): what is
// remembered was read from bytes that verified. At most flashRecordsMax
// records; a new one past it replaces whichever the map gives first.
type flashRecords struct {
	mu sync.Mutex
	m  map[flashKey]*decodedRecord
}

type flashKey struct {
	key  string
	gen  uint64
	size int64
}

func keyOf(hit *store.FileHit) flashKey {
	key, gen := hit.Record()
	return flashKey{key, gen, hit.Size()}
}

// get returns what is remembered of hit's record, with hit narrowed to
// the record's body; nil if nothing is.
func (fr *flashRecords) get(hit *store.FileHit) *decodedRecord {
	k := keyOf(hit)
	fr.mu.Lock()
	dr := fr.m[k]
	fr.mu.Unlock()
	if dr == nil || !hit.Window(int64(dr.off), hit.Size()-int64(dr.off)-recordSumLen) {
		return nil
	}
	return dr
}

// remember keeps dr for hit's record, unless one is kept already: it
// returns the one kept.
func (fr *flashRecords) remember(hit *store.FileHit, dr *decodedRecord) *decodedRecord {
	k := keyOf(hit)
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if old, ok := fr.m[k]; ok {
		return old
	}
	if fr.m == nil {
		fr.m = make(map[flashKey]*decodedRecord)
	}
	if len(fr.m) >= flashRecordsMax {
		for old := range fr.m {
			delete(fr.m, old)
			break
		}
	}
	fr.m[k] = dr
	return dr
}

// has reports whether k's record is remembered.
func (fr *flashRecords) has(k flashKey) bool {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	_, ok := fr.m[k]
	return ok
}

// inMemory returns f with a pinned flash hit (f.File) read into a hit
// buffer (File.Rest: the whole record), which f then holds: the general
// path takes the bytes only. ok is false, and f released, if it cannot
// be read (the general path looks the key up again).
func inMemory(f engine.Found) (_ engine.Found, ok bool) {
	if f.File == nil || f.Data != nil {
		return f, true
	}
	f.File.Window(0, f.File.Size())
	data, err := f.File.Rest(0)
	if err != nil || int64(len(data)) != f.File.Size() {
		f.Release()
		return engine.Found{}, false
	}
	f.Data = data
	return f, true
}

// lookups are the engine's answers to ServeFast's lookups while it
// decides, on its stack: the first slice of the anchor variant and of
// the request's own. A flash hit's answer holds its buffer
// (engine.FindHeld) until it is released (release) or handed with the
// request to the general path (attach).
type lookups struct {
	n    int
	keys [2]string
	f    [2]engine.Found
}

func (l *lookups) add(key string, f engine.Found) {
	if l.n == len(l.keys) {
		f.Release()
		return
	}
	l.keys[l.n], l.f[l.n] = key, f
	l.n++
}

// release returns the buffers of the answers not taken.
func (l *lookups) release() {
	for i := range l.n {
		l.f[i].Release()
		l.keys[i], l.f[i] = "", engine.Found{}
	}
}

// holds reports whether an answer holds a flash hit's buffer.
func (l *lookups) holds() bool {
	for i := range l.n {
		if l.f[i].Tier == tier.SSD && l.f[i].Data != nil {
			return true
		}
	}
	return false
}

// finds are ServeFast's answers handed to the general path (attach),
// until it takes them (found) or releases them.
type finds struct {
	mu sync.Mutex // found (the request) and a cleanup (attach) may race
	l  lookups
}

// release returns the buffers of the answers not taken.
func (fs *finds) release() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.l.release()
}

type findsKey struct{}

// attachedFinds is the value the request handed to the general path
// carries: ServeHTTP releases what it did not take when it returns
// (releaseFinds). A request handed over with its connection may never
// reach ServeHTTP (the connection closes first): a cleanup then returns
// the buffers when the request is collected.
type attachedFinds struct{ fs *finds }

// attach returns r carrying l's answers, if there are any; they are the
// request's to release from then on (l holds none after it).
func (l *lookups) attach(r *http.Request) *http.Request {
	for i := range l.n {
		if f, ok := inMemory(l.f[i]); ok {
			l.f[i] = f
		} else {
			l.keys[i], l.f[i] = "", engine.Found{}
		}
	}
	if l.n == 0 {
		return r
	}
	fs := &finds{l: *l}
	*l = lookups{}
	a := &attachedFinds{fs}
	if fs.l.holds() {
		runtime.AddCleanup(a, (*finds).release, fs)
	}
	return r.WithContext(context.WithValue(r.Context(), findsKey{}, a))
}

// releaseFinds releases the answers ServeFast attached to r that the
// general path did not take.
func releaseFinds(r *http.Request) {
	if a, ok := r.Context().Value(findsKey{}).(*attachedFinds); ok {
		a.fs.release()
	}
}

// found returns, once, the answer ServeFast had for key; its buffer is
// the caller's to release.
func (fs *finds) found(key string) (engine.Found, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	l := &fs.l
	for i := range l.n {
		if l.keys[i] == key {
			f := l.f[i]
			// The general path may look up again (a corrupt record).
			l.keys[i], l.f[i] = "", engine.Found{}
			return f, true
		}
	}
	return engine.Found{}, false
}

// getWith is the engine's GetWithHeld for the general path: the answer
// ServeFast already had for key, if r carries one, completed with load
// after a miss. A flash hit's Result holds its buffer: the caller
// releases it once the answer is written.
func (s *serving) getWith(ctx context.Context, key string, load engine.Loader) (engine.Result, error) {
	f, ok := engine.Found{}, false
	if a, attached := s.r.Context().Value(findsKey{}).(*attachedFinds); attached {
		f, ok = a.fs.found(key)
	}
	if !ok {
		f = s.h.eng.FindHeld(ctx, key)
	}
	switch {
	case f.Shed() && s.relayable():
		return engine.Result{Tier: tier.Miss}, errRelay
	case f.Shed() && s.noRelay:
		// Not relayed (its relay failed upstream, or the relays were all
		// busy): the copy answers, read past the limit within the
		// engine's LastResortReadDeadline, rather than asking the upstream.
		held := s.h.eng.FindLastResort(ctx, key)
		if held.Data != nil {
			s.h.stats.lastResort.Add(1)
			return held.Result, nil
		}
		held.Release()
	}
	return s.h.eng.Load(ctx, f, load)
}

// fastDecoded are the records ServeFast decoded from RAM.
var fastDecoded decodedRecords

// decodedRecords remember the records decoded from the RAM pool's bytes,
// so that the next hit on the same bytes neither checksums nor parses
// them again (on a 1 MiB hit the checksum was most of ServeFast's time).
// The RAM pool's bytes never change once inserted, and an entry here is
// keyed by a weak pointer to them: it never keeps them alive, and goes
// when they are collected. A flash read is new bytes each time: it is
// decoded, and verified, every time.
type decodedRecords struct {
	mu sync.Mutex
	m  map[decodedKey]*decodedRecord
}

type decodedKey struct {
	p weak.Pointer[byte] // the record's first byte
	n int                // its length
}

// decodedRecord is a record without its body, which lies at off in the
// bytes it was decoded from: it holds nothing of them. sent are the
// fields of a fresh hit on it from RAM (fastHeader) but Age (age: it is
// sent) and CORS's, made once: their values are never changed, and cut
// to their length, so that an Add to a field copies it. parsed is what
// the caching decisions read of its entry's stored fields (its Date, Age
// and Cache-Control), parsed once.
type decodedRecord struct {
	rec    record
	off    int
	len    int // of the bytes it was decoded from
	sent   []sentField
	age    bool
	parsed httpcache.Parsed
	// lastAge is the Age field of the last hit, which the next ones
	// share until the age in seconds changes.
	lastAge atomic.Pointer[ageField]
	// laid is the header of the last hit sent from a memory file, which
	// the next ones send while it holds (front.LaidWriter).
	laid front.LaidSlot[laidKey]
}

// sentField is a field of decodedRecord.sent.
type sentField struct {
	name   string
	values []string
}

// ageField is an Age field's value, as sent, for an age in seconds.
type ageField struct {
	secs   int64
	values []string
}

// ageField returns the Age field's values for age (httpcache.AgeField),
// shared by the hits on the record within one second of age: never
// changed, and cut to their length, as sent's.
func (dr *decodedRecord) ageField(age time.Duration) []string {
	secs := int64(age / time.Second)
	if a := dr.lastAge.Load(); a != nil && a.secs == secs {
		return a.values
	}
	a := &ageField{secs: secs, values: []string{httpcache.AgeField(age)}}
	dr.lastAge.Store(a)
	return a.values
}

// decode is decodeStored(data, t), from memory for bytes of the RAM pool
// (t RAM) already decoded; dr is what is remembered of them (nil for
// flash), and rec then rb, filled in.
func (d *decodedRecords) decode(data []byte, file *ramfile.File, t tier.Tier, rb *record) (rec *record, dr *decodedRecord, err error) {
	if t != tier.RAM || len(data) == 0 {
		rec, err = decodeStored(data, t)
		return rec, nil, err
	}
	// Bytes in a memory file are not in Go's heap: the file keeps what
	// was decoded of them (its bytes never change either), without a
	// lock, a weak pointer or a cleanup.
	var k decodedKey
	if file != nil {
		dr, _ = file.Memo().(*decodedRecord)
	} else {
		k = decodedKey{weak.Make(&data[0]), len(data)}
		d.mu.Lock()
		dr = d.m[k]
		d.mu.Unlock()
	}
	if dr != nil && dr.len == len(data) {
		*rb = dr.rec
		rb.body = data[dr.off : len(data)-recordSumLen]
		return rb, dr, nil
	}
	rec, err = decodeRecord(data)
	if err != nil {
		return nil, nil, err
	}
	dr = newDecoded(rec, len(data)-recordSumLen-len(rec.body), len(data), tier.RAM)
	if file != nil {
		dr = file.SetMemo(dr).(*decodedRecord)
	} else {
		d.remember(k, &data[0], &dr)
	}
	*rb = dr.rec
	rb.body = data[dr.off : len(data)-recordSumLen]
	return rb, dr, nil
}

// newDecoded is what is remembered of rec, decoded from n bytes whose
// body begins at off, for its hits from tier t: the fields such a hit
// sends made once.
func newDecoded(rec *record, off, n int, t tier.Tier) *decodedRecord {
	dr := &decodedRecord{rec: *rec, off: off, len: n, parsed: rec.entry.Parse()}
	dr.rec.body = nil
	sent := http.Header{}
	fastHeader(sent, &dr.rec.entry, rec.complete, tierName(t), time.Time{})
	_, dr.age = sent["Age"]
	delete(sent, "Age")
	for k, v := range sent {
		dr.sent = append(dr.sent, sentField{k, slices.Clip(v)})
	}
	return dr
}

// remember keeps *dr under k, the record at first, unless a record is
// kept there already: *dr is then that one.
func (d *decodedRecords) remember(k decodedKey, first *byte, dr **decodedRecord) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = make(map[decodedKey]*decodedRecord)
	}
	if old, ok := d.m[k]; ok {
		*dr = old
		return
	}
	d.m[k] = *dr
	runtime.AddCleanup(first, d.forget, k)
}

func (d *decodedRecords) forget(k decodedKey) {
	d.mu.Lock()
	delete(d.m, k)
	d.mu.Unlock()
}

// len is how many records are remembered.
func (d *decodedRecords) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.m)
}
