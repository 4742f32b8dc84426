package images

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/strata-media/strata/internal/storage/origin"
)

// Meta returns the metadata of id.
func (s *Store) Meta(id string) (Meta, error) {
	if err := validID(id); err != nil {
		return Meta{}, err
	}
	if err := s.refresh(id); err != nil {
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
	if err := s.refresh(id); err != nil {
		return Meta{}, Variant{}, nil, err
	}
	var (
		m    Meta
		v    Variant
		data []byte
		ptr  *pointer
	)
	err := s.db.View(func(txn *badger.Txn) (err error) {
		if m, err = getMeta(txn, id); err != nil {
			return err
		}
		var ok bool
		if v, ok = m.Variant(name); !ok {
			return fmt.Errorf("%w: %s has no variant %q", ErrNotFound, id, name)
		}
		data, ptr, err = getBlob(txn, id, v.BlobName())
		return err
	})
	if err == nil && ptr != nil {
		data, err = s.fetchOf(id, m.Generation, *ptr)
	}
	return m, v, data, err
}

// Blob returns the bytes stored under blob for id's generation gen, or
// ErrChanged if id is now at another generation.
func (s *Store) Blob(id string, gen uint64, blob string) ([]byte, error) {
	var (
		data []byte
		ptr  *pointer
	)
	err := s.db.View(func(txn *badger.Txn) error {
		m, err := getMeta(txn, id)
		if err != nil {
			return err
		}
		if m.Generation != gen {
			return fmt.Errorf("%w: %s is at generation %d, not %d", ErrChanged, id, m.Generation, gen)
		}
		data, ptr, err = getBlob(txn, id, blob)
		return err
	})
	if err == nil && ptr != nil {
		data, err = s.fetchOf(id, gen, *ptr)
	}
	return data, err
}

// fetchOf reads the object of a pointer of id's generation gen, read
// outside the transaction: a missing object of a generation replaced
// since (its objects deleted after the commit) is ErrChanged, and the
// reader retries.
func (s *Store) fetchOf(id string, gen uint64, ptr pointer) ([]byte, error) {
	data, err := s.fetch(context.Background(), ptr)
	if errors.Is(err, origin.ErrNotFound) {
		if s.shared() { // another node may have replaced it: ask the bucket now
			s.setChecked(id, time.Time{})
		}
		if m, merr := s.Meta(id); merr != nil || m.Generation != gen {
			return nil, fmt.Errorf("%w: %s replaced while its object %s was read", ErrChanged, id, ptr.Key)
		}
		return nil, fmt.Errorf("%w: %v", ErrMissingObject, err)
	}
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

// getBlob reads the bytes of one variant key in txn, or the pointer to
// the object that holds them. A missing key under existing metadata is
// corruption: they are written together.
func getBlob(txn *badger.Txn, id, blob string) ([]byte, *pointer, error) {
	ptr, ok, err := getPointer(txn, id, blob)
	if err != nil || ok {
		return nil, &ptr, err
	}
	item, err := txn.Get(blobKey(id, blob))
	if err != nil {
		return nil, nil, fmt.Errorf("images: reading %s/%s: %w", id, blob, err)
	}
	data, err := item.ValueCopy(nil)
	if err != nil {
		return nil, nil, fmt.Errorf("images: reading %s/%s: %w", id, blob, err)
	}
	return data, nil, nil
}
