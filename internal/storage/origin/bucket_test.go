package origin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/strata-media/strata/internal/storage/s3test"
)

// failingReader gives n bytes of data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// Put sends one PUT for a body of one part and a multipart upload for a
// longer one, byte-identical; a body that fails after a part was sent, or
// ends with io.ErrUnexpectedEOF (a client that hung up), stores nothing
// and leaves no incomplete upload; an empty body sends nothing.
func TestBucketPut(t *testing.T) {
	srv := s3test.Start(t)
	opts := s3Options(srv, "p", nil)
	opts.PartSize = minPartSize
	b, err := NewBucket(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	small, large := bytes.Repeat([]byte("s"), 1000), bytes.Repeat([]byte("0123456789"), minPartSize/5+7)
	for key, data := range map[string][]byte{"small": small, "large": large} {
		info, err := b.Put(ctx, key, bytes.NewReader(data))
		if err != nil || info.Size != int64(len(data)) {
			t.Fatalf("put %s: %+v %v", key, info, err)
		}
		got, _, err := b.ReadAll(ctx, key, int64(len(data)))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %s back: %d bytes, %v", key, len(got), err)
		}
	}
	for _, cut := range []error{io.ErrUnexpectedEOF, errors.New("client gone")} {
		if _, err := b.Put(ctx, "cut", &failingReader{data: large[:minPartSize+10], err: cut}); !errors.Is(err, cut) {
			t.Fatalf("cut body (%v): %v", cut, err)
		}
	}
	if _, err := b.Put(ctx, "empty", bytes.NewReader(nil)); !errors.Is(err, ErrEmpty) {
		t.Fatalf("empty body: %v", err)
	}
	objs, err := b.List(ctx, "")
	if err != nil || len(objs) != 2 {
		t.Fatalf("objects %+v, %v", objs, err)
	}
	if n, err := b.IncompleteUploads(ctx, ""); n != 0 || err != nil {
		t.Fatalf("incomplete uploads: %d, %v", n, err)
	}
}

// ReadRange reads a range of one version: of another it is ErrChanged, at
// or past the end ErrInvalidRange, of a missing object ErrNotFound.
func TestBucketReadRange(t *testing.T) {
	srv := s3test.Start(t)
	b, err := NewBucket(s3Options(srv, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v1, err := b.PutBytes(ctx, "k", []byte("version one"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := b.ReadRange(ctx, "k", v1.ETag, 8, 100); err != nil || string(got) != "one" {
		t.Fatalf("range: %q %v", got, err)
	}
	if _, _, err := b.ReadRange(ctx, "k", v1.ETag, 11, 1); !errors.Is(err, ErrInvalidRange) {
		t.Fatalf("past the end: %v", err)
	}
	if _, err := b.PutBytes(ctx, "k", []byte("version two")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.ReadRange(ctx, "k", v1.ETag, 0, 4); !errors.Is(err, ErrChanged) {
		t.Fatalf("replaced version: %v", err)
	}
	if _, _, err := b.ReadRange(ctx, "absent", "", 0, 4); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing object: %v", err)
	}
	if st, err := b.Stat(ctx, "k"); err != nil || st.Size != 11 || st.ETag == v1.ETag {
		t.Fatalf("stat: %+v %v", st, err)
	}
}
