package origin

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// titleCache is the cached catalog of a Dir or an S3: the titles as last
// scanned, each with when it was last found unchanged, and when the whole
// catalog was. The backend says what a title was built from (a Dir's
// directory stamps, an S3's strata.json stamp) and how to check it; the
// cache holds the entries, their freshness (ttl) and the sorted list.
// Checks, which do I/O without holding mu, are serialized by scan.
type titleCache[E cacheEntry] struct {
	ttl   time.Duration
	scan  sync.Mutex   // serializes checks
	scans atomic.Int64 // title scans so far, for tests

	mu struct {
		sync.Mutex // protects the fields below and the entries' checked
		titles     map[string]E
		sorted     []Title   // the catalog; nil when titles changed since it was built
		checked    time.Time // when every title was last checked; zero forces a check
	}
}

// A cacheEntry is a backend's cached title: a pointer to a struct
// embedding titleEntry.
type cacheEntry interface {
	comparable
	entry() *titleEntry
}

// titleEntry is what every cached title has. Only checked changes after
// the entry is stored (under the cache's mu); a rescan stores a new one.
type titleEntry struct {
	title   Title
	checked time.Time // when the title was last found unchanged
}

func (e *titleEntry) entry() *titleEntry { return e }

func (c *titleCache[E]) init(ttl time.Duration) {
	c.ttl = ttl
	c.mu.titles = make(map[string]E)
}

// lockScan takes the scan lock, or returns false without it if skip is
// set and another check holds it.
func (c *titleCache[E]) lockScan(skip bool) bool {
	if c.scan.TryLock() {
		return true
	}
	if skip {
		return false
	}
	c.scan.Lock()
	return true
}

// beginCheck takes the scan lock for a check of the whole catalog and
// returns the check's time; or it returns false, without the lock, if no
// check is needed: with skip while another runs, or unless force when
// another caller checked while this one waited for the lock.
func (c *titleCache[E]) beginCheck(force, skip bool) (time.Time, bool) {
	if !c.lockScan(skip) {
		return time.Time{}, false
	}
	now := time.Now()
	if !force && c.fresh(now) {
		c.scan.Unlock()
		return now, false
	}
	return now, true
}

// hasCatalog reports whether the whole catalog was ever checked.
func (c *titleCache[E]) hasCatalog() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.mu.checked.IsZero()
}

// fresh reports whether the whole catalog was checked within ttl of now.
func (c *titleCache[E]) fresh(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.mu.checked.IsZero() && now.Sub(c.mu.checked) < c.ttl
}

// freshTitle returns title id if it was checked within ttl of now.
func (c *titleCache[E]) freshTitle(id string, now time.Time) (Title, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.mu.titles[id]
	if !ok || now.Sub(e.entry().checked) >= c.ttl {
		return Title{}, false
	}
	return e.entry().title, true
}

// cached returns the entry of title id, or the zero E (nil).
func (c *titleCache[E]) cached(id string) E {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.titles[id]
}

// ids returns the cached titles' ids, if the whole catalog was checked.
func (c *titleCache[E]) ids() ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.checked.IsZero() {
		return nil, false
	}
	ids := make([]string, 0, len(c.mu.titles))
	for id := range c.mu.titles {
		ids = append(ids, id)
	}
	return ids, true
}

func (c *titleCache[E]) markChecked(e E, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.entry().checked = now
}

// store caches e as title id, checked at now.
func (c *titleCache[E]) store(id string, e E, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.entry().checked = now
	c.mu.titles[id] = e
	c.mu.sorted = nil
}

func (c *titleCache[E]) remove(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.mu.titles[id]; ok {
		delete(c.mu.titles, id)
		c.mu.sorted = nil
	}
}

// keepOnly drops the cached titles not in ids and marks the whole
// catalog checked at now.
func (c *titleCache[E]) keepOnly(ids []string, now time.Time) {
	keep := make(map[string]bool, len(ids))
	for _, id := range ids {
		keep[id] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.mu.titles {
		if !keep[id] {
			delete(c.mu.titles, id)
			c.mu.sorted = nil
		}
	}
	c.mu.checked = now
}

// sortedTitles returns a copy of the catalog sorted by id, sorting it
// again only after a change.
func (c *titleCache[E]) sortedTitles() []Title {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.sorted == nil {
		sorted := make([]Title, 0, len(c.mu.titles))
		for _, e := range c.mu.titles {
			sorted = append(sorted, e.entry().title)
		}
		slices.SortFunc(sorted, func(a, b Title) int { return cmp.Compare(a.ID, b.ID) })
		c.mu.sorted = sorted
	}
	return slices.Clone(c.mu.sorted)
}
