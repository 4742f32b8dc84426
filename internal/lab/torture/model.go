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
	// mu protects cur, pending and hist: other workers read files while
	// their owner uploads them.
	mu sync.Mutex
	// cur is what the server acknowledged last (absent at first).
	cur int
	// pending is what an operation without an answer may have stored
	// (none when there is none); a kill leaves it set, and the check
	// after the restart accepts cur or pending, then settles on the one
	// it found.
	pending int
	// hist is every content an operation was sent with, in order: a read
	// that overlaps operations may find any of them.
	hist []int
}

// begin records an operation that may store n.
func (e *entry) begin(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pending = n
	e.hist = append(e.hist, n)
}

// settle records the answer to the operation begun: acknowledged (e holds
// its content) or refused (nothing changed).
func (e *entry) settle(acked bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if acked {
		e.cur = e.pending
	}
	e.pending = none
}

// current is what e holds, acknowledged.
func (e *entry) current() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur
}

// overlapping returns, for a read about to start, a function that gives
// the contents the read may find when it ends: what e held or had in
// flight at the start, and whatever an operation sent meanwhile.
func (e *entry) overlapping() func() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	before, mark := e.allowedLocked(), len(e.hist)
	return func() []int {
		e.mu.Lock()
		defer e.mu.Unlock()
		return append(slices.Clone(before), e.hist[mark:]...)
	}
}

// allowed are the contents the server may hold for e.
func (e *entry) allowed() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.allowedLocked()
}

func (e *entry) allowedLocked() []int {
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
