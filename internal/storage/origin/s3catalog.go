package origin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"golang.org/x/sync/errgroup"

	"github.com/strata-media/strata/internal/ident"
)

// The catalog of an S3 is cached in memory, as a Dir's is, but a bucket
// has no directory stamps to compare: a title's stamp is its strata.json,
// which S3Writer rewrites last on every upload. A check lists the title
// prefixes (one request per thousand titles) and sends one HEAD per title
// for its strata.json; only a title whose strata.json changed (ETag or
// time) is listed again in full and its strata.json read. A title prefix
// without strata.json is not published and not in the catalog. Objects
// added under a published title without rewriting its strata.json are
// noticed by Refresh only.

// maxAbsent bounds the remembered ids of titles that were not found.
const maxAbsent = 4096

// s3Catalog is an S3's cached catalog.
type s3Catalog struct {
	scan  sync.Mutex   // serializes checks, which do I/O without holding mu
	scans atomic.Int64 // title scans so far, for tests

	mu struct {
		sync.Mutex // protects the fields below
		titles     map[string]*s3Title
		absent     map[string]time.Time // ids found unpublished, and when
		sorted     []Title              // the catalog; nil when titles changed since it was built
		checked    time.Time            // when every title was last checked; zero forces a check
	}
}

// s3Title is a cached title and the stamp of the strata.json it was
// built from. Only checked changes after it is stored (under mu).
type s3Title struct {
	title   Title
	stamp   string
	checked time.Time
}

func (c *s3Catalog) init() {
	c.mu.titles = make(map[string]*s3Title)
	c.mu.absent = make(map[string]time.Time)
}

// Catalog lists the published titles, checking for changes at most once
// per CatalogTTL. While another call is checking, it returns the catalog
// as last checked rather than wait. A title that cannot be checked keeps
// its last description; the catalog fails only if the titles cannot be
// listed.
func (s *S3) Catalog(ctx context.Context) ([]Title, error) {
	if !s.catalogFresh(time.Now()) {
		if err := s.checkAll(ctx, false, s.hasCatalog()); err != nil {
			return nil, err
		}
	}
	return s.sortedTitles(), nil
}

// Refresh lists and reads every title again now, whatever the stamps say.
func (s *S3) Refresh(ctx context.Context) error { return s.checkAll(ctx, true, false) }

// Title describes one published title, checking its strata.json if it was
// last checked more than CatalogTTL ago.
func (s *S3) Title(ctx context.Context, id string) (Title, error) {
	if err := ident.ValidName(id); err != nil {
		return Title{}, fmt.Errorf("origin: %w", err)
	}
	now := time.Now()
	if t, known, ok := s.freshTitle(id, now); ok {
		if !known {
			return Title{}, notFound("title " + id)
		}
		return t, nil
	}
	if err := ctx.Err(); err != nil {
		return Title{}, fmt.Errorf("origin: title %s: %w", id, err)
	}
	e := s.cachedTitle(id)
	if !s.lockScan(e != nil) {
		return e.title, nil // a check is running: serve what we have
	}
	defer s.cat.scan.Unlock()
	e, err := s.checkTitle(ctx, id, false, time.Now())
	if err != nil {
		return Title{}, err
	}
	return e.title, nil
}

// lockScan takes the scan lock, or returns false without it if skip is
// set and another check holds it.
func (s *S3) lockScan(skip bool) bool {
	if s.cat.scan.TryLock() {
		return true
	}
	if skip {
		return false
	}
	s.cat.scan.Lock()
	return true
}

// checkAll brings the whole catalog up to date; force rereads every
// title. With skip, it returns at once if another check is running.
func (s *S3) checkAll(ctx context.Context, force, skip bool) error {
	if !s.lockScan(skip) {
		return nil
	}
	defer s.cat.scan.Unlock()
	now := time.Now()
	if !force && s.catalogFresh(now) {
		return nil // another caller checked while we waited for the lock
	}
	ids, err := s.titleIDs(ctx)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.CatalogConcurrency)
	for _, id := range ids {
		g.Go(func() error {
			_, _ = s.checkTitle(gctx, id, force, now) // failures are logged
			return gctx.Err()
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("origin: catalog of %s: %w", s.opts.URL(), err)
	}
	s.keepOnly(ids, now)
	return nil
}

// titleIDs lists the title prefixes: "<prefix>/<id>/" for valid ids.
func (s *S3) titleIDs(ctx context.Context) ([]string, error) {
	base := s.key("")
	var ids []string
	err := s.retry.do(ctx, "list "+s.opts.URL(), func(ctx context.Context) error {
		ids = ids[:0]
		for obj := range s.client.ListObjects(ctx, s.opts.Bucket, minio.ListObjectsOptions{Prefix: base}) {
			if obj.Err != nil {
				return obj.Err
			}
			id, ok := strings.CutSuffix(strings.TrimPrefix(obj.Key, base), "/")
			if ok && ident.ValidName(id) == nil {
				ids = append(ids, id)
			}
		}
		return nil
	})
	return ids, err
}

// checkTitle rereads title id if force, if it is not cached or if its
// strata.json changed; otherwise it marks it checked. An unpublished
// title leaves the catalog. On other failures a cached title is kept as
// it was (and logged), so that a store that fails for a while does not
// empty the catalog.
func (s *S3) checkTitle(ctx context.Context, id string, force bool, now time.Time) (*s3Title, error) {
	e := s.cachedTitle(id)
	stamp, err := s.metaStamp(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		s.removeTitle(id, now)
		return nil, notFound("title " + id)
	case err != nil:
		return s.keepCached(ctx, e, id, err)
	case e != nil && !force && stamp == e.stamp:
		s.markChecked(e, now)
		return e, nil
	}
	e, err = s.scanTitle(ctx, id)
	if errors.Is(err, ErrNotFound) {
		s.removeTitle(id, now)
		return nil, err
	}
	if err != nil {
		return s.keepCached(ctx, s.cachedTitle(id), id, err)
	}
	s.storeTitle(id, e, now)
	return e, nil
}

// keepCached returns e, the cached title id that could not be checked,
// and err if there is none.
func (s *S3) keepCached(ctx context.Context, e *s3Title, id string, err error) (*s3Title, error) {
	if ctx.Err() == nil {
		s.log.Warn("origin: could not check a title of the bucket", "origin", s.opts.URL(), "title", id, "err", err)
	}
	if e == nil {
		return nil, err
	}
	return e, nil
}

// metaStamp returns the stamp of title id's strata.json: its ETag and
// modification time.
func (s *S3) metaStamp(ctx context.Context, id string) (string, error) {
	var stamp string
	key := s.key(id + "/" + metaFile)
	err := s.retry.do(ctx, "stat "+id+"/"+metaFile, func(ctx context.Context) error {
		info, err := s.client.StatObject(ctx, s.opts.Bucket, key, minio.StatObjectOptions{})
		stamp = info.ETag + " " + info.LastModified.UTC().Format(time.RFC3339Nano)
		return err
	})
	return stamp, err
}

// scanTitle reads title id: its strata.json first, then a listing of its
// objects, so that a title republished between the two is read again at
// the next check, its strata.json having changed.
func (s *S3) scanTitle(ctx context.Context, id string) (*s3Title, error) {
	meta, stamp, err := s.readMeta(ctx, id)
	if err != nil {
		return nil, err
	}
	t := Title{ID: id, SegmentDuration: s.opts.DefaultSegmentDuration.Seconds()}
	if err := s.listTitle(ctx, &t); err != nil {
		return nil, err
	}
	meta.apply(&t)
	sortTitle(&t)
	s.cat.scans.Add(1)
	return &s3Title{title: t, stamp: stamp}, nil
}

// readMeta reads title id's strata.json and returns it with its stamp. An
// invalid one is logged and ignored, as a Dir does.
func (s *S3) readMeta(ctx context.Context, id string) (titleMeta, string, error) {
	path := id + "/" + metaFile
	var data []byte
	var info minio.ObjectInfo
	err := s.retry.do(ctx, "get "+path, func(ctx context.Context) error {
		var err error
		data, info, err = s.readSmall(ctx, s.key(path), maxMetaSize)
		return err
	})
	if err != nil {
		return titleMeta{}, "", err
	}
	m, err := parseMeta(data)
	if err != nil {
		s.log.Warn("origin: ignoring a title's metadata", "origin", s.opts.URL(), "title", id, "err", err)
	}
	return m, info.ETag + " " + info.LastModified.UTC().Format(time.RFC3339Nano), nil
}

// readSmall is one GET of the whole object at key, of at most limit
// bytes.
func (s *S3) readSmall(ctx context.Context, key string, limit int64) ([]byte, minio.ObjectInfo, error) {
	body, info, _, err := s.core.GetObject(ctx, s.opts.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, info, err
	}
	defer body.Close()
	if info.Size > limit {
		return nil, info, fmt.Errorf("%w: %s is %d bytes, limit %d", ErrTooLarge, key, info.Size, limit)
	}
	data, err := readBody(body, info.Size)
	return data, info, err
}

// listTitle adds the objects under title t's prefix to t: <name> to its
// Files, <rendition>/<name> to a rendition (layout.go); and sets t's
// modification time, the latest of its objects'.
func (s *S3) listTitle(ctx context.Context, t *Title) error {
	base := s.key(t.ID + "/")
	return s.retry.do(ctx, "list "+t.ID, func(ctx context.Context) error {
		*t = Title{ID: t.ID, SegmentDuration: t.SegmentDuration}
		byID := make(map[string]int)
		opts := minio.ListObjectsOptions{Prefix: base, Recursive: true}
		for obj := range s.client.ListObjects(ctx, s.opts.Bucket, opts) {
			if obj.Err != nil {
				return obj.Err
			}
			addKey(t, byID, strings.TrimPrefix(obj.Key, base))
			if m := obj.LastModified.UTC(); m.After(t.Modified) {
				t.Modified = m
			}
		}
		return nil
	})
}

// addKey adds the object at rel, a path under its title, to t; byID
// indexes t's renditions.
func addKey(t *Title, byID map[string]int, rel string) {
	dir, name, nested := strings.Cut(rel, "/")
	switch {
	case !nested:
		if name := dir; name != metaFile && ident.ValidName(name) == nil {
			t.Files = append(t.Files, name)
		}
	case ident.ValidName(dir) != nil || strings.Contains(name, "/"):
	default:
		i, ok := byID[dir]
		if !ok {
			i = len(t.Renditions)
			byID[dir] = i
			t.Renditions = append(t.Renditions, Rendition{ID: dir, Bandwidth: inferBandwidth(dir)})
		}
		addName(&t.Renditions[i], name)
	}
}

func (s *S3) hasCatalog() bool {
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	return !s.cat.mu.checked.IsZero()
}

func (s *S3) catalogFresh(now time.Time) bool {
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	return !s.cat.mu.checked.IsZero() && now.Sub(s.cat.mu.checked) < s.opts.CatalogTTL
}

// freshTitle returns title id if it was checked within CatalogTTL, with
// known false if it was then found unpublished; ok is false if it must be
// checked.
func (s *S3) freshTitle(id string, now time.Time) (t Title, known, ok bool) {
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	if e := s.cat.mu.titles[id]; e != nil && now.Sub(e.checked) < s.opts.CatalogTTL {
		return e.title, true, true
	}
	if at, absent := s.cat.mu.absent[id]; absent && now.Sub(at) < s.opts.CatalogTTL {
		return Title{}, false, true
	}
	return Title{}, false, false
}

func (s *S3) cachedTitle(id string) *s3Title {
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	return s.cat.mu.titles[id]
}

func (s *S3) markChecked(e *s3Title, now time.Time) {
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	e.checked = now
}

func (s *S3) storeTitle(id string, e *s3Title, now time.Time) {
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	e.checked = now
	s.cat.mu.titles[id] = e
	delete(s.cat.mu.absent, id)
	s.cat.mu.sorted = nil
}

// removeTitle drops title id and remembers it absent at now.
func (s *S3) removeTitle(id string, now time.Time) {
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	if _, ok := s.cat.mu.titles[id]; ok {
		delete(s.cat.mu.titles, id)
		s.cat.mu.sorted = nil
	}
	if len(s.cat.mu.absent) >= maxAbsent {
		clear(s.cat.mu.absent)
	}
	s.cat.mu.absent[id] = now
}

// keepOnly drops the cached titles not in ids and marks the whole
// catalog checked at now.
func (s *S3) keepOnly(ids []string, now time.Time) {
	keep := make(map[string]bool, len(ids))
	for _, id := range ids {
		keep[id] = true
	}
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	for id := range s.cat.mu.titles {
		if !keep[id] {
			delete(s.cat.mu.titles, id)
			s.cat.mu.sorted = nil
		}
	}
	s.cat.mu.checked = now
}

// sortedTitles returns a copy of the catalog sorted by id, sorting it
// again only after a change.
func (s *S3) sortedTitles() []Title {
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	if s.cat.mu.sorted == nil {
		sorted := make([]Title, 0, len(s.cat.mu.titles))
		for _, e := range s.cat.mu.titles {
			sorted = append(sorted, e.title)
		}
		slices.SortFunc(sorted, func(a, b Title) int { return cmp.Compare(a.ID, b.ID) })
		s.cat.mu.sorted = sorted
	}
	return slices.Clone(s.cat.mu.sorted)
}
