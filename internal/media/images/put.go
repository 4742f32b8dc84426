package images

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// maxConflictRetries bounds the retries of a Put that raced another Put of
// the same id.
const maxConflictRetries = 8

// Ingest prepares body (Pipeline.Prepare) and stores it as id (Put).
func (s *Store) Ingest(id string, body []byte) (Meta, bool, error) {
	if err := validID(id); err != nil {
		return Meta{}, false, err
	}
	p, err := s.pipeline.Prepare(body)
	if err != nil {
		return Meta{}, false, err
	}
	return s.Put(id, p)
}

// Put stores a prepared image as id, replacing every variant of a
// previous upload: the variants and the metadata are one atomic Badger
// transaction, synced before Put returns (unless Options.NoSync). With a
// bucket, the large variants are written to it first, and the objects of
// the replaced upload deleted after (bucket.go). It returns the stored
// metadata and whether it replaced an image.
func (s *Store) Put(id string, p *Prepared) (Meta, bool, error) {
	if err := validID(id); err != nil {
		return Meta{}, false, err
	}
	ctx := context.Background()
	names := (&Meta{Variants: p.Variants}).blobs()
	if s.shared() {
		return s.putShared(ctx, id, p, names)
	}
	ptrs, err := s.upload(ctx, id, p, names)
	if err != nil {
		return Meta{}, false, err
	}
	for try := 0; ; try++ {
		m, replaced, old, err := s.put(id, p, ptrs, time.Now().UTC(), nil)
		if errors.Is(err, badger.ErrConflict) && try < maxConflictRetries {
			continue
		}
		if err != nil {
			s.removeObjects(ctx, ptrs) // no committed pointer names them
			return m, replaced, err
		}
		s.removeObjects(ctx, old)
		return m, replaced, nil
	}
}

// put writes the image in one transaction and returns the pointers of
// the generation it replaced, whose objects are now unreferenced.
func (s *Store) put(id string, p *Prepared, ptrs map[string]pointer, now time.Time, src *source) (Meta, bool, map[string]pointer, error) {
	txn := s.db.NewTransaction(true)
	defer txn.Discard()
	old, err := getMeta(txn, id)
	replaced := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Meta{}, false, nil, err
	}
	oldPtrs, err := pointers(txn, &old)
	if err != nil {
		return Meta{}, false, nil, err
	}
	base, err := lastGeneration(txn, id, old.Generation)
	if err != nil {
		return Meta{}, false, nil, err
	}
	m := Meta{ID: id, Generation: base + 1, Uploaded: now, Format: p.Source.Format,
		Width: p.Source.Width, Height: p.Source.Height, Variants: p.Variants}
	if err := writeImage(txn, id, &old, &m, p, ptrs); err != nil {
		return Meta{}, false, nil, err
	}
	if src != nil {
		if err := putSource(txn, id, *src); err != nil {
			return Meta{}, false, nil, err
		}
	}
	if s.beforeCommit != nil && src == nil { // with a bucket, publish calls it
		if err := s.beforeCommit(); err != nil {
			return Meta{}, false, nil, err
		}
	}
	if err := txn.Commit(); err != nil {
		return Meta{}, false, nil, fmt.Errorf("images: committing %s: %w", id, err)
	}
	return m, replaced, oldPtrs, nil
}

// writeImage sets m's variants and metadata in txn, each variant as its
// bytes or, if ptrs has it, as a pointer to its object, and deletes the
// keys of old's variants that m does not have.
func writeImage(txn *badger.Txn, id string, old, m *Meta, p *Prepared, ptrs map[string]pointer) error {
	keep := map[string]bool{}
	for _, name := range m.blobs() {
		keep[name] = true
		if err := setBlob(txn, id, name, p.blobs[name], ptrs); err != nil {
			return fmt.Errorf("images: writing %s/%s: %w", id, name, err)
		}
	}
	for _, name := range old.blobs() {
		if !keep[name] {
			if err := deleteBlob(txn, id, name); err != nil {
				return fmt.Errorf("images: deleting %s/%s: %w", id, name, err)
			}
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("images: encoding metadata: %w", err)
	}
	return txn.Set(metaKey(id), b)
}

// setBlob writes the bytes of blob name of id, or its pointer, removing
// the other form an earlier upload may have left.
func setBlob(txn *badger.Txn, id, name string, data []byte, ptrs map[string]pointer) error {
	ptr, ok := ptrs[name]
	if !ok {
		if err := txn.Set(blobKey(id, name), data); err != nil {
			return err
		}
		return txn.Delete(pointerKey(id, name))
	}
	b, err := json.Marshal(ptr)
	if err != nil {
		return err
	}
	if err := txn.Set(pointerKey(id, name), b); err != nil {
		return err
	}
	return txn.Delete(blobKey(id, name))
}

// deleteBlob deletes blob name of id in either form.
func deleteBlob(txn *badger.Txn, id, name string) error {
	return errors.Join(txn.Delete(blobKey(id, name)), txn.Delete(pointerKey(id, name)))
}

// Delete removes every key of id in one transaction, then the objects of
// its large variants, and reports whether the image existed.
func (s *Store) Delete(id string) (bool, error) {
	if err := validID(id); err != nil {
		return false, err
	}
	if s.shared() {
		return s.deleteShared(context.Background(), id)
	}
	var ptrs map[string]pointer
	err := s.db.Update(func(txn *badger.Txn) error {
		old, err := getMeta(txn, id)
		if err != nil {
			return err
		}
		if ptrs, err = pointers(txn, &old); err != nil {
			return err
		}
		for _, name := range old.blobs() {
			if err := deleteBlob(txn, id, name); err != nil {
				return err
			}
		}
		return txn.Delete(metaKey(id))
	})
	if err == nil {
		s.removeObjects(context.Background(), ptrs)
	}
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("images: deleting %s: %w", id, err)
	}
	return true, nil
}
