package images

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// With Options.Bucket, MRIS's split puts the large values in the bucket
// rather than in a value log on disk: a variant of SizeThreshold bytes or
// more is an object, and the LSM tree on flash holds a pointer record
// naming it, under its own key:
//
//	img/<id>/o/<variant>     JSON pointer: object key, size, SHA-256
//
// The objects of one upload share a prefix of their own,
// ".images/<id>/<owner>-<random>/" (<owner> names the store, sweep.go): a
// retried or concurrent upload never overwrites another's objects. Order of writes: every
// object first, then the pointers and the metadata in one Badger
// transaction, then the objects of the replaced generation are deleted.
// (With a bucket, the commit is the PUT of the image's current object
// in the bucket, and the LSM a cache of it: share.go.)
// A crash before the commit leaves orphan objects (unreferenced, never
// read); a crash after it leaves the old generation's objects as orphans
// too; the sweep (sweep.go) deletes them. A pointer never names an
// object not yet written, so no read finds a dangling pointer.

// bucketFolder is the folder of the image store's objects under the
// bucket's prefix; the leading '.' keeps it out of the titles' catalog.
const bucketFolder = ".images/"

// pointerKey is the key of the pointer record of variant name of id.
func pointerKey(id, name string) []byte { return []byte(keyPrefix + id + "/o/" + name) }

// A pointer names the object holding a large variant's bytes.
type pointer struct {
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// large reports whether a value of n bytes goes to the bucket.
func (s *Store) large(n int) bool {
	return s.opts.Bucket != nil && int64(n) >= s.opts.SizeThreshold
}

// upload writes the large blobs of p to the bucket, before any pointer
// names them, and returns their pointers by blob name.
func (s *Store) upload(ctx context.Context, id string, p *Prepared, names []string) (map[string]pointer, error) {
	dir, err := s.uploadFolder(id)
	if err != nil {
		return nil, err
	}
	return s.uploadTo(ctx, id, dir, p, names)
}

// uploadTo writes the large blobs of p into the upload folder dir.
func (s *Store) uploadTo(ctx context.Context, id, dir string, p *Prepared, names []string) (map[string]pointer, error) {
	ptrs := make(map[string]pointer)
	for _, name := range names {
		data := p.blobs[name]
		if !s.large(len(data)) {
			continue
		}
		sum := sha256.Sum256(data)
		ptr := pointer{Key: dir + name, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
		if _, err := s.opts.Bucket.PutBytes(ctx, ptr.Key, data); err != nil {
			s.removeObjects(ctx, ptrs) // not yet named by any pointer
			return nil, fmt.Errorf("images: writing %s/%s to the bucket: %w", id, name, err)
		}
		ptrs[name] = ptr
	}
	return ptrs, nil
}

// removeObjects deletes the objects of ptrs, best effort: one left is an
// orphan, never read.
func (s *Store) removeObjects(ctx context.Context, ptrs map[string]pointer) {
	for _, ptr := range ptrs {
		if err := s.opts.Bucket.Remove(ctx, ptr.Key); err != nil {
			s.log.Warn("images: removing an unreferenced object", "key", ptr.Key, "err", err)
		}
	}
}

// getPointer reads the pointer record of blob of id, ok false if the
// blob has none (it is stored in the LSM tree or the value log).
func getPointer(txn *badger.Txn, id, blob string) (pointer, bool, error) {
	item, err := txn.Get(pointerKey(id, blob))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return pointer{}, false, nil
	}
	var ptr pointer
	if err == nil {
		err = item.Value(func(b []byte) error { return json.Unmarshal(b, &ptr) })
	}
	if err != nil {
		return pointer{}, false, fmt.Errorf("images: reading the pointer of %s/%s: %w", id, blob, err)
	}
	return ptr, true, nil
}

// pointers reads the pointer records of every blob of m.
func pointers(txn *badger.Txn, m *Meta) (map[string]pointer, error) {
	out := make(map[string]pointer)
	for _, name := range m.blobs() {
		ptr, ok, err := getPointer(txn, m.ID, name)
		if err != nil {
			return nil, err
		}
		if ok {
			out[name] = ptr
		}
	}
	return out, nil
}

// fetch reads the object ptr names and checks it is the one named.
func (s *Store) fetch(ctx context.Context, ptr pointer) ([]byte, error) {
	if s.opts.Bucket == nil {
		return nil, fmt.Errorf("%w: %s is in a bucket, and the store has none", ErrMissingObject, ptr.Key)
	}
	data, _, err := s.opts.Bucket.ReadAll(ctx, ptr.Key, ptr.Size)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) != ptr.Size || hex.EncodeToString(sum[:]) != ptr.SHA256 {
		return nil, fmt.Errorf("%w: object %s is not the one its pointer names", ErrMissingObject, ptr.Key)
	}
	return data, nil
}
