package origin

import (
	"context"
	"errors"
	"testing"

	"github.com/strata-media/strata/internal/storage/s3test"
)

// A create writes an absent object, and refuses one that exists,
// leaving it as it was.
func TestBucketPutBytesIfAbsent(t *testing.T) {
	srv := s3test.Start(t)
	b, err := NewBucket(s3Options(srv, "p", nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := b.PutBytesIfAbsent(ctx, "c", []byte("first")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PutBytesIfAbsent(ctx, "c", []byte("second")); !errors.Is(err, ErrExists) {
		t.Fatalf("create over an object: %v", err)
	}
	if got, _, err := b.ReadAll(ctx, "c", 100); err != nil || string(got) != "first" {
		t.Fatalf("after the refused create: %q %v", got, err)
	}
}
