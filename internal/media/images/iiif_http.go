package images

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
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
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(newInfo(h.baseURL(r)+"/iiif/3/"+m.ID, &m))
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
		return Size{}, fmt.Errorf("%w: region %q: only full is supported", ErrBadIIIF, reg)
	}
	if rot := r.PathValue("rotation"); rot != "0" {
		return Size{}, fmt.Errorf("%w: rotation %q: only 0 is supported", ErrBadIIIF, rot)
	}
	if f := r.PathValue("file"); f != "default.jpg" {
		return Size{}, fmt.Errorf("%w: %q: only default.jpg is supported", ErrBadIIIF, f)
	}
	return ParseSize(r.PathValue("size"))
}

// baseURL is the scheme and host IIIF ids start with.
func (h *Handler) baseURL(r *http.Request) string {
	if h.opts.BaseURL != "" {
		return strings.TrimSuffix(h.opts.BaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	return scheme + "://" + r.Host
}
