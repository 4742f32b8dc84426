package images

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
)

// iiifBase redirects an image's base URI to its info.json (IIIF 3.0 §2.2).
func (h *Handler) iiifBase(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := validID(id); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/iiif/3/"+id+"/info.json", http.StatusSeeOther)
}

// iiifInfo serves info.json: level 2, the original's size, the stored
// sizes, tiles, and the limits of a response.
func (h *Handler) iiifInfo(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if validID(id) != nil {
		h.fail(w, r, fmt.Errorf("%w: image %q", ErrNotFound, httpapi.ClipID(id)))
		return
	}
	m, err := h.st.Meta(id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", `application/ld+json;profile="http://iiif.io/api/image/3/context.json"`)
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Cache-Control", h.cacheControl())
	hd.Set("Link", `<`+iiifProfile+`>;rel="profile"`)
	base, vary := h.baseURL(r)
	if vary != "" {
		hd.Add("Vary", vary)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(newInfo(base+"/iiif/3/"+m.ID, &m, &h.opts.IIIF))
}

// iiifProfile is the compliance level this server declares.
const iiifProfile = "http://iiif.io/api/image/3/level2.json"

// iiifImage serves /iiif/3/{id}/{region}/{size}/{rotation}/{quality}.{format}:
// derived from the smallest stored variant that has the pixels the
// request asks for (PlanIIIF), through the tier engine's RAM and flash
// under the request's canonical form. An id that cannot exist is 404
// (the validator asks so of an escaped slash), a request that does not
// parse or exceeds the output limits 400, one that would decode more
// than MaxDecodePixels 413.
func (h *Handler) iiifImage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if validID(id) != nil {
		h.fail(w, r, fmt.Errorf("%w: image %q", ErrNotFound, httpapi.ClipID(id)))
		return
	}
	q, err := ParseIIIF(r.PathValue("region"), r.PathValue("size"), r.PathValue("rotation"), r.PathValue("file"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	for try := 1; ; try++ {
		err := h.tryIIIF(w, r, id, q)
		if errors.Is(err, ErrChanged) && try < maxReadTries {
			continue
		}
		if err != nil {
			h.fail(w, r, err)
		}
		return
	}
}

// tryIIIF serves one IIIF image request; it writes nothing when it
// returns an error.
func (h *Handler) tryIIIF(w http.ResponseWriter, r *http.Request, id string, q IIIFRequest) error {
	m, err := h.st.Meta(id)
	if err != nil {
		return err
	}
	p, err := PlanIIIF(&m, q, &h.opts.IIIF)
	if err != nil {
		return err
	}
	etag := etagOf([]byte(p.Variant.ETag + " " + p.Canonical))
	if r.Header.Get("If-None-Match") == etag { // before deriving
		h.iiifHeaders(w, r, &m, p, etag)
		h.counters.notModified.Add(1)
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	data, from, err := h.derived(r.Context(), &m, p)
	if err != nil {
		return err
	}
	h.counters.servedFrom(from, len(data))
	h.iiifHeaders(w, r, &m, p, etag)
	w.Header().Set("Content-Type", iiifFormats[q.Format])
	w.Header().Set("X-Strata-Tier", from)
	if !httpapi.CheckRange(w, r, int64(len(data))) {
		return nil
	}
	http.ServeContent(w, r, "", m.Uploaded, bytes.NewReader(data))
	return nil
}

// iiifHeaders sets the headers of an IIIF image response: validator,
// caching, CORS, the profile and canonical links, and the stored variant
// it was derived from (X-Strata-Variant).
func (h *Handler) iiifHeaders(w http.ResponseWriter, r *http.Request, m *Meta, p IIIFPlan, etag string) {
	hd := w.Header()
	hd.Set("ETag", etag)
	hd.Set("Cache-Control", h.cacheControl())
	hd.Set("X-Strata-Variant", p.Variant.Name)
	hd.Set("Access-Control-Allow-Origin", "*")
	base, vary := h.baseURL(r)
	if vary != "" {
		hd.Add("Vary", vary)
	}
	hd.Set("Link", `<`+iiifProfile+`>;rel="profile", <`+base+"/iiif/3/"+m.ID+"/"+p.Canonical+`>;rel="canonical"`)
}

// derived returns p's response bytes and where they came from: the tier
// engine's RAM or flash (ram, ssd) under the canonical request's key, or
// a derivation (render), at most IIIFOptions.MaxConcurrent at once.
func (h *Handler) derived(ctx context.Context, m *Meta, p IIIFPlan) ([]byte, string, error) {
	load := func(ctx context.Context) ([]byte, error) {
		select {
		case h.renders <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		defer func() { <-h.renders }()
		body, err := h.st.Blob(m.ID, m.Generation, p.Variant.BlobName())
		if err != nil {
			return nil, err
		}
		start := time.Now()
		defer func() { h.counters.rendered(time.Since(start)) }()
		return deriveIIIF(body, p, h.opts.IIIF.Quality)
	}
	if h.cache == nil {
		data, err := load(ctx)
		return data, "render", err
	}
	data, t, err := h.cache.Cached(ctx, IIIFKey(m.ID, m.Generation, p.Canonical), load)
	if err != nil {
		return nil, "", err
	}
	if t == tier.Miss {
		return data, "render", nil
	}
	return data, t.String(), nil
}

// IIIFKey is the tier engine's key of a derived IIIF response: under the
// image's TierPrefix, so a re-upload or a delete invalidates it with the
// variants.
func IIIFKey(id string, generation uint64, canonical string) string {
	return TierKey(id, generation, "iiif/"+canonical)
}

// baseURL is the scheme and host IIIF ids start with, and the request
// headers it was taken from, for Vary: the configured BaseURL (none);
// else the connection's scheme and the Host header (a cache in front keys
// on Host; Vary says so to one that does not), a Host that is not a plain
// host[:port] replaced by "localhost"; X-Forwarded-Proto and -Host only
// when TrustForwarded says a proxy sets them. An untrusted
// X-Forwarded-Proto in the id let one client poison a shared cache's
// info.json for every other.
func (h *Handler) baseURL(r *http.Request) (base, vary string) {
	if h.opts.BaseURL != "" {
		return strings.TrimSuffix(h.opts.BaseURL, "/"), ""
	}
	scheme, host, vary := "http", r.Host, "Host"
	if r.TLS != nil {
		scheme = "https"
	}
	if h.opts.TrustForwarded {
		vary = "Host, X-Forwarded-Proto, X-Forwarded-Host"
		if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
			scheme = p
		}
		if fh := r.Header.Get("X-Forwarded-Host"); fh != "" {
			host = fh
		}
	}
	if !plainHost(host) {
		host = "localhost"
	}
	return scheme + "://" + host, vary
}

// plainHost reports whether s is a host[:port] of letters, digits, '-',
// '.', ':' and brackets (IPv6), at most 255 bytes: nothing that could
// change the shape of a URL.
func plainHost(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-.:[]", c) >= 0) {
			return false
		}
	}
	return true
}
