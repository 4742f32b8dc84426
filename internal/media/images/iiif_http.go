package images

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

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

// iiifInfo serves info.json: the original's size and the stored sizes.
func (h *Handler) iiifInfo(w http.ResponseWriter, r *http.Request) {
	m, err := h.st.Meta(r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", `application/ld+json;profile="http://iiif.io/api/image/3/context.json"`)
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Cache-Control", h.cacheControl())
	base, vary := h.baseURL(r)
	if vary != "" {
		hd.Add("Vary", vary)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(newInfo(base+"/iiif/3/"+m.ID, &m))
}

// iiifImage serves /iiif/3/{id}/full/{size}/0/default.jpg with the
// nearest stored variant at or above the size (see the IIIF comment).
func (h *Handler) iiifImage(w http.ResponseWriter, r *http.Request) {
	size, err := parseIIIFPath(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Link", `<http://iiif.io/api/image/3/level0.json>;rel="profile"`)
	h.serveVariant(w, r, r.PathValue("id"), func(m *Meta) (Variant, error) {
		want, err := size.Resolve(m.Width, m.Height)
		if err != nil {
			return Variant{}, err
		}
		v, ok := SelectVariant(iiifCandidates(m), want)
		if !ok {
			return Variant{}, fmt.Errorf("%w: %s has no JPEG variant", ErrNotFound, m.ID)
		}
		return v, nil
	})
}

// parseIIIFPath checks the parameters this level-0 server supports.
func parseIIIFPath(r *http.Request) (Size, error) {
	if reg := r.PathValue("region"); reg != "full" {
		return Size{}, fmt.Errorf("%w: region %q: only full is supported", ErrBadIIIF, httpapi.ClipID(reg))
	}
	if rot := r.PathValue("rotation"); rot != "0" {
		return Size{}, fmt.Errorf("%w: rotation %q: only 0 is supported", ErrBadIIIF, httpapi.ClipID(rot))
	}
	if f := r.PathValue("file"); f != "default.jpg" {
		return Size{}, fmt.Errorf("%w: %q: only default.jpg is supported", ErrBadIIIF, httpapi.ClipID(f))
	}
	return ParseSize(r.PathValue("size"))
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
