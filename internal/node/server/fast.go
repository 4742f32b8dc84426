package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/front"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/engine"
)

// The object routes, as mounted and as labelled in the route metrics.
const (
	routeTitleFile = "GET /videos/{video}/{name}"
	routeObject    = "GET /videos/{video}/{rendition}/{name}"
	videosPrefix   = "/videos/"
)

// ServeFast answers the common case of the object routes without the
// API's layers (front.FastHandler): a plain GET or HEAD (no range, no
// precondition) of a valid object of a media type never compressed
// (segments; manifests and playlists take the general path, which
// gzips them), that the fallback does not handle. Whatever tier holds
// it, the answer is object's. An error of the engine goes to the general
// path with the engine's answer attached (withPrior), so that it is asked
// once and the error answered there, as ever.
func (s *Videos) ServeFast(w http.ResponseWriter, r *http.Request, c front.CORS) (string, int, *http.Request) {
	o, ok := fastObject(r.URL.Path)
	if !ok || !plain(r) || s.opts.Fallback != nil && s.opts.Fallback.Handles(r.URL.EscapedPath()) {
		return "", 0, r
	}
	ct := s.hdr.contentType(o.Name)
	if httpapi.Compressible(ct[0]) {
		return "", 0, r
	}
	route := routeObject
	if o.Rendition == "" {
		route = routeTitleFile
	}
	start := time.Now()
	// A flash hit of verified records goes out with sendfile(2) where the
	// writer can send a file (the Front, plain TCP, a GET).
	fw, _ := w.(front.FileWriter)
	var res engine.Result
	var err error
	if fw != nil && r.Method == http.MethodGet && fw.CanSendFile() {
		res, err = s.eng.GetHeldFile(r.Context(), o)
	} else {
		res, err = s.eng.GetHeld(r.Context(), o)
	}
	defer res.Release() // a flash hit's buffer or pin, once written
	if err != nil {
		httpapi.NoteUpstream(r.Context(), time.Since(start))
		return "", 0, withPrior(r, &prior{o: o, res: res, err: err})
	}
	if res.Tier == tier.Miss {
		httpapi.NoteUpstream(r.Context(), time.Since(start))
	}
	lm := s.hdr.lastModified(s.modified(r.Context(), o.Video))
	// A RAM hit in a memory file: the header the Front laid out for the
	// object's last hit, if it still holds, or this one's, kept for the
	// next (decision 0040). Not a miss's, which a held load answers from
	// the same file (its header names the origin's tier).
	var lw front.LaidWriter
	var lk laidKey
	if x, ok := w.(front.LaidWriter); ok && res.RAM != nil && res.Tier == tier.RAM && r.Method == http.MethodGet && x.CanSendFile() {
		lw, lk = x, laidKey{cors: c, origin: r.Header.Get("Origin")}
		if lm != nil {
			lk.lastModified = lm[0]
		}
		if m, _ := res.RAM.Memo().(*laidMemo); m != nil {
			if l := m.Get(lk); l != nil {
				if _, _, ok := lw.SendFileLaid(l, res.RAM.Range(0, res.RAM.Len())); ok {
					s.metrics.observe(res.Tier, time.Since(start))
					return route, http.StatusOK, nil
				}
			}
		}
	}
	h := w.Header()
	c.Apply(h, r)
	h["Content-Type"] = ct
	s.setFields(h, o, res, lm)
	h["Accept-Ranges"] = acceptRanges
	n := len(res.Data)
	if res.File != nil {
		n = int(res.File.Len())
	}
	h["Etag"], h["Content-Length"] = entityFields(res.Sum, n)
	switch {
	case r.Method == http.MethodHead:
	case res.File != nil:
		fw.SendFile(res.File) //nolint:errcheck // a failed send closes the connection
	case res.RAM != nil && fw != nil && r.Method == http.MethodGet && fw.CanSendFile():
		// A RAM hit in a memory file, sent without a copy (decision 0036).
		fw.SendFile(res.RAM.Range(0, res.RAM.Len())) //nolint:errcheck // as above
	default:
		w.Write(res.Data)
	}
	if lw != nil {
		if l, ok := lw.Laid(); ok {
			if m, _ := res.RAM.SetMemo(&laidMemo{}).(*laidMemo); m != nil {
				m.Keep(lk, l)
			}
		}
	}
	s.metrics.observe(res.Tier, time.Since(start))
	return route, http.StatusOK, nil
}

// A laidMemo is what a memory file of an object keeps (ramfile.File's
// memo): the header laid out for its last hit, and what that header was
// made of besides the object (its fields are the object's: type, cache
// policy, tier, ETag, length): the CORS policy, the request's Origin and
// the title's Last-Modified.
type laidMemo struct{ front.LaidSlot[laidKey] }

type laidKey struct {
	cors         front.CORS // comparable: the Front's policies are
	origin       string
	lastModified string
}

// fastObject parses an object route's path ("/videos/video/name" or
// "/videos/video/rendition/name") as the mux and objectOf would, without
// allocating. A valid id has no empty, "." or ".." segment, so the path is
// clean: the mux would not redirect it.
func fastObject(p string) (ident.Object, bool) {
	rest, ok := strings.CutPrefix(p, videosPrefix)
	if !ok {
		return ident.Object{}, false
	}
	video, rest, ok := strings.Cut(rest, "/")
	if !ok {
		return ident.Object{}, false
	}
	o := ident.Object{Video: video, Name: rest}
	if rend, name, ok := strings.Cut(rest, "/"); ok {
		o.Rendition, o.Name = rend, name
	}
	if ident.ValidName(o.Video) != nil || ident.ValidName(o.Name) != nil ||
		o.Rendition != "" && ident.ValidName(o.Rendition) != nil || strings.Contains(o.Name, "/") {
		return ident.Object{}, false
	}
	return o, true
}

// entityFields are the ETag (etag) and Content-Length values of n bytes of
// digest sum, made in two allocations instead of four.
func entityFields(sum uint64, n int) (tag, length []string) {
	var b [64]byte
	t := appendETag(b[:0], sum, n)
	k := len(t)
	t = strconv.AppendInt(t, int64(n), 10)
	s := string(t)
	v := make([]string, 2)
	v[0], v[1] = s[:k], s[k:]
	return v[0:1:1], v[1:2:2]
}

// prior is the engine's answer to a request that ServeFast handed to the
// general path.
type prior struct {
	o   ident.Object
	res engine.Result
	err error
}

type priorKey struct{}

// withPrior returns r carrying p.
func withPrior(r *http.Request, p *prior) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), priorKey{}, p))
}

// get is the engine's answer for o: the one ServeFast already had, if r
// carries it (an error: it holds no buffer), otherwise the engine's, whose
// flash hit buffer the caller releases once the answer is written.
func (s *Videos) get(r *http.Request, o ident.Object) (engine.Result, error) {
	if p, ok := r.Context().Value(priorKey{}).(*prior); ok && p.o == o {
		return p.res, p.err
	}
	return s.eng.GetHeld(r.Context(), o)
}

// hasPrior reports whether r carries ServeFast's engine answer.
func hasPrior(r *http.Request) bool {
	_, ok := r.Context().Value(priorKey{}).(*prior)
	return ok
}
