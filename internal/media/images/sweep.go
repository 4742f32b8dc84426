package images

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Orphan objects (bucket.go) cost storage, not correctness: no pointer
// names them. The sweep deletes them. A bucket may be shared (several
// nodes, each with its own LSM tree, or one prefix reused by a new data
// directory): an object no pointer of this store names may be another
// store's. So each store has an owner id, random, kept in its LSM tree,
// and names its upload folders "<owner>-<random>"; the sweep considers
// only its own folders, and among those only objects older than a grace
// period, so that an upload still writing its objects (it commits the
// pointers after the last one) is never swept.

// ownerKey holds the store's owner id. Image keys start with "img/".
var ownerKey = []byte("sys/owner")

// loadOwner reads the store's owner id, making one on first open.
func loadOwner(db *badger.DB) (string, error) {
	var owner string
	err := db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get(ownerKey)
		if err == nil {
			return item.Value(func(b []byte) error { owner = string(b); return nil })
		}
		if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		var id [6]byte
		if _, err := rand.Read(id[:]); err != nil {
			return err
		}
		owner = hex.EncodeToString(id[:])
		return txn.Set(ownerKey, []byte(owner))
	})
	if err != nil {
		return "", fmt.Errorf("images: reading the store's owner id: %w", err)
	}
	return owner, nil
}

// uploadFolder is a new upload's folder of id's objects.
func (s *Store) uploadFolder(id string) (string, error) {
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", err
	}
	return bucketFolder + id + "/" + s.owner + "-" + hex.EncodeToString(nonce[:]) + "/", nil
}

// Sweep is what one sweep of the bucket found.
type Sweep struct {
	// Objects are the image objects listed; Removed the orphans of this
	// store deleted. Young are this store's unnamed objects left for a
	// later sweep (within the grace period), Foreign the objects in other
	// stores' folders (or older ones without an owner), never touched.
	Objects, Removed, Young, Foreign int
	// Live are this store's objects that no pointer of its own LSM
	// names but whose folder the bucket's current (or the local copy's
	// source) names: a manifest, or an upload whose local copy is gone.
	// With a bucket they are kept whatever their age.
	Live int
}

// liveFolder reports whether folder is the one id's current object in
// the bucket, or the local copy's source, names. currents caches the
// bucket's answers for one sweep.
func (s *Store) liveFolder(ctx context.Context, currents map[string]string, id, folder string) (bool, error) {
	var src source
	var hasSrc bool
	if err := s.db.View(func(txn *badger.Txn) (err error) {
		src, hasSrc, err = getSource(txn, id)
		return err
	}); err != nil {
		return false, err
	}
	if hasSrc && src.Folder == folder {
		return true, nil
	}
	cur, ok := currents[id]
	if !ok {
		c, _, had, err := s.readCurrent(ctx, id)
		if err != nil && !errors.Is(err, ErrMissingObject) {
			return false, err
		}
		if had {
			cur = c.Folder
		}
		currents[id] = cur
	}
	return cur == folder, nil
}

// SweepBucket deletes the objects in this store's upload folders that no
// pointer names, that no current object in the bucket (nor the local
// copy) names the folder of (share.go: another node may serve an
// upload of this one whose pointers this LSM no longer has), and that
// are older than grace. Without a bucket it does
// nothing. A failed delete is left for the next sweep.
func (s *Store) SweepBucket(ctx context.Context, grace time.Duration) (Sweep, error) {
	var sw Sweep
	if s.opts.Bucket == nil {
		return sw, nil
	}
	objs, err := s.opts.Bucket.List(ctx, bucketFolder)
	if err != nil {
		return sw, fmt.Errorf("images: listing the bucket's image objects: %w", err)
	}
	sw.Objects = len(objs)
	now := time.Now()
	var errs []error
	currents := map[string]string{} // id -> the folder its current names, read once a sweep
	for _, o := range objs {
		id, upload, name, ok := splitObjectKey(o.Key)
		if !ok || !strings.HasPrefix(upload, s.owner+"-") {
			sw.Foreign++
			continue
		}
		var ptr pointer
		var named bool
		err := s.db.View(func(txn *badger.Txn) error {
			var err error
			ptr, named, err = getPointer(txn, id, name)
			return err
		})
		if err != nil {
			return sw, err
		}
		if named && ptr.Key == o.Key {
			continue
		}
		if s.shared() {
			live, err := s.liveFolder(ctx, currents, id, folderOf(o.Key))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if live {
				sw.Live++
				continue
			}
		}
		if now.Sub(o.Modified) < grace {
			sw.Young++
			continue
		}
		if err := s.opts.Bucket.Remove(ctx, o.Key); err != nil {
			errs = append(errs, err)
			continue
		}
		sw.Removed++
		s.orphansRemoved.Add(1)
	}
	return sw, errors.Join(errs...)
}

// splitObjectKey splits ".images/<id>/<upload>/<name>".
func splitObjectKey(key string) (id, upload, name string, ok bool) {
	rest, ok := strings.CutPrefix(key, bucketFolder)
	if !ok {
		return "", "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// sweepOnce sweeps the bucket once, for the sweep loop (every
// BucketSweepInterval, the first one interval after open).
func (s *Store) sweepOnce() {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.BucketSweepInterval)
	sw, err := s.SweepBucket(ctx, s.opts.BucketSweepGrace)
	cancel()
	if err != nil {
		s.log.Warn("images: sweeping orphan objects from the bucket", "err", err, "removed", sw.Removed)
	} else if sw.Removed > 0 {
		s.log.Info("images: orphan objects removed from the bucket", "removed", sw.Removed, "objects", sw.Objects)
	}
}
