package tier

import (
	"slices"
	"strings"
)

// A Token is the invalidation epoch observed by a lookup. A segment read
// from the capacity tier after a miss is inserted with the lookup's token,
// and refused if its key was invalidated in between: its bytes may be the
// old version's.
type Token uint64

// recentCap bounds the invalidations remembered for token checks; an
// insertion with an older token is refused.
const recentCap = 4096

type recentInvalidation struct {
	prefix string
	epoch  Token
}

// invalidations is the table of invalidated key prefixes. A record on
// flash whose segment generation is below its prefix's entry is dead. The
// table is persisted in the metadata blocks, so an invalidated segment is not
// resurrected by a recovery scan.
type invalidations struct {
	table  map[string]uint64 // prefix -> generation of the invalidation
	epoch  Token
	recent []recentInvalidation
}

func newInvalidations() *invalidations {
	return &invalidations{table: make(map[string]uint64)}
}

// matchPrefixes calls fn with each prefix of key an invalidation may name:
// "" (everything), each prefix ending in '/', and key itself.
func matchPrefixes(key string, fn func(prefix string)) {
	fn("")
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			fn(key[:i+1])
		}
	}
	if !strings.HasSuffix(key, "/") {
		fn(key)
	}
}

// covers reports whether an invalidation of prefix applies to key.
func covers(prefix, key string) bool {
	return prefix == key || (strings.HasPrefix(key, prefix) && (prefix == "" || strings.HasSuffix(prefix, "/")))
}

// deadBelow returns the generation below which records of key are dead,
// 0 when key was never invalidated.
func (v *invalidations) deadBelow(key string) uint64 {
	var g uint64
	matchPrefixes(key, func(p string) {
		if e, ok := v.table[p]; ok && e > g {
			g = e
		}
	})
	return g
}

// dead reports whether a segment of key written at segGen is invalidated.
func (v *invalidations) dead(key string, segGen uint64) bool {
	return segGen < v.deadBelow(key)
}

// add records the invalidation of prefix at generation gen.
func (v *invalidations) add(prefix string, gen uint64) {
	v.table[prefix] = max(v.table[prefix], gen)
	v.epoch++
	v.recent = append(v.recent, recentInvalidation{prefix: prefix, epoch: v.epoch})
	if len(v.recent) > recentCap {
		v.recent = slices.Delete(v.recent, 0, len(v.recent)-recentCap)
	}
}

// since reports whether key was invalidated after the lookup that returned t.
func (v *invalidations) since(key string, t Token) bool {
	if t == v.epoch {
		return false
	}
	if len(v.recent) == 0 || v.recent[0].epoch > t+1 {
		return true // older than what is remembered: refuse to be safe
	}
	for _, r := range v.recent {
		if r.epoch > t && covers(r.prefix, key) {
			return true
		}
	}
	return false
}

// content is what one block write put on the device: its generation and
// keys. Pruning the table must consider every content still readable by a
// recovery scan, including blocks freed but not yet overwritten.
type content struct {
	gen  uint64
	keys []string
}

// prune drops the entries no readable content needs: an entry is needed
// while some content older than it holds a key it covers.
func (v *invalidations) prune(contents func(yield func(content) bool)) {
	for p, g := range v.table {
		needed := false
		contents(func(c content) bool {
			if c.gen < g && slices.ContainsFunc(c.keys, func(k string) bool { return covers(p, k) }) {
				needed = true
			}
			return !needed
		})
		if !needed {
			delete(v.table, p)
		}
	}
}

// list returns the table sorted by prefix, fitting capacity bytes when
// encoded. A table that does not fit collapses into one entry for
// everything at the newest generation: recovery then drops every older
// record, which loses cached copies but never resurrects one.
func (v *invalidations) list(capacity int64) []Invalidation {
	out := make([]Invalidation, 0, len(v.table))
	var newest uint64
	for p, g := range v.table {
		out = append(out, Invalidation{Prefix: p, Gen: g})
		newest = max(newest, g)
	}
	slices.SortFunc(out, func(a, b Invalidation) int { return strings.Compare(a.Prefix, b.Prefix) })
	if int64(tableLen(out)) > capacity {
		v.table = map[string]uint64{"": newest}
		out = []Invalidation{{Prefix: "", Gen: newest}}
	}
	return out
}
