package images

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/storage/space"
)

// A Cache keeps hot variants in the tier engine's RAM and flash tiers
// (MRIS future work: placement by hotness, not size alone). The node's
// *engine.Engine implements it; the interface keeps the image store free
// of the live node, so the MRIS simulator can use the store alone.
type Cache interface {
	// Cached returns key's bytes from RAM or flash, or calls load (once
	// for all concurrent callers) and keeps its result, and says which
	// tier served them (tier.Miss: load did).
	Cached(ctx context.Context, key string, load func(context.Context) ([]byte, error)) ([]byte, tier.Tier, error)
	// Invalidate drops every cached object whose key starts with prefix.
	Invalidate(prefix string) error
}

// HandlerOptions configure the HTTP handler.
type HandlerOptions struct {
	// MaxAge is the Cache-Control max-age of variants and info.json.
	// Default 1 h: an id can be re-uploaded, and clients revalidate with
	// the ETag.
	MaxAge time.Duration
	// BaseURL is the public URL prefix of IIIF ids ("https://img.example").
	// Empty: the connection's scheme and the request's Host, with Vary:
	// Host.
	BaseURL string
	// TrustForwarded takes the scheme and host of IIIF ids from
	// X-Forwarded-Proto and X-Forwarded-Host when BaseURL is empty: set
	// it only behind a proxy that sets (or strips) them, or any client
	// names the ids a shared cache serves to every other.
	TrustForwarded bool
	// FreeSpace says how much an upload may still write in the store's
	// directories: an upload whose declared length, twice over (the
	// original and its variants), is above it is refused with 507
	// before its body is read. Nil: space.Free.
	FreeSpace space.FreeFunc
	// IIIF bounds the work of IIIF image requests (iiif_plan.go).
	IIIF IIIFOptions
	// Logger receives request errors. Nil: the store's logger.
	Logger *slog.Logger
}

// Handler serves the image store over HTTP.
type Handler struct {
	st      *Store
	cache   Cache // nil: every variant straight from the store
	opts    HandlerOptions
	log     *slog.Logger
	uploads chan struct{} // semaphore: Options.MaxConcurrent, taken before a body is read
	renders chan struct{} // semaphore: IIIFOptions.MaxConcurrent derivations

	counters handlerCounters
}

// NewHandler returns the HTTP handler of st. Variants of SizeThreshold
// bytes and more pass through cache when it is not nil.
func NewHandler(st *Store, cache Cache, opts HandlerOptions) *Handler {
	if opts.MaxAge == 0 {
		opts.MaxAge = DefaultMaxAge
	}
	if opts.Logger == nil {
		opts.Logger = st.log
	}
	opts.IIIF.EnsureDefaults()
	return &Handler{st: st, cache: cache, opts: opts, log: opts.Logger,
		uploads: make(chan struct{}, st.opts.MaxConcurrent), renders: make(chan struct{}, opts.IIIF.MaxConcurrent)}
}

// Mount registers the image routes, the write routes behind the admin
// token:
//
//	PUT    /images/{id}                       upload (admin)
//	DELETE /images/{id}                       delete (admin)
//	GET    /images/{id}                       metadata (JSON)
//	GET    /images/{id}/{variant}             a variant's bytes
//	GET    /iiif/3/{id}                       redirect to info.json
//	GET    /iiif/3/{id}/info.json             IIIF image information
//	GET    /iiif/3/{id}/{region}/{size}/{rotation}/{quality}.{format}
func (h *Handler) Mount(m *httpapi.Mounter) {
	m.HandleAdmin("PUT /images/{id}", http.HandlerFunc(h.upload))
	m.HandleAdmin("DELETE /images/{id}", http.HandlerFunc(h.delete))
	m.Handle("GET /images/{id}", http.HandlerFunc(h.meta))
	m.Handle("GET /images/{id}/{variant}", http.HandlerFunc(h.variant))
	m.Handle("GET /iiif/3/{id}", http.HandlerFunc(h.iiifBase))
	m.Handle("GET /iiif/3/{id}/info.json", http.HandlerFunc(h.iiifInfo))
	m.Handle("GET /iiif/3/{id}/{region}/{size}/{rotation}/{file}", http.HandlerFunc(h.iiifImage))
	m.Stats("images", func() any { return h.Stats() })
	m.Metrics(handlerMetrics{h})
}

// upload stores the body as image {id}: 201 for a new id, 200 for a
// replacement, 4xx for a body too large, of the wrong type, with too many
// pixels or corrupt; nothing is stored unless every variant was made.
// At most MaxConcurrent uploads run at once, from the reading of their
// bodies on: the others wait with their bodies unread, so RAM holds at
// most MaxConcurrent x (MaxUploadBytes + MaxDecodeBytes) for uploads.
func (h *Handler) upload(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := validID(id); err != nil {
		h.fail(w, r, err)
		return
	}
	if !httpapi.CheckLength(w, r, h.st.opts.MaxUploadBytes) || !h.haveRoom(w, r) {
		return
	}
	select {
	case h.uploads <- struct{}{}:
	case <-r.Context().Done():
		h.fail(w, r, fmt.Errorf("images: waiting for an upload slot: %w", r.Context().Err()))
		return
	}
	m, replaced, n, err := h.ingest(w, r, id)
	<-h.uploads
	if err != nil {
		h.counters.refused.Add(1)
		h.fail(w, r, err)
		return
	}
	h.counters.uploads.Add(1)
	if replaced {
		h.invalidate(id)
	}
	h.log.Info("image stored", "id", id, "generation", m.Generation, "bytes", n, "replaced", replaced)
	code := http.StatusCreated
	if replaced {
		code = http.StatusOK
	}
	writeJSON(w, code, "no-store", m)
}

// haveRoom answers 507 and returns false when the LSM's or the value
// log's file system has no room for twice the declared length.
func (h *Handler) haveRoom(w http.ResponseWriter, r *http.Request) bool {
	if r.ContentLength <= 0 {
		return true
	}
	for _, dir := range []string{h.st.opts.FlashDir, h.st.opts.CapacityDir} {
		if err := space.Check(h.opts.FreeSpace, dir, 2*r.ContentLength); err != nil {
			httpapi.CloseAfter(w)
			httpapi.Error(w, http.StatusInsufficientStorage, fmt.Sprintf("no room for an image of %d bytes and its variants", r.ContentLength))
			return false
		}
	}
	return true
}

// ingest reads, prepares and stores an upload; the caller holds one of
// the MaxConcurrent slots.
func (h *Handler) ingest(w http.ResponseWriter, r *http.Request, id string) (Meta, bool, int, error) {
	body, err := readBody(w, r, h.st.opts.MaxUploadBytes)
	if err != nil {
		return Meta{}, false, 0, err
	}
	m, replaced, err := h.st.Ingest(id, body)
	return m, replaced, len(body), err
}

// readBody reads at most limit bytes of the request body.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(httpapi.Body(w, r, limit))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("images: reading the upload: %w", err)
	}
	return body, nil
}

// invalidate frees the tier engine's copies of id's older generations.
// They are unreachable anyway (TierKey has the generation), so a failure
// only costs space.
func (h *Handler) invalidate(id string) {
	if h.cache == nil {
		return
	}
	if err := h.cache.Invalidate(TierPrefix(id)); err != nil {
		h.log.Warn("images: invalidating cached variants", "id", id, "err", err)
	}
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ok, err := h.st.Delete(id)
	if err == nil && !ok {
		err = fmt.Errorf("%w: image %q", ErrNotFound, httpapi.ClipID(id))
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.invalidate(id)
	writeJSON(w, http.StatusOK, "no-store", map[string]string{"deleted": id})
}

func (h *Handler) meta(w http.ResponseWriter, r *http.Request) {
	m, err := h.st.Meta(r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, "no-cache", m)
}

func (h *Handler) variant(w http.ResponseWriter, r *http.Request) {
	h.serveVariant(w, r, r.PathValue("id"), func(m *Meta) (Variant, error) {
		name := r.PathValue("variant")
		if v, ok := m.Variant(name); ok {
			return v, nil
		}
		return Variant{}, fmt.Errorf("%w: %s has no variant %q", ErrNotFound, m.ID, httpapi.ClipID(name))
	})
}

// maxReadTries bounds the retries of a read that raced a re-upload.
const maxReadTries = 3

// serveVariant serves the variant pick chooses from id's metadata.
func (h *Handler) serveVariant(w http.ResponseWriter, r *http.Request, id string, pick func(*Meta) (Variant, error)) {
	for try := 1; ; try++ {
		err := h.tryServe(w, r, id, pick)
		if errors.Is(err, ErrChanged) && try < maxReadTries {
			continue
		}
		if err != nil {
			h.fail(w, r, err)
		}
		return
	}
}

// tryServe serves one variant; it writes nothing when it returns an error.
func (h *Handler) tryServe(w http.ResponseWriter, r *http.Request, id string, pick func(*Meta) (Variant, error)) error {
	m, err := h.st.Meta(id)
	if err != nil {
		return err
	}
	v, err := pick(&m)
	if err != nil {
		return err
	}
	if r.Header.Get("If-None-Match") == v.ETag { // before reading the bytes
		h.variantHeaders(w, v)
		h.counters.notModified.Add(1)
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	data, from, err := h.bytes(r.Context(), &m, v)
	if err != nil {
		return err
	}
	h.counters.servedFrom(from, len(data))
	h.variantHeaders(w, v)
	w.Header().Set("Content-Type", v.ContentType)
	w.Header().Set("X-Strata-Tier", from)
	if !httpapi.CheckRange(w, r, int64(len(data))) {
		return nil
	}
	http.ServeContent(w, r, "", m.Uploaded, bytes.NewReader(data))
	return nil
}

// variantHeaders sets the validator and caching headers of v.
func (h *Handler) variantHeaders(w http.ResponseWriter, v Variant) {
	hd := w.Header()
	hd.Set("ETag", v.ETag)
	hd.Set("Cache-Control", h.cacheControl())
	hd.Set("X-Strata-Variant", v.Name)
}

// bytes reads a variant: a small one straight from the LSM tree, a large
// one (in the value log) through the tier engine, whose RAM and flash
// tiers keep the hot ones. It returns where the bytes came from.
func (h *Handler) bytes(ctx context.Context, m *Meta, v Variant) ([]byte, string, error) {
	if h.cache == nil || v.Bytes < h.st.opts.SizeThreshold {
		data, err := h.st.Blob(m.ID, m.Generation, v.BlobName())
		return data, "lsm", err
	}
	key := TierKey(m.ID, m.Generation, v.BlobName())
	data, t, err := h.cache.Cached(ctx, key, func(context.Context) ([]byte, error) {
		return h.st.Blob(m.ID, m.Generation, v.BlobName())
	})
	if err != nil {
		return nil, "", err
	}
	return data, h.tierName(t), nil
}

// tierName is the X-Strata-Tier of a variant served through the engine:
// ram, ssd, or vlog (bucket, with one) when the store was read.
func (h *Handler) tierName(t tier.Tier) string {
	switch {
	case t != tier.Miss:
		return t.String()
	case h.st.opts.Bucket != nil:
		return "bucket"
	}
	return "vlog"
}

func (h *Handler) cacheControl() string {
	return "public, max-age=" + strconv.Itoa(int(h.opts.MaxAge.Seconds()))
}

// fail writes err as a problem with the status statusOf gives it. The
// detail of a 5xx names the failure only by its sentinel (the store's
// errors can carry paths); the log has the rest. When the client has
// gone, it aborts the answer instead (never net/http's implicit 200).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	httpapi.AbortIfGone(r)
	code := statusOf(err)
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		h.counters.errors.Add(1)
	}
	detail := err.Error()
	if code >= 500 {
		h.log.Warn("images: request failed", "method", r.Method, "path", httpapi.Clip(r.URL.Path, 2*httpapi.MaxID), "err", err)
		detail = publicDetail(err)
	}
	httpapi.Error(w, code, detail)
}

// writeJSON writes v as indented JSON, like the server's own endpoints.
func writeJSON(w http.ResponseWriter, code int, cacheControl string, v any) {
	httpapi.Write(w, code, cacheControl, v) //nolint:errcheck // the status is sent
}
