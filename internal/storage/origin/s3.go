package origin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/minio/minio-go/v7"

	"github.com/strata-media/strata/internal/core/httpcache"
	"github.com/strata-media/strata/internal/ident"
)

// S3 is an Origin over a bucket of an S3-compatible object store (AWS S3,
// MinIO, Ceph RGW, versitygw...): object v/r/n is the key
// "<prefix>/v/r/n", laid out as a Dir's files are (layout.go), so a
// packaged title directory uploaded as-is is served alike. It talks to
// the store with minio-go, a small S3 client with no dependencies on the
// AWS SDK, that signs requests (SigV4), parses S3's errors and reads the
// usual credential sources.
//
// A title is published by its strata.json, which S3Writer writes last:
// a title prefix without one is an upload in progress and is not in the
// catalog (unlike a Dir's, where a title directory appears whole by a
// rename). Reads are single requests, ranged where asked, each bounded by
// RequestTimeout and retried with exponential backoff on server errors,
// timeouts and connection errors only. Failures wrap ErrNotFound,
// ErrUpstream, ErrUnavailable or ErrTimeout; a body shorter than its
// Content-Length is an error, never a short object. An S3 is safe for
// concurrent use.
type S3 struct {
	opts   S3Options
	log    *slog.Logger
	client *minio.Client
	core   minio.Core
	retry  retrier
	stats  counters
	sent   countingTransport // the requests sent to the store
	cat    s3Catalog
}

var (
	_ Origin      = (*S3)(nil)
	_ RangeReader = (*S3)(nil)
)

// NewS3 returns an origin over the bucket and prefix of opts. It sends no
// request: an unreachable store or a missing bucket shows in the first
// read (or call Check).
func NewS3(opts S3Options) (*S3, error) {
	opts.EnsureDefaults()
	s := &S3{}
	client, err := newMinio(&opts, 1, &s.sent) // S3 retries reads itself
	if err != nil {
		return nil, err
	}
	s.opts, s.log, s.client, s.core = opts, opts.Logger, client, minio.Core{Client: client}
	s.retry = retrier{opts: opts, log: opts.Logger}
	s.cat.init(opts.CatalogTTL)
	return s, nil
}

// newMinio returns a minio-go client for opts that makes maxRetries
// attempts of each request, setting opts.Transport if it is nil; if
// count is not nil, the requests go through it (over opts.Transport).
func newMinio(opts *S3Options, maxRetries int, count *countingTransport) (*minio.Client, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	host, secure, _ := opts.endpoint()
	if opts.Transport == nil {
		t, err := minio.DefaultTransport(secure)
		if err != nil {
			return nil, fmt.Errorf("origin: S3 transport: %w", err)
		}
		opts.Transport = t
	}
	lookup := minio.BucketLookupAuto
	if opts.PathStyle {
		lookup = minio.BucketLookupPath
	}
	transport := opts.Transport
	if count != nil {
		count.next, transport = opts.Transport, count
	}
	c, err := minio.New(host, &minio.Options{
		Creds: opts.credentials(), Secure: secure, Region: opts.Region, BucketLookup: lookup,
		Transport: transport, MaxRetries: maxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("origin: S3 client for %s: %v", opts.URL(), err)
	}
	return c, nil
}

// String describes the origin without its credentials.
func (s *S3) String() string { return s.opts.String() }

// LogValue logs the origin as its options, without credentials.
func (s *S3) LogValue() slog.Value { return s.opts.LogValue() }

// Options returns the options in use, defaults filled in.
func (s *S3) Options() S3Options { return s.opts }

// Stats returns the read counters.
func (s *S3) Stats() Stats { return s.stats.load() }

// Requests returns the counts of the HTTP requests sent to the store.
func (s *S3) Requests() S3Requests { return s.sent.load() }

// Close releases idle connections; the S3 stays usable.
func (s *S3) Close() error {
	if t, ok := s.opts.Transport.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
	return nil
}

// Check asks the store whether the bucket exists, to fail early on a bad
// configuration. The error wraps ErrNotFound if it does not; a refusal
// of a request sent without credentials says that none were found and
// where they are looked up.
func (s *S3) Check(ctx context.Context) error {
	return s.opts.explainRefusal(s.retry.do(ctx, "check bucket "+s.opts.Bucket, func(ctx context.Context) error {
		ok, err := s.client.BucketExists(ctx, s.opts.Bucket)
		if err == nil && !ok {
			return notFound("bucket " + s.opts.Bucket)
		}
		return err
	}))
}

// key returns the object key of path, a path under the prefix.
func (s *S3) key(path string) string { return prefixed(s.opts.Prefix, path) }

func prefixed(prefix, path string) string {
	if prefix == "" {
		return path
	}
	return prefix + "/" + path
}

// GetRange reads part of o with a ranged GET (see RangeReader); a
// zero-length read is a HEAD. MaxObjectSize bounds the length read, not
// the object.
func (s *S3) GetRange(ctx context.Context, o ident.Object, off, length int64) (Range, error) {
	var r Range
	err := validObject(o)
	switch {
	case err != nil:
	case off < 0:
		err = fmt.Errorf("%w: offset %d", ErrInvalidRange, off)
	case length == 0:
		r, err = s.emptyRange(ctx, o, off)
	default:
		r, err = s.read(ctx, o, off, length)
	}
	s.stats.record(len(r.Data), err)
	return r, err
}

// emptyRange answers a zero-length read with a HEAD, to report a missing
// object or an offset past the end all the same.
func (s *S3) emptyRange(ctx context.Context, o ident.Object, off int64) (Range, error) {
	var r Range
	err := s.retry.do(ctx, "stat "+o.Path(), func(ctx context.Context) error {
		info, err := s.client.StatObject(ctx, s.opts.Bucket, s.key(o.Path()), minio.StatObjectOptions{})
		if err != nil {
			return err
		}
		if off >= info.Size {
			return fmt.Errorf("%w: offset %d of %s, %d bytes", ErrInvalidRange, off, o, info.Size)
		}
		r = Range{Data: []byte{}, Offset: off, Size: info.Size, Modified: info.LastModified.UTC()}
		return nil
	})
	return r, err
}

// Get reads the whole object o with one GET (retried as RequestTimeout
// and Retries say). An object larger than MaxObjectSize is ErrTooLarge.
func (s *S3) Get(ctx context.Context, o ident.Object) (Object, error) {
	var r Range
	err := validObject(o)
	if err == nil {
		r, err = s.read(ctx, o, 0, -1)
	}
	s.stats.record(len(r.Data), err)
	if err != nil {
		return Object{}, err
	}
	return Object{Data: r.Data, Modified: r.Modified}, nil
}

// read GETs length bytes of o from off; length < 0 with off 0 reads the
// whole object without a Range header.
func (s *S3) read(ctx context.Context, o ident.Object, off, length int64) (Range, error) {
	var r Range
	err := s.retry.do(ctx, "get "+o.Path(), func(ctx context.Context) error {
		var err error
		r, err = s.readOnce(ctx, o, off, length)
		return err
	})
	return r, err
}

// readOnce is one attempt of read.
func (s *S3) readOnce(ctx context.Context, o ident.Object, off, length int64) (Range, error) {
	var opts minio.GetObjectOptions
	ranged := off != 0 || length >= 0
	if ranged {
		opts.Set("Range", httpRange(off, length))
	}
	body, info, hdr, err := s.core.GetObject(ctx, s.opts.Bucket, s.key(o.Path()), opts)
	if err != nil {
		return Range{}, err
	}
	defer body.Close()
	r := Range{Offset: off, Size: info.Size, Modified: info.LastModified.UTC()}
	if ranged {
		if r.Size, err = checkContentRange(hdr.Get("Content-Range"), off, info.Size); err != nil {
			return Range{}, fmt.Errorf("%w: %s: %v", ErrUpstream, o, err)
		}
	}
	if info.Size > s.opts.MaxObjectSize {
		return Range{}, fmt.Errorf("%w: %s: %d bytes, limit %d", ErrTooLarge, o, info.Size, s.opts.MaxObjectSize)
	}
	r.Data, err = readBody(body, info.Size)
	return r, err
}

// httpRange is the Range header of length bytes from off (to the end if
// length < 0).
func httpRange(off, length int64) string {
	if length < 0 {
		return fmt.Sprintf("bytes=%d-", off)
	}
	return fmt.Sprintf("bytes=%d-%d", off, off+length-1)
}

// checkContentRange checks that the answer to a ranged GET from off,
// n bytes long, starts there and says how large the object is, and
// returns that size. A 200 with no Content-Range is the whole object,
// right only when off is 0.
func checkContentRange(cr string, off, n int64) (int64, error) {
	if cr == "" {
		if off != 0 {
			return 0, errors.New("ranged GET answered without Content-Range")
		}
		return n, nil
	}
	c, ok := httpcache.ParseContentRange(cr)
	if !ok || c.Complete < 0 {
		return 0, fmt.Errorf("Content-Range %q: not bytes first-last/size", cr)
	}
	if c.First != off || c.Last-c.First+1 != n {
		return 0, fmt.Errorf("Content-Range %q for offset %d and Content-Length %d", cr, off, n)
	}
	return c.Complete, nil
}

// readBody reads exactly n bytes and the end of the body. A body shorter
// or longer than its Content-Length is an error (the first wraps
// io.ErrUnexpectedEOF, and is retried): a short object must never reach
// a cache.
func readBody(body io.Reader, n int64) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: answer without Content-Length", ErrUpstream)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(body, data); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("body shorter than its %d bytes: %w", n, err)
	}
	var one [1]byte
	if m, _ := body.Read(one[:]); m > 0 {
		return nil, fmt.Errorf("%w: body longer than its %d bytes", ErrUpstream, n)
	}
	return data, nil
}
