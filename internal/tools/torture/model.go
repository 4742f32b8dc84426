package torture

import (
	"fmt"
	"slices"
	"sync"
)

// A kind is a kind of stored object the torture uploads.
type kind int

const (
	kindFile kind = iota
	kindImage
	kindVideo
)

func (k kind) String() string { return [...]string{"file", "image", "video"}[k] }

// Content values of an entry: an index into the sources of its kind, or
// absent; none marks an entry with no operation in flight.
const (
	absent = -1
	none   = -2
)

// An entry is what the server must hold for one id. Each entry belongs to
// one worker, which runs one operation on it at a time, so that what the
// server acknowledged is known exactly.
type entry struct {
	kind kind
	id   string
	// cur is what the server acknowledged last (absent at first).
	cur int
	// pending is what an operation without an answer may have stored
	// (none when there is none); a kill leaves it set, and the check
	// after the restart accepts cur or pending, then settles on the one
	// it found.
	pending int
}

// allowed are the contents the server may hold for e.
func (e *entry) allowed() []int {
	if e.pending == none || e.pending == e.cur {
		return []int{e.cur}
	}
	return []int{e.cur, e.pending}
}

func (e *entry) String() string { return fmt.Sprintf("%s %s", e.kind, e.id) }

// The model is every entry, by worker, and the reference bytes learned
// from the server of derived objects (packaged videos, image variants).
type model struct {
	owned [][]*entry // by worker
	refs  []*entry   // the reference titles, never changed after setup
	// videoRef is, per video source, the hash of every file of its
	// packaged title by path in the title (learned before any kill;
	// packaging is deterministic, so every upload of the source must
	// serve these bytes).
	videoRef []map[string]string
	mu       struct {
		sync.Mutex
		// variants is the hash of each image source's variants by name,
		// set at the first read: a variant never changes afterwards.
		variants map[string]string
	}
}

// Ids each worker owns, by kind.
const (
	filesPerWorker  = 4
	imagesPerWorker = 3
	videosPerWorker = 2
)

func newModel(workers int) *model {
	m := &model{owned: make([][]*entry, workers)}
	m.mu.variants = map[string]string{}
	for w := range workers {
		add := func(k kind, n int, prefix string) {
			for i := range n {
				m.owned[w] = append(m.owned[w], &entry{kind: k, id: fmt.Sprintf("%s%d-%d", prefix, w, i), cur: absent, pending: none})
			}
		}
		add(kindFile, filesPerWorker, "f")
		add(kindImage, imagesPerWorker, "i")
		add(kindVideo, videosPerWorker, "v")
	}
	return m
}

// pick returns one of worker w's entries of kind k.
func (m *model) pick(w int, k kind, n int) *entry {
	var of []*entry
	for _, e := range m.owned[w] {
		if e.kind == k {
			of = append(of, e)
		}
	}
	return of[n%len(of)]
}

func (m *model) all() []*entry { return slices.Concat(m.owned...) }

// variant checks the hash of image source src's variant name against
// the first one seen.
func (m *model) variant(src int, name, h string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := fmt.Sprintf("%d/%s", src, name)
	if old, ok := m.mu.variants[key]; ok {
		return old == h
	}
	m.mu.variants[key] = h
	return true
}
