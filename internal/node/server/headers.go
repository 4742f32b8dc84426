package server

import (
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
)

// Header values of the object path, built once and shared by every
// response: a RAM hit of a small segment costs little more than its
// per-request overhead, and each h.Set allocates a []string and each
// fmt.Sprintf formats again. The slices are cut to their length
// (cap == len) so that a wrapper's Header().Add appends to a copy, never
// into a value shared by other responses; nothing in the server writes
// into a header value in place.
type headerCache struct {
	segment, manifest []string // Cache-Control
	types             sync.Map // extension (lower case) -> []string Content-Type
	modified          sync.Map // time.Time -> []string Last-Modified
	modifiedN         int      // entries in modified, under modifiedMu
	modifiedMu        sync.Mutex
}

// maxModified bounds the Last-Modified cache: one entry per title version
// seen; past it the cache starts over (titles are few, versions fewer).
const maxModified = 4096

func newHeaderCache(opts Options) headerCache {
	return headerCache{
		segment:  one("public, max-age=" + strconv.Itoa(int(opts.SegmentMaxAge.Seconds()))),
		manifest: one("public, max-age=" + strconv.Itoa(int(opts.ManifestMaxAge.Seconds()))),
	}
}

// one is a header value of one element, with no room to append into.
func one(v string) []string { return []string{v}[:1:1] }

var (
	acceptRanges = one("bytes")
	tierHeaders  = map[tier.Tier][]string{tier.RAM: one(tierName(tier.RAM)), tier.SSD: one(tierName(tier.SSD)), tier.Miss: one(tierName(tier.Miss))}
)

// tierHeader is the X-Strata-Tier value of t.
func tierHeader(t tier.Tier) []string {
	if v, ok := tierHeaders[t]; ok {
		return v
	}
	return one(tierName(t))
}

// cacheControl is the Cache-Control value of an object: manifests,
// playlists and JSON for ManifestMaxAge, the rest for SegmentMaxAge.
func (c *headerCache) cacheControl(name string) []string {
	switch strings.ToLower(path.Ext(name)) {
	case ".mpd", ".m3u8", ".json":
		return c.manifest
	}
	return c.segment
}

// contentType is httpapi.ContentType(name) as a header value.
func (c *headerCache) contentType(name string) []string {
	ext := path.Ext(name)
	if v, ok := c.types.Load(ext); ok {
		return v.([]string)
	}
	v := one(httpapi.ContentType(name))
	if len(ext) <= 8 { // bounded: only short extensions are kept
		if n := countUpTo(&c.types, 256); n < 256 {
			c.types.Store(ext, v)
		}
	}
	return v
}

// lastModified is the Last-Modified value of a title modified at t, nil
// for the zero time.
func (c *headerCache) lastModified(t time.Time) []string {
	if t.IsZero() {
		return nil
	}
	t = t.UTC().Truncate(time.Second) // the format's resolution: one key per value
	if v, ok := c.modified.Load(t); ok {
		return v.([]string)
	}
	v := one(t.Format(http.TimeFormat))
	c.modifiedMu.Lock()
	if c.modifiedN >= maxModified {
		c.modified.Clear()
		c.modifiedN = 0
	}
	if _, loaded := c.modified.LoadOrStore(t, v); !loaded {
		c.modifiedN++
	}
	c.modifiedMu.Unlock()
	return v
}

// countUpTo counts m's entries, stopping at limit.
func countUpTo(m *sync.Map, limit int) int {
	n := 0
	m.Range(func(any, any) bool { n++; return n < limit })
	return n
}
