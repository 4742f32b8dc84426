package images

import (
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// Meta returns the metadata of id.
func (s *Store) Meta(id string) (Meta, error) {
	if err := validID(id); err != nil {
		return Meta{}, err
	}
	var m Meta
	err := s.db.View(func(txn *badger.Txn) (err error) {
		m, err = getMeta(txn, id)
		return err
	})
	return m, err
}

// Get returns the metadata of id, its variant name and the variant's
// bytes, read in one consistent snapshot.
func (s *Store) Get(id, name string) (Meta, Variant, []byte, error) {
	if err := errors.Join(validID(id), validID(name)); err != nil {
		return Meta{}, Variant{}, nil, err
	}
	var (
		m    Meta
		v    Variant
		data []byte
	)
	err := s.db.View(func(txn *badger.Txn) (err error) {
		if m, err = getMeta(txn, id); err != nil {
			return err
		}
		var ok bool
		if v, ok = m.Variant(name); !ok {
			return fmt.Errorf("%w: %s has no variant %q", ErrNotFound, id, name)
		}
		data, err = getBlob(txn, id, v.BlobName())
		return err
	})
	return m, v, data, err
}

// Blob returns the bytes stored under blob for id's generation gen, or
// ErrChanged if id is now at another generation.
func (s *Store) Blob(id string, gen uint64, blob string) ([]byte, error) {
	var data []byte
	err := s.db.View(func(txn *badger.Txn) error {
		m, err := getMeta(txn, id)
		if err != nil {
			return err
		}
		if m.Generation != gen {
			return fmt.Errorf("%w: %s is at generation %d, not %d", ErrChanged, id, m.Generation, gen)
		}
		data, err = getBlob(txn, id, blob)
		return err
	})
	return data, err
}

// getMeta reads id's metadata in txn.
func getMeta(txn *badger.Txn, id string) (Meta, error) {
	item, err := txn.Get(metaKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return Meta{}, fmt.Errorf("%w: image %q", ErrNotFound, id)
	}
	if err != nil {
		return Meta{}, fmt.Errorf("images: reading %s: %w", id, err)
	}
	b, err := item.ValueCopy(nil)
	if err != nil {
		return Meta{}, fmt.Errorf("images: reading %s: %w", id, err)
	}
	return decodeMeta(b)
}

// getBlob reads the bytes of one variant key in txn. A missing key under
// existing metadata is corruption: they are written together.
func getBlob(txn *badger.Txn, id, blob string) ([]byte, error) {
	item, err := txn.Get(blobKey(id, blob))
	if err != nil {
		return nil, fmt.Errorf("images: reading %s/%s: %w", id, blob, err)
	}
	data, err := item.ValueCopy(nil)
	if err != nil {
		return nil, fmt.Errorf("images: reading %s/%s: %w", id, blob, err)
	}
	return data, nil
}
