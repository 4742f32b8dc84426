package origin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
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

// s3Catalog is an S3's cached catalog, and the ids of titles lately
// found unpublished, so that a Multi asking for them on every Get does
// not cost a HEAD each time.
type s3Catalog struct {
	titleCache[*s3Title]

	absent struct {
		sync.Mutex                      // protects ids
		ids        map[string]time.Time // when each was found unpublished
	}
}

// s3Title is a cached title and the stamp of the strata.json it was
// built from.
type s3Title struct {
	titleEntry
	stamp string
}

func (c *s3Catalog) init(ttl time.Duration) {
	c.titleCache.init(ttl)
	c.absent.ids = make(map[string]time.Time)
}

// isAbsent reports whether title id was found unpublished within ttl of
// now.
func (c *s3Catalog) isAbsent(id string, now time.Time) bool {
	c.absent.Lock()
	defer c.absent.Unlock()
	at, ok := c.absent.ids[id]
	return ok && now.Sub(at) < c.ttl
}

// markAbsent drops title id and remembers it unpublished at now.
func (c *s3Catalog) markAbsent(id string, now time.Time) {
	c.remove(id)
	c.absent.Lock()
	defer c.absent.Unlock()
	if len(c.absent.ids) >= maxAbsent {
		clear(c.absent.ids)
	}
	c.absent.ids[id] = now
}

// storePublished caches title id, published after all.
func (c *s3Catalog) storePublished(id string, e *s3Title, now time.Time) {
	c.store(id, e, now)
	c.absent.Lock()
	defer c.absent.Unlock()
	delete(c.absent.ids, id)
}

// Catalog lists the published titles, checking for changes at most once
// per CatalogTTL. While another call is checking, it returns the catalog
// as last checked rather than wait. A title that cannot be checked keeps
// its last description; the catalog fails only if the titles cannot be
// listed.
func (s *S3) Catalog(ctx context.Context) ([]Title, error) {
	if !s.cat.fresh(time.Now()) {
		if err := s.checkAll(ctx, false, s.cat.hasCatalog()); err != nil {
			return nil, err
		}
	}
	return s.cat.sortedTitles(), nil
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
	if t, ok := s.cat.freshTitle(id, now); ok {
		return t, nil
	}
	if s.cat.isAbsent(id, now) {
		return Title{}, notFound("title " + id)
	}
	if err := ctx.Err(); err != nil {
		return Title{}, fmt.Errorf("origin: title %s: %w", id, err)
	}
	e := s.cat.cached(id)
	if !s.cat.lockScan(e != nil) {
		return e.title, nil // a check is running: serve what we have
	}
	defer s.cat.scan.Unlock()
	e, err := s.checkTitle(ctx, id, false, time.Now())
	if err != nil {
		return Title{}, err
	}
	return e.title, nil
}

// checkAll brings the whole catalog up to date; force rereads every
// title. With skip, it returns at once if another check is running.
func (s *S3) checkAll(ctx context.Context, force, skip bool) error {
	now, ok := s.cat.beginCheck(force, skip)
	if !ok {
		return nil
	}
	defer s.cat.scan.Unlock()
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
	s.cat.keepOnly(ids, now)
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
// strata.json changed (one HEAD); otherwise it marks it checked. An
// unpublished title leaves the catalog. On other failures a cached title
// is kept as it was (and logged), so that a store that fails for a while
// does not empty the catalog.
func (s *S3) checkTitle(ctx context.Context, id string, force bool, now time.Time) (*s3Title, error) {
	e := s.cat.cached(id)
	if e != nil && !force {
		stamp, err := s.metaStamp(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			s.cat.markAbsent(id, now)
			return nil, notFound("title " + id)
		case err != nil:
			return s.keepCached(ctx, e, id, err)
		case stamp == e.stamp:
			s.cat.markChecked(e, now)
			return e, nil
		}
	}
	scanned, err := s.scanTitle(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		s.cat.markAbsent(id, now)
		return nil, notFound("title " + id)
	case err != nil:
		return s.keepCached(ctx, e, id, err)
	}
	s.cat.storePublished(id, scanned, now)
	return scanned, nil
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
	return &s3Title{titleEntry: titleEntry{title: t}, stamp: stamp}, nil
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
