package origin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/minio/minio-go/v7"
)

// ErrExists reports a create (PutBytesIfAbsent) of an object that exists.
var ErrExists = errors.New("origin: the object exists")

// PutBytesIfAbsent writes data as the object at key with one PUT only if
// no object is there (If-None-Match: *, honoured by S3 and versitygw):
// ErrExists if one is. A store that ignores the condition writes the
// object anyway. A PUT retried after its first attempt landed is
// ErrExists too: the caller reads the object to tell.
func (b *Bucket) PutBytesIfAbsent(ctx context.Context, key string, data []byte) (ObjectInfo, error) {
	if err := checkKey(key); err != nil {
		return ObjectInfo{}, err
	}
	opts := minio.PutObjectOptions{DisableMultipart: true}
	opts.SetMatchETagExcept("*")
	info, err := b.w.client.PutObject(ctx, b.w.opts.Bucket, b.r.key(key), bytes.NewReader(data), int64(len(data)), opts)
	if minio.ToErrorResponse(err).StatusCode == http.StatusPreconditionFailed {
		return ObjectInfo{}, fmt.Errorf("%w: %s", ErrExists, key)
	}
	if err != nil {
		return ObjectInfo{}, b.w.fail("put", key, err)
	}
	return ObjectInfo{Key: key, Size: info.Size, Modified: info.LastModified.UTC(), ETag: info.ETag}, nil
}
