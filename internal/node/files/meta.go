package files

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"mime"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/media/source"
)

// Meta describes a stored file: what admission control reserves for its
// streams. It is kept beside the file as <id>.json (its sidecar).
type Meta struct {
	Size int64 `json:"size"`
	// ByteRate is the play-out rate in bytes per second: the bandwidth a
	// stream of the file reserves (VoD paper Algorithm 2).
	ByteRate int64 `json:"byte_rate"`
	// Bitrate is the same rate in bits per second, as media bitrates are
	// given (8 x ByteRate); what the file's readers see, never read back.
	// Sidecars written before ByteRate held bytes per second here: they
	// have no byte_rate and are probed again (readSidecar).
	Bitrate int64 `json:"bitrate_bps"`
	// Duration is the play-out time, 0 if unknown.
	Duration    float64   `json:"duration_s"`
	ContentType string    `json:"content_type"`
	Modified    time.Time `json:"modified"`
	// Tag is the ETag of the object a sidecar in a bucket describes; a
	// sidecar whose Tag is not the object's is of another version.
	Tag string `json:"tag,omitempty"`
}

// maxStamp is the longest stamp: a 64-bit number in base 36 and a sign.
const maxStamp = 14

// stamp names the version m describes in keys and ETags: the object's
// ETag hashed, else the modification time in nanoseconds.
func (m Meta) stamp() string {
	if m.Tag == "" {
		return strconv.FormatInt(m.Modified.UnixNano(), 36)
	}
	h := fnv.New64a()
	h.Write([]byte(m.Tag))
	return strconv.FormatUint(h.Sum64(), 36)
}

// etag is the HTTP ETag of the version m describes.
func (m Meta) etag() string {
	if m.Tag == "" {
		return fmt.Sprintf(`"%x-%x"`, m.Size, m.Modified.UnixNano())
	}
	return fmt.Sprintf(`"%x-%s"`, m.Size, m.stamp())
}

// sameVersion reports whether a and b describe the same version.
func sameVersion(a, b Meta) bool {
	return a.Size == b.Size && a.Modified.Equal(b.Modified) && a.Tag == b.Tag
}

// readMeta returns file id's metadata, computing it (and the default
// bitrate) when the sidecar is missing: files copied in by hand work too.
func (t *Tier) readMeta(id string) (Meta, error) {
	h, err := t.cap.open(context.Background(), id)
	if err != nil {
		return Meta{}, err
	}
	defer h.Close()
	return t.metaOf(context.Background(), id, h), nil
}

// maxSidecar bounds the sidecar read: one is a few hundred bytes, and a
// larger file under its name is not one.
const maxSidecar = 64 << 10

// metaOf describes the version of file id that h reads: its sidecar,
// else what a probe found (a file copied in by hand), read or probed once
// per version and remembered, so that requests never probe.
func (t *Tier) metaOf(ctx context.Context, id string, h handle) Meta {
	v := h.version()
	k := probeKey{id: id, size: v.size, mod: v.mod.UnixNano(), tag: v.tag}
	if m, ok := t.probes.get(k); ok {
		return m
	}
	m, ok := t.readSidecar(ctx, id, v)
	if !ok {
		m = t.probeMeta(id, h)
	}
	t.probes.put(k, m)
	return m
}

// readSidecar reads the sidecar of id if it describes version v.
func (t *Tier) readSidecar(ctx context.Context, id string, v version) (Meta, bool) {
	var m Meta
	b, err := t.cap.sidecar(ctx, id)
	if err != nil || json.Unmarshal(b, &m) != nil || m.Size != v.size || m.Tag != v.tag || m.ByteRate <= 0 {
		return Meta{}, false
	}
	m.Modified = v.mod
	m.Bitrate = 8 * m.ByteRate
	return m, true
}

// probeMeta derives a file's metadata: the play-out time of an MP4 from
// its movie header, else the configured default rate; the content type
// from the id's extension.
func (t *Tier) probeMeta(id string, h handle) Meta {
	t.stats.probes.Add(1)
	v := h.version()
	m := Meta{Size: v.size, Modified: v.mod, Tag: v.tag, ByteRate: t.opts.DefaultBitrate, ContentType: httpapi.ContentType(id)}
	var r io.ReaderAt = h
	if t.cap.remote() {
		r = &windowReader{r: h, size: v.size, window: probeWindow}
	}
	if d := mp4Duration(r, v.size); d > 0 {
		m.Duration = d.Seconds()
		m.ByteRate = max(int64(float64(v.size)/d.Seconds()), 1)
	}
	m.Bitrate = 8 * m.ByteRate
	return m
}

// maxContentType bounds a stored content type, bytes.
const maxContentType = 256

// uploadType is the content type to store for an upload declared as ct
// (its Content-Type field): ct, in its canonical form, unless it says
// nothing of the file's kind (none, application/octet-stream, or curl's
// default for a body, application/x-www-form-urlencoded), when the id's
// extension decides as for a file copied in by hand (""). A type that is
// not a media type, or longer than maxContentType, is an error.
func uploadType(ct string) (string, error) {
	if ct == "" {
		return "", nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || len(ct) > maxContentType {
		return "", fmt.Errorf("%w: Content-Type %q is not a media type", ident.ErrInvalid, httpapi.ClipID(ct))
	}
	switch mt {
	case "application/octet-stream", "application/x-www-form-urlencoded":
		return "", nil
	}
	return mime.FormatMediaType(mt, params), nil
}

// mp4Duration reads an MP4's duration from its movie header, reading box
// headers only (source.Duration: a few KB whatever the file holds); 0 if
// the file is not an MP4 (a WebM, an MP3: told by their magic) or has no
// usable movie header.
func mp4Duration(r io.ReaderAt, size int64) time.Duration {
	d, err := source.Duration(r, size)
	if err != nil {
		return 0
	}
	return d
}

// maxProbes bounds the remembered probes.
const maxProbes = 4096

// probeKey names one version of a file.
type probeKey struct {
	id        string
	size, mod int64
	tag       string
}

// probeCache remembers the metadata read or probed for file versions, at
// most maxProbes of them (an arbitrary one is forgotten to make room).
type probeCache struct {
	mu sync.Mutex // protects m
	m  map[probeKey]Meta
}

func (c *probeCache) get(k probeKey) (Meta, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.m[k]
	return m, ok
}

func (c *probeCache) put(k probeKey, m Meta) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[probeKey]Meta)
	}
	if len(c.m) >= maxProbes {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	c.m[k] = m
}

// writeFileAtomic writes b to path atomically: a temporary file in dir,
// synced, renamed over it.
func writeFileAtomic(dir, path string, b []byte) error {
	tmp, err := os.CreateTemp(dir, ".upload-meta-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
