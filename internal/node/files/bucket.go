package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/strata-media/strata/internal/storage/origin"
)

// bucketDir is the folder of the whole files under the bucket's prefix:
// object ".files/<id>" is file id, ".files/<id>.json" its sidecar. The
// leading '.' keeps it out of the titles' catalog, as in a directory.
const bucketDir = ".files/"

// bucketCapacity keeps the files in a bucket. A file is one object,
// written by one PUT or a multipart upload completed last (a refused or
// interrupted upload leaves nothing); its sidecar is written after it and
// names the object's ETag, so a sidecar of another version is never
// believed. Every read of a version carries its ETag (If-Match): a
// replacement never mixes its bytes with a stream's.
type bucketCapacity struct {
	b *origin.Bucket
	// ttl is how long a stat is trusted: within it a request makes no
	// request to the bucket when its bytes are in RAM or on flash.
	ttl    time.Duration
	counts *counters

	mu        sync.Mutex // protects statCache
	statCache map[string]statEntry
}

// statEntry is a remembered stat.
type statEntry struct {
	v  version
	at time.Time
}

func (c *bucketCapacity) remote() bool { return true }

func fileKey(id string) string    { return bucketDir + id }
func sidecarKey(id string) string { return bucketDir + id + ".json" }

// stat returns the current version of id, remembered for ttl.
func (c *bucketCapacity) stat(ctx context.Context, id string) (version, error) {
	now := time.Now()
	c.mu.Lock()
	e, ok := c.statCache[id]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.ttl {
		return e.v, nil
	}
	info, err := c.b.Stat(ctx, fileKey(id))
	if errors.Is(err, origin.ErrNotFound) {
		c.forget(id)
		return version{}, fmt.Errorf("%w: file %s", ErrNotFound, id)
	}
	if err != nil {
		return version{}, err
	}
	v := version{size: info.Size, mod: info.Modified, tag: info.ETag}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.statCache) >= maxProbes {
		clear(c.statCache)
	}
	c.statCache[id] = statEntry{v: v, at: now}
	return v, nil
}

// forget drops the remembered stat of id: it was written or removed.
func (c *bucketCapacity) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.statCache, id)
}

func (c *bucketCapacity) open(ctx context.Context, id string) (handle, error) {
	v, err := c.stat(ctx, id)
	if err != nil {
		return nil, err
	}
	return &objectHandle{ctx: ctx, b: c.b, key: fileKey(id), v: v, counts: c.counts,
		changed: func() { c.forget(id) }}, nil
}

func (c *bucketCapacity) sidecar(ctx context.Context, id string) ([]byte, error) {
	b, _, err := c.b.ReadAll(ctx, sidecarKey(id), maxSidecar)
	return b, err
}

func (c *bucketCapacity) writeSidecar(ctx context.Context, id string, b []byte) error {
	_, err := c.b.PutBytes(ctx, sidecarKey(id), b)
	return err
}

// put uploads r as the object of id. The old sidecar stays until the new
// one is written over it: it names the old object's ETag, so it is never
// taken for the new version's.
func (c *bucketCapacity) put(ctx context.Context, id string, r io.Reader) error {
	_, err := c.b.Put(ctx, fileKey(id), r)
	c.forget(id)
	if errors.Is(err, origin.ErrEmpty) {
		return errEmpty
	}
	return err
}

// objectHandle reads one version of an object with ranged GETs that
// carry its ETag: a replaced object fails with origin.ErrChanged.
type objectHandle struct {
	ctx    context.Context
	b      *origin.Bucket
	key    string
	v      version
	counts *counters
	// changed is called when the object turns out replaced (by another
	// node): the next open asks the bucket again.
	changed func()
}

func (h *objectHandle) version() version { return h.v }
func (h *objectHandle) Close() error     { return nil }

// ReadAt reads len(p) bytes at off with one ranged GET, fewer (and
// io.EOF) only at the end of the object.
func (h *objectHandle) ReadAt(p []byte, off int64) (int, error) {
	if off >= h.v.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), h.v.size-off)
	// Not cancelled with the request: the read may be a piece other
	// streams wait for (ramPieces); one GET is bounded by the bucket's
	// timeouts.
	data, _, err := h.b.ReadRange(context.WithoutCancel(h.ctx), h.key, h.v.tag, off, n)
	if h.counts != nil {
		h.counts.bucketReads.Add(1)
	}
	if errors.Is(err, origin.ErrChanged) && h.changed != nil {
		h.changed()
	}
	if err != nil {
		return 0, err
	}
	k := copy(p, data)
	if k < len(p) {
		return k, io.EOF
	}
	return k, nil
}

// windowReader reads through a window of window bytes, read whole: a
// probe's small reads of box headers cost one request a window, not one
// each.
type windowReader struct {
	r      io.ReaderAt
	size   int64
	window int64
	off    int64
	buf    []byte
}

// probeWindow is the window of a probe of a file in a bucket.
const probeWindow = 64 << 10

func (w *windowReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= w.size {
		return 0, io.EOF
	}
	if int64(len(p)) > w.window {
		return w.r.ReadAt(p, off)
	}
	if w.buf == nil || off < w.off || off+int64(len(p)) > w.off+int64(len(w.buf)) {
		n := min(w.window, w.size-off)
		buf := make([]byte, n)
		if k, err := w.r.ReadAt(buf, off); k < int(n) {
			return 0, err
		}
		w.off, w.buf = off, buf
	}
	n := copy(p, w.buf[off-w.off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
