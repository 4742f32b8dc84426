package origin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

// ErrChanged reports an object replaced since the version a read asked
// for (its ETag no longer matches): the reader must start again rather
// than mix the bytes of two versions.
var ErrChanged = errors.New("origin: object changed")

// ErrEmpty reports an upload of no bytes, refused before anything is
// stored.
var ErrEmpty = errors.New("origin: empty object")

// Bucket reads and writes objects by key under the prefix of an S3
// origin's options: what the whole-file tier and the image store keep in
// the bucket beside the titles. Reads are single requests retried as an
// S3's are (RequestTimeout, Retries); writes are minio-go's, retried by
// it. An object is never visible half-written: a single PUT or a
// multipart upload completed last, aborted on any failure. A Bucket is
// safe for concurrent use.
type Bucket struct {
	r     *S3
	w     *S3Writer
	wsent countingTransport // the writer's requests; the reader counts its own
}

// ObjectInfo describes one object of a Bucket. Put leaves Modified zero
// after a multipart upload (Stat tells it).
type ObjectInfo struct {
	// Key is the object's key relative to the prefix.
	Key  string
	Size int64
	// Modified is the store's last-modified time (often to the second).
	Modified time.Time
	// ETag names the object's version: it changes whenever the object
	// is written again, even within the same second.
	ETag string
}

// NewBucket returns a Bucket over the bucket and prefix of opts. It
// sends no request (call Check).
func NewBucket(opts S3Options) (*Bucket, error) {
	r, err := NewS3(opts)
	if err != nil {
		return nil, err
	}
	b := &Bucket{r: r}
	opts.EnsureDefaults()
	client, err := newMinio(&opts, max(opts.Retries, 0)+1, &b.wsent)
	if err != nil {
		return nil, err
	}
	b.w = &S3Writer{opts: opts, log: opts.Logger, client: client}
	return b, nil
}

// Requests counts the requests the Bucket sent, reads and writes.
func (b *Bucket) Requests() S3Requests {
	r, w := b.r.Requests(), b.wsent.load()
	return S3Requests{Get: r.Get + w.Get, Head: r.Head + w.Head, List: r.List + w.List,
		Other: r.Other + w.Other, Failed: r.Failed + w.Failed}
}

// String describes the bucket without its credentials.
func (b *Bucket) String() string { return b.r.String() }

// Check asks the store whether the bucket exists.
func (b *Bucket) Check(ctx context.Context) error { return b.r.Check(ctx) }

// Close releases idle connections; the Bucket stays usable.
func (b *Bucket) Close() error { return b.r.Close() }

// Stat describes the object at key; ErrNotFound if there is none.
func (b *Bucket) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	var oi ObjectInfo
	err := b.r.retry.do(ctx, "stat "+key, func(ctx context.Context) error {
		info, err := b.r.client.StatObject(ctx, b.r.opts.Bucket, b.r.key(key), minio.StatObjectOptions{})
		if err != nil {
			return err
		}
		oi = objectInfo(key, info)
		return nil
	})
	return oi, err
}

func objectInfo(key string, info minio.ObjectInfo) ObjectInfo {
	return ObjectInfo{Key: key, Size: info.Size, Modified: info.LastModified.UTC(), ETag: info.ETag}
}

// ReadRange reads up to n bytes of the object at key from off with one
// ranged GET (retried), fewer only at the object's end. With etag set,
// the read is of that version only: ErrChanged if the object was
// replaced. off at or past the end is ErrInvalidRange.
func (b *Bucket) ReadRange(ctx context.Context, key, etag string, off, n int64) ([]byte, ObjectInfo, error) {
	if off < 0 || n <= 0 {
		return nil, ObjectInfo{}, fmt.Errorf("%w: %d bytes at %d of %s", ErrInvalidRange, n, off, key)
	}
	var (
		data []byte
		oi   ObjectInfo
	)
	err := b.r.retry.do(ctx, "get "+key, func(ctx context.Context) error {
		var err error
		data, oi, err = b.readOnce(ctx, key, etag, off, n)
		return err
	})
	b.r.stats.record(len(data), err)
	return data, oi, err
}

func (b *Bucket) readOnce(ctx context.Context, key, etag string, off, n int64) ([]byte, ObjectInfo, error) {
	var opts minio.GetObjectOptions
	opts.Set("Range", httpRange(off, n))
	if etag != "" {
		opts.SetMatchETag(etag) //nolint:errcheck // never fails on a non-empty tag
	}
	body, info, hdr, err := b.r.core.GetObject(ctx, b.r.opts.Bucket, b.r.key(key), opts)
	if resp := minio.ToErrorResponse(err); resp.StatusCode == http.StatusPreconditionFailed {
		return nil, ObjectInfo{}, fmt.Errorf("%w: %s is no longer version %s", ErrChanged, key, etag)
	}
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	defer body.Close()
	oi := objectInfo(key, info)
	if oi.Size, err = checkContentRange(hdr.Get("Content-Range"), off, info.Size); err != nil {
		return nil, ObjectInfo{}, fmt.Errorf("%w: %s: %v", ErrUpstream, key, err)
	}
	if etag != "" && oi.ETag != etag { // a store that ignores If-Match
		return nil, ObjectInfo{}, fmt.Errorf("%w: %s is no longer version %s", ErrChanged, key, etag)
	}
	data, err := readBody(body, info.Size)
	return data, oi, err
}

// ReadAll reads the whole object at key, of at most limit bytes.
func (b *Bucket) ReadAll(ctx context.Context, key string, limit int64) ([]byte, ObjectInfo, error) {
	var (
		data []byte
		oi   ObjectInfo
	)
	err := b.r.retry.do(ctx, "get "+key, func(ctx context.Context) error {
		d, info, err := b.r.readSmall(ctx, b.r.key(key), limit)
		data, oi = d, objectInfo(key, info)
		return err
	})
	b.r.stats.record(len(data), err)
	return data, oi, err
}

// List describes every object whose key starts with prefix (relative to
// the bucket's prefix), recursively.
func (b *Bucket) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	base := b.r.key("")
	var out []ObjectInfo
	err := b.r.retry.do(ctx, "list "+prefix, func(ctx context.Context) error {
		out = out[:0]
		opts := minio.ListObjectsOptions{Prefix: b.r.key(prefix), Recursive: true}
		for obj := range b.r.client.ListObjects(ctx, b.r.opts.Bucket, opts) {
			if obj.Err != nil {
				return obj.Err
			}
			out = append(out, objectInfo(strings.TrimPrefix(obj.Key, base), obj))
		}
		return nil
	})
	return out, err
}

// PutBytes writes data as the object at key with one PUT.
func (b *Bucket) PutBytes(ctx context.Context, key string, data []byte) (ObjectInfo, error) {
	if err := checkKey(key); err != nil {
		return ObjectInfo{}, err
	}
	info, err := b.w.client.PutObject(ctx, b.w.opts.Bucket, b.r.key(key), bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{DisableMultipart: true})
	if err != nil {
		return ObjectInfo{}, b.w.fail("put", key, err)
	}
	return ObjectInfo{Key: key, Size: info.Size, Modified: info.LastModified.UTC(), ETag: info.ETag}, nil
}

// Put writes what r holds, to its end, as the object at key: one PUT if
// it fits in one part (PartSize bytes), else a multipart upload of parts
// of PartSize bytes, read and sent one at a time (memory: one part),
// completed last. Any failure, of r or of the store, aborts the upload:
// the object keeps its earlier version, or stays absent, and no part is
// left behind. An empty r is ErrEmpty, and nothing is sent.
func (b *Bucket) Put(ctx context.Context, key string, r io.Reader) (ObjectInfo, error) {
	if err := checkKey(key); err != nil {
		return ObjectInfo{}, err
	}
	buf := make([]byte, b.w.opts.PartSize)
	n, end, err := readPart(r, buf)
	switch {
	case err != nil:
		return ObjectInfo{}, fmt.Errorf("origin: upload of %s: %w", key, err)
	case n == 0:
		return ObjectInfo{}, fmt.Errorf("%w: %s", ErrEmpty, key)
	case end:
		return b.PutBytes(ctx, key, buf[:n])
	}
	return b.putParts(ctx, key, r, buf)
}

// readPart fills buf from r, or reads r to its end (io.EOF, and only
// io.EOF: a body cut short says io.ErrUnexpectedEOF, an error here,
// which io.ReadFull would not tell from a short last part).
func readPart(r io.Reader, buf []byte) (n int, end bool, err error) {
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if err == io.EOF {
			return n, true, nil
		}
		if err != nil {
			return n, false, err
		}
	}
	return n, false, nil
}

// putParts sends buf, full, as the first part of a multipart upload of
// key, then the rest of r.
func (b *Bucket) putParts(ctx context.Context, key string, r io.Reader, buf []byte) (ObjectInfo, error) {
	core := minio.Core{Client: b.w.client}
	bucket, obj := b.w.opts.Bucket, b.r.key(key)
	id, err := core.NewMultipartUpload(ctx, bucket, obj, minio.PutObjectOptions{})
	if err != nil {
		return ObjectInfo{}, b.w.fail("start upload", key, err)
	}
	parts, size, err := b.sendParts(ctx, core, key, id, r, buf)
	var info minio.UploadInfo
	if err == nil {
		info, err = core.CompleteMultipartUpload(ctx, bucket, obj, id, parts, minio.PutObjectOptions{})
		err = b.failed("complete upload", key, err)
	}
	if err != nil {
		// Abort even when ctx ended: the parts must not outlive the upload.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.w.opts.RequestTimeout)
		defer cancel()
		if aerr := core.AbortMultipartUpload(actx, bucket, obj, id); aerr != nil {
			b.w.log.Warn("origin: aborting a failed upload", "key", key, "err", aerr)
		}
		return ObjectInfo{}, err
	}
	// The completion's answer has no size nor time: the size is the parts'.
	return ObjectInfo{Key: key, Size: size, ETag: info.ETag}, nil
}

// sendParts sends buf as part 1 and the rest of r in parts of len(buf),
// and returns them and their total size.
func (b *Bucket) sendParts(ctx context.Context, core minio.Core, key, id string, r io.Reader, buf []byte) ([]minio.CompletePart, int64, error) {
	var parts []minio.CompletePart
	var size int64
	n, end := len(buf), false
	for num := 1; n > 0; num++ {
		p, err := core.PutObjectPart(ctx, b.w.opts.Bucket, b.r.key(key), id, num,
			bytes.NewReader(buf[:n]), int64(n), minio.PutObjectPartOptions{})
		if err != nil {
			return nil, 0, b.w.fail(fmt.Sprintf("put part %d of", num), key, err)
		}
		parts = append(parts, minio.CompletePart{PartNumber: num, ETag: p.ETag})
		size += int64(n)
		if end {
			break
		}
		if n, end, err = readPart(r, buf); err != nil {
			return nil, 0, fmt.Errorf("origin: upload of %s: %w", key, err)
		}
	}
	return parts, size, nil
}

// failed classifies a write's error; nil stays nil.
func (b *Bucket) failed(op, key string, err error) error {
	if err == nil {
		return nil
	}
	return b.w.fail(op, key, err)
}

// Remove deletes the object at key; a missing object is not an error.
func (b *Bucket) Remove(ctx context.Context, key string) error {
	err := b.w.client.RemoveObject(ctx, b.w.opts.Bucket, b.r.key(key), minio.RemoveObjectOptions{})
	return b.failed("remove", key, err)
}

// IncompleteUploads counts the multipart uploads under prefix begun and
// neither completed nor aborted: what a failed Put must not leave.
func (b *Bucket) IncompleteUploads(ctx context.Context, prefix string) (int, error) {
	n := 0
	for u := range b.w.client.ListIncompleteUploads(ctx, b.w.opts.Bucket, b.r.key(prefix), true) {
		if u.Err != nil {
			return n, b.failed("list uploads", prefix, u.Err)
		}
		n++
	}
	return n, nil
}
