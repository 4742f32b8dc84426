package images

import (
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
// transaction, synced before Put returns (unless Options.NoSync). It
// returns the stored metadata and whether it replaced an image.
func (s *Store) Put(id string, p *Prepared) (Meta, bool, error) {
	if err := validID(id); err != nil {
		return Meta{}, false, err
	}
	for try := 0; ; try++ {
		m, replaced, err := s.put(id, p, time.Now().UTC())
		if errors.Is(err, badger.ErrConflict) && try < maxConflictRetries {
			continue
		}
		return m, replaced, err
	}
}

func (s *Store) put(id string, p *Prepared, now time.Time) (Meta, bool, error) {
	txn := s.db.NewTransaction(true)
	defer txn.Discard()
	old, err := getMeta(txn, id)
	replaced := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Meta{}, false, err
	}
	m := Meta{ID: id, Generation: old.Generation + 1, Uploaded: now, Format: p.Source.Format,
		Width: p.Source.Width, Height: p.Source.Height, Variants: p.Variants}
	if err := writeImage(txn, id, &old, &m, p); err != nil {
		return Meta{}, false, err
	}
	if err := txn.Commit(); err != nil {
		return Meta{}, false, fmt.Errorf("images: committing %s: %w", id, err)
	}
	return m, replaced, nil
}

// writeImage sets m's variants and metadata in txn and deletes the keys of
// old's variants that m does not have.
func writeImage(txn *badger.Txn, id string, old, m *Meta, p *Prepared) error {
	keep := map[string]bool{}
	for _, name := range m.blobs() {
		keep[name] = true
		if err := txn.Set(blobKey(id, name), p.blobs[name]); err != nil {
			return fmt.Errorf("images: writing %s/%s: %w", id, name, err)
		}
	}
	for _, name := range old.blobs() {
		if !keep[name] {
			if err := txn.Delete(blobKey(id, name)); err != nil {
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

// Delete removes every key of id in one transaction and reports whether
// the image existed.
func (s *Store) Delete(id string) (bool, error) {
	if err := validID(id); err != nil {
		return false, err
	}
	err := s.db.Update(func(txn *badger.Txn) error {
		old, err := getMeta(txn, id)
		if err != nil {
			return err
		}
		for _, name := range old.blobs() {
			if err := txn.Delete(blobKey(id, name)); err != nil {
				return err
			}
		}
		return txn.Delete(metaKey(id))
	})
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("images: deleting %s: %w", id, err)
	}
	return true, nil
}
