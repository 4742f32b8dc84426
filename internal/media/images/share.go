package images

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/strata-media/strata/internal/storage/origin"
)

// With a Bucket, the bucket is the source of truth for images and the
// LSM tree a cache of it, so that every node sharing the bucket serves
// every image. One upload writes, in its own folder
// ".images/<id>/<owner>-<random>/":
//
//	<variant>    the large variants' objects (bucket.go), as before
//	.manifest    JSON: the metadata, the small variants' bytes, the
//	             pointers of the large ones
//
// and then commits with one PUT of ".images/<id>/current", a small JSON
// object naming the folder. A PUT is atomic: a reader sees the old
// current or the new one, never half, and a folder is complete before
// any current names it. A delete removes current. A crash at any point
// leaves an uncommitted folder (an orphan, swept by its owner after the
// grace period) or a committed image, never a half-written one visible.
// (".manifest" starts with '.', which no variant name can.)
//
// A node's LSM holds, beside an image's keys, "img/<id>/src": the folder
// and the ETag of the current object it installed. It trusts its copy
// (or the absence of one) for BucketTTL; after that, the next read asks
// the bucket with a HEAD of current: the same ETag renews the trust, a
// different one installs the new folder's manifest in one transaction
// (a new local generation, so the tier engine never mixes the two), an
// absent current drops the local copy.

// manifestName is the object of an upload folder holding its manifest.
const manifestName = ".manifest"

// currentKey is the object naming id's current upload folder.
func currentKey(id string) string { return bucketFolder + id + "/current" }

// srcKey holds the source record of id's local copy.
func srcKey(id string) []byte { return []byte(keyPrefix + id + "/src") }

// goneKey holds the last local generation of an image dropped because
// another node deleted it, so that a later copy of it gets a higher
// generation (tier keys are by generation, and nothing invalidated them).
func goneKey(id string) []byte { return []byte("sys/gone/" + id) }

// A manifest is what an upload folder holds besides the large objects.
type manifest struct {
	Meta     Meta               `json:"meta"`
	Small    map[string][]byte  `json:"small"`
	Pointers map[string]pointer `json:"pointers"`
}

// A current object names the committed upload folder of an image.
type current struct {
	Folder string `json:"folder"`
}

// A source says which committed upload the local copy of an image is.
type source struct {
	Folder string `json:"folder"`
	ETag   string `json:"etag"`
}

// maxCurrentBytes bounds a current object read.
const maxCurrentBytes = 4 << 10

// maxManifestBytes bounds a manifest read: the small variants are under
// SizeThreshold each, base64 in JSON.
func (s *Store) maxManifestBytes() int64 {
	return int64(len(s.opts.Ladder)+2)*s.opts.SizeThreshold*2 + 1<<20
}

// shared reports whether the bucket is the source of truth.
func (s *Store) shared() bool { return s.opts.Bucket != nil }

// fresh is the revalidation decision: a copy (or absence) checked at
// checked is trusted until ttl has passed. now is passed in.
func fresh(checked, now time.Time, ttl time.Duration) bool {
	return !checked.IsZero() && now.Sub(checked) < ttl && !now.Before(checked)
}

// maxChecked bounds the map of check times: beyond it, the map starts
// again empty (reads of unknown ids cannot grow memory without bound).
const maxChecked = 100_000

// checkedAt returns when id was last checked against the bucket.
func (s *Store) checkedAt(id string) time.Time {
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	return s.checked[id]
}

// setChecked records a check of id at t; the zero time forgets it.
func (s *Store) setChecked(id string, t time.Time) {
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	if t.IsZero() {
		delete(s.checked, id)
		return
	}
	if s.checked == nil || len(s.checked) >= maxChecked {
		s.checked = make(map[string]time.Time)
	}
	s.checked[id] = t
}

// idLock is the lock serializing the bucket commits and revalidations of
// id on this node (striped).
func (s *Store) idLock(id string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(id))
	return &s.idLocks[h.Sum32()%uint32(len(s.idLocks))]
}

// refresh makes the local copy of id at most BucketTTL stale: the read
// path calls it before reading the LSM. Without a bucket it does nothing.
func (s *Store) refresh(id string) error {
	if !s.shared() || fresh(s.checkedAt(id), s.now(), s.opts.BucketTTL) {
		return nil
	}
	mu := s.idLock(id)
	mu.Lock()
	defer mu.Unlock()
	now := s.now()
	if fresh(s.checkedAt(id), now, s.opts.BucketTTL) { // another reader did it
		return nil
	}
	if err := s.revalidate(context.Background(), id); err != nil {
		return err
	}
	s.setChecked(id, now)
	return nil
}

// localState reads whether id has a local copy, and its source record.
func (s *Store) localState(id string) (has bool, src source, hasSrc bool, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		if _, err := getMeta(txn, id); err != nil {
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			return err
		}
		has = true
		var err error
		src, hasSrc, err = getSource(txn, id)
		return err
	})
	return
}

// getSource reads id's source record.
func getSource(txn *badger.Txn, id string) (source, bool, error) {
	var src source
	item, err := txn.Get(srcKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return src, false, nil
	}
	if err == nil {
		err = item.Value(func(b []byte) error { return json.Unmarshal(b, &src) })
	}
	if err != nil {
		return src, false, fmt.Errorf("images: reading the source of %s: %w", id, err)
	}
	return src, true, nil
}

// revalidate brings the local copy of id in line with the bucket. The
// caller holds id's lock.
func (s *Store) revalidate(ctx context.Context, id string) error {
	has, src, hasSrc, err := s.localState(id)
	if err != nil {
		return err
	}
	info, err := s.opts.Bucket.Stat(ctx, currentKey(id))
	switch {
	case errors.Is(err, origin.ErrNotFound) && has && !hasSrc:
		// Written before the bucket was shared: publish it (migration).
		return s.migrate(ctx, id)
	case errors.Is(err, origin.ErrNotFound):
		if has {
			return s.drop(id)
		}
		return nil
	case err != nil:
		return fmt.Errorf("images: checking %s in the bucket: %w", id, err)
	case has && hasSrc && info.ETag == src.ETag:
		return nil
	}
	return s.install(ctx, id, src)
}

// readCurrent reads the folder id's current object names and its ETag;
// ok false if there is none.
func (s *Store) readCurrent(ctx context.Context, id string) (cur current, etag string, ok bool, err error) {
	data, info, err := s.opts.Bucket.ReadAll(ctx, currentKey(id), maxCurrentBytes)
	if errors.Is(err, origin.ErrNotFound) {
		return cur, "", false, nil
	}
	if err != nil {
		return cur, "", false, fmt.Errorf("images: reading the current upload of %s: %w", id, err)
	}
	if err := json.Unmarshal(data, &cur); err != nil || !ownFolder(id, cur.Folder) {
		return cur, "", false, fmt.Errorf("%w: the current object of %s names no folder of it", ErrMissingObject, id)
	}
	return cur, info.ETag, true, nil
}

// ownFolder reports whether folder is an upload folder of id.
func ownFolder(id, folder string) bool {
	rest, ok := strings.CutPrefix(folder, bucketFolder+id+"/")
	return ok && strings.HasSuffix(rest, "/") && !strings.Contains(strings.TrimSuffix(rest, "/"), "/") && len(rest) > 1
}

// install reads the upload the bucket's current names and makes it the
// local copy of id, in one transaction.
func (s *Store) install(ctx context.Context, id string, old source) error {
	cur, etag, ok, err := s.readCurrent(ctx, id)
	if err != nil {
		return err
	}
	if !ok { // deleted between the HEAD and the GET
		return s.drop(id)
	}
	if cur.Folder == old.Folder { // current rewritten, same upload
		return s.setSource(id, source{Folder: cur.Folder, ETag: etag})
	}
	mf, err := s.readManifest(ctx, id, cur.Folder)
	if err != nil {
		return err
	}
	p := &Prepared{Variants: mf.Meta.Variants, blobs: mf.Small}
	for try := 0; ; try++ {
		err := s.db.Update(func(txn *badger.Txn) error {
			prev, err := getMeta(txn, id)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			base, err := lastGeneration(txn, id, prev.Generation)
			if err != nil {
				return err
			}
			m := mf.Meta
			m.ID, m.Generation = id, base+1
			if err := writeImage(txn, id, &prev, &m, p, mf.Pointers); err != nil {
				return err
			}
			return putSource(txn, id, source{Folder: cur.Folder, ETag: etag})
		})
		if errors.Is(err, badger.ErrConflict) && try < maxConflictRetries {
			continue
		}
		if err != nil {
			return fmt.Errorf("images: installing %s from the bucket: %w", id, err)
		}
		return nil
	}
}

// readManifest reads and checks the manifest of id's upload folder.
func (s *Store) readManifest(ctx context.Context, id, folder string) (manifest, error) {
	var mf manifest
	data, _, err := s.opts.Bucket.ReadAll(ctx, folder+manifestName, s.maxManifestBytes())
	if err != nil {
		if errors.Is(err, origin.ErrNotFound) {
			return mf, fmt.Errorf("%w: %s has no manifest", ErrMissingObject, folder)
		}
		return mf, fmt.Errorf("images: reading the manifest of %s: %w", id, err)
	}
	if err := json.Unmarshal(data, &mf); err != nil {
		return mf, fmt.Errorf("%w: the manifest of %s: %v", ErrMissingObject, folder, err)
	}
	for _, name := range mf.Meta.blobs() {
		if validID(name) != nil {
			return mf, fmt.Errorf("%w: the manifest of %s names variant %q", ErrMissingObject, folder, name)
		}
		ptr, large := mf.Pointers[name]
		if _, small := mf.Small[name]; small == large || large && folderOf(ptr.Key) != folder {
			// Every object of an upload is in its folder: the sweep keeps
			// the folder a current names, nothing outside it.
			return mf, fmt.Errorf("%w: the manifest of %s lacks variant %s, or names an object outside its folder", ErrMissingObject, folder, name)
		}
	}
	return mf, nil
}

// lastGeneration is the highest generation id had locally: gen, or the
// one it had when it was dropped.
func lastGeneration(txn *badger.Txn, id string, gen uint64) (uint64, error) {
	item, err := txn.Get(goneKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return gen, nil
	}
	var g uint64
	if err == nil {
		err = item.Value(func(b []byte) error { return json.Unmarshal(b, &g) })
	}
	if err != nil {
		return 0, fmt.Errorf("images: reading %s: %w", goneKey(id), err)
	}
	return max(g, gen), nil
}

func putSource(txn *badger.Txn, id string, src source) error {
	b, err := json.Marshal(src)
	if err != nil {
		return err
	}
	return txn.Set(srcKey(id), b)
}

// setSource updates id's source record alone.
func (s *Store) setSource(id string, src source) error {
	return s.db.Update(func(txn *badger.Txn) error { return putSource(txn, id, src) })
}

// drop deletes the local copy of id (the bucket has none), remembering
// its generation.
func (s *Store) drop(id string) error {
	err := s.db.Update(func(txn *badger.Txn) error {
		m, err := getMeta(txn, id)
		if err != nil {
			return err
		}
		return forgetLocal(txn, id, &m)
	})
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("images: dropping %s: %w", id, err)
	}
	return nil
}

// deleteLocal deletes every key of m's image in txn but its gone record.
func deleteLocal(txn *badger.Txn, id string, m *Meta) error {
	for _, name := range m.blobs() {
		if err := deleteBlob(txn, id, name); err != nil {
			return err
		}
	}
	return errors.Join(txn.Delete(srcKey(id)), txn.Delete(metaKey(id)))
}

// errNotCommitted marks a publish that failed before the PUT of current:
// no current names the folder.
var errNotCommitted = errors.New("images: not committed")

// publish writes the manifest of an upload into its folder, then
// commits it with the PUT of id's current object, and returns the ETag
// of that current and the folder it replaced ("" if none). An error
// before the PUT of current wraps errNotCommitted. The caller holds
// id's lock.
//
// With create, current is written only if there is none (a migration
// never overwrites an upload another node committed meanwhile): a
// current that exists fails with origin.ErrExists, unless it names
// folder (a retried PUT that had landed).
func (s *Store) publish(ctx context.Context, id, folder string, mf *manifest, create bool) (etag, replaced string, err error) {
	b, err := json.Marshal(mf)
	if err != nil {
		return "", "", errors.Join(errNotCommitted, err)
	}
	if _, err := s.opts.Bucket.PutBytes(ctx, folder+manifestName, b); err != nil {
		return "", "", fmt.Errorf("%w: images: writing the manifest of %s: %w", errNotCommitted, id, err)
	}
	prev, _, had, err := s.readCurrent(ctx, id)
	if err != nil && !errors.Is(err, ErrMissingObject) { // a bad current is replaced
		return "", "", fmt.Errorf("%w: %w", errNotCommitted, err)
	}
	if s.beforeCommit != nil {
		if err := s.beforeCommit(); err != nil {
			return "", "", fmt.Errorf("%w: %w", errNotCommitted, err)
		}
	}
	cb, _ := json.Marshal(current{Folder: folder})
	var info origin.ObjectInfo
	if create {
		info, err = s.opts.Bucket.PutBytesIfAbsent(ctx, currentKey(id), cb)
		if errors.Is(err, origin.ErrExists) {
			if cur, etag, ok, rerr := s.readCurrent(ctx, id); rerr == nil && ok && cur.Folder == folder {
				return etag, "", nil
			}
			return "", "", err
		}
	} else {
		info, err = s.opts.Bucket.PutBytes(ctx, currentKey(id), cb)
	}
	if err != nil {
		return "", "", fmt.Errorf("images: committing %s to the bucket: %w", id, err)
	}
	if had && prev.Folder != folder {
		replaced = prev.Folder
	}
	return info.ETag, replaced, nil
}

// removeFolder deletes every object of an upload folder no current
// names any more, best effort (what is left is an orphan for the sweep).
func (s *Store) removeFolder(ctx context.Context, folder string) {
	if folder == "" {
		return
	}
	objs, err := s.opts.Bucket.List(ctx, folder)
	if err != nil {
		s.log.Warn("images: listing a replaced upload's objects", "folder", folder, "err", err)
		return
	}
	for _, o := range objs {
		if err := s.opts.Bucket.Remove(ctx, o.Key); err != nil {
			s.log.Warn("images: removing a replaced upload's object", "key", o.Key, "err", err)
		}
	}
}

// folderOf is the upload folder of an object key.
func folderOf(key string) string { return path.Dir(key) + "/" }

// migrate publishes an image written before the bucket was shared (a
// local copy without a source record, and no current in the bucket):
// its manifest goes into the folder of its large objects (a new folder
// if it has none, with any large value the LSM holds itself written
// there as an object), then its current. The caller holds id's lock.
func (s *Store) migrate(ctx context.Context, id string) error {
	var (
		m     Meta
		small = map[string][]byte{}
		ptrs  = map[string]pointer{}
	)
	err := s.db.View(func(txn *badger.Txn) error {
		var err error
		if m, err = getMeta(txn, id); err != nil {
			return err
		}
		for _, name := range m.blobs() {
			data, ptr, err := getBlob(txn, id, name)
			if err != nil {
				return err
			}
			if ptr != nil {
				ptrs[name] = *ptr
			} else {
				small[name] = data
			}
		}
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	folder := ""
	for _, ptr := range ptrs {
		if folder = folderOf(ptr.Key); !ownFolder(id, folder) {
			return fmt.Errorf("%w: %s's object %s is outside its folders", ErrMissingObject, id, ptr.Key)
		}
		break
	}
	if folder == "" {
		if folder, err = s.uploadFolder(id); err != nil {
			return err
		}
	}
	for name, data := range small {
		if s.large(len(data)) { // a value-log value: an object now
			p := &Prepared{blobs: map[string][]byte{name: data}}
			up, err := s.uploadTo(ctx, id, folder, p, []string{name})
			if err != nil {
				return err
			}
			ptrs[name] = up[name]
			delete(small, name)
		}
	}
	for _, ptr := range ptrs {
		if folderOf(ptr.Key) != folder {
			return fmt.Errorf("%w: %s's objects are in several folders", ErrMissingObject, id)
		}
	}
	etag, _, err := s.publish(ctx, id, folder, &manifest{Meta: m, Small: small, Pointers: ptrs}, true)
	if errors.Is(err, origin.ErrExists) {
		// Another node uploaded id since the HEAD: the bucket's upload
		// wins, installed here by the next read; this copy's objects
		// become orphans of this node's sweep.
		s.log.Info("images: an image written before the bucket was shared was uploaded through another node meanwhile", "id", id)
		return s.install(ctx, id, source{})
	}
	if err != nil {
		return err
	}
	s.log.Info("images: published an image written before the bucket was shared", "id", id, "folder", folder)
	return s.setSource(id, source{Folder: folder, ETag: etag})
}

// migrateAll publishes every local image without a source record, at
// open, in the background; reads publish them too (revalidate), so this
// only makes them visible to the other nodes sooner.
func (s *Store) migrateAll() {
	defer s.wg.Done()
	var ids []string
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(keyPrefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := string(it.Item().Key())
			id, ok := strings.CutSuffix(strings.TrimPrefix(k, keyPrefix), "/meta")
			if !ok || strings.Contains(id, "/") {
				continue
			}
			if _, err := txn.Get(srcKey(id)); errors.Is(err, badger.ErrKeyNotFound) {
				ids = append(ids, id)
			}
		}
		return nil
	})
	if err != nil {
		s.log.Warn("images: listing images to publish to the bucket", "err", err)
		return
	}
	for _, id := range ids {
		select {
		case <-s.stop:
			return
		default:
		}
		if err := s.refresh(id); err != nil {
			s.log.Warn("images: publishing an image to the bucket", "id", id, "err", err)
		}
	}
}

// putShared stores an upload with the bucket as the source of truth:
// the large objects and the manifest into a new folder, the commit (the
// PUT of current), then the local copy, then the replaced upload's
// objects are deleted. A failure before the commit leaves an orphan
// folder for the sweep; after it, the image is stored, and a local copy
// not written is installed by the next read.
func (s *Store) putShared(ctx context.Context, id string, p *Prepared, names []string) (Meta, bool, error) {
	folder, err := s.uploadFolder(id)
	if err != nil {
		return Meta{}, false, err
	}
	ptrs, err := s.uploadTo(ctx, id, folder, p, names)
	if err != nil {
		return Meta{}, false, err
	}
	now := time.Now().UTC()
	mf := &manifest{Meta: Meta{ID: id, Uploaded: now, Format: p.Source.Format, Width: p.Source.Width,
		Height: p.Source.Height, Variants: p.Variants}, Small: map[string][]byte{}, Pointers: ptrs}
	for _, name := range names {
		if _, ok := ptrs[name]; !ok {
			mf.Small[name] = p.blobs[name]
		}
	}
	mu := s.idLock(id)
	mu.Lock()
	defer mu.Unlock()
	etag, replacedFolder, err := s.publish(ctx, id, folder, mf, false)
	if errors.Is(err, errNotCommitted) {
		s.removeFolder(ctx, folder) // no current names it
		return Meta{}, false, err
	}
	if err != nil {
		// The objects stay for the sweep: a PUT of current that failed
		// may still have landed.
		s.setChecked(id, time.Time{})
		return Meta{}, false, err
	}
	var (
		m        Meta
		replaced bool
		old      map[string]pointer
	)
	for try := 0; ; try++ {
		m, replaced, old, err = s.put(id, p, ptrs, now, &source{Folder: folder, ETag: etag})
		if errors.Is(err, badger.ErrConflict) && try < maxConflictRetries {
			continue
		}
		break
	}
	if err != nil {
		s.setChecked(id, time.Time{}) // the next read installs it from the bucket
		return m, replaced, fmt.Errorf("images: %s is stored in the bucket, but not in the local copy: %w", id, err)
	}
	s.setChecked(id, s.now())
	gone := map[string]bool{replacedFolder: true}
	for _, ptr := range old {
		gone[folderOf(ptr.Key)] = true
	}
	for f := range gone {
		if f != folder && (f == replacedFolder || ownFolder(id, f)) {
			s.removeFolder(ctx, f)
		}
	}
	return m, replaced || replacedFolder != "", nil
}

// deleteShared deletes id's current object, then the local copy, then
// the objects of the deleted upload, and reports whether the image
// existed (in the bucket, or only here, written before it was shared).
func (s *Store) deleteShared(ctx context.Context, id string) (bool, error) {
	mu := s.idLock(id)
	mu.Lock()
	defer mu.Unlock()
	cur, _, had, err := s.readCurrent(ctx, id)
	bad := errors.Is(err, ErrMissingObject)
	if err != nil && !bad {
		return false, err
	}
	if had || bad {
		if err := s.opts.Bucket.Remove(ctx, currentKey(id)); err != nil {
			return false, fmt.Errorf("images: deleting %s from the bucket: %w", id, err)
		}
	}
	var (
		ptrs            map[string]pointer
		hasLocal, isSrc bool
	)
	err = s.db.Update(func(txn *badger.Txn) error {
		m, err := getMeta(txn, id)
		if err != nil {
			return err
		}
		hasLocal = true
		if _, isSrc, err = getSource(txn, id); err != nil {
			return err
		}
		if ptrs, err = pointers(txn, &m); err != nil {
			return err
		}
		return forgetLocal(txn, id, &m)
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		s.setChecked(id, time.Time{})
		return false, fmt.Errorf("images: deleting %s: %w", id, err)
	}
	s.setChecked(id, s.now())
	gone := map[string]bool{}
	if had {
		gone[cur.Folder] = true
	}
	for _, ptr := range ptrs {
		if f := folderOf(ptr.Key); ownFolder(id, f) {
			gone[f] = true
		}
	}
	for f := range gone {
		s.removeFolder(ctx, f)
	}
	return had || (hasLocal && !isSrc), nil
}

// now is the time of the revalidation decisions.
func (s *Store) now() time.Time {
	if s.opts.clock != nil {
		return s.opts.clock()
	}
	return time.Now()
}

// forgetLocal deletes the local copy of image id (metadata m) and records
// the generation it had (goneKey), so that a later copy gets a higher one.
func forgetLocal(txn *badger.Txn, id string, m *Meta) error {
	base, err := lastGeneration(txn, id, m.Generation)
	if err != nil {
		return err
	}
	if err := deleteLocal(txn, id, m); err != nil {
		return err
	}
	b, _ := json.Marshal(base)
	return txn.Set(goneKey(id), b)
}
