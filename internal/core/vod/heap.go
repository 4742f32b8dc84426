package vod

// indexHeap is a binary heap of items that know their own position, so an
// item can be fixed or removed in O(log n) when its key changes. less
// orders the heap; pos returns the item's slot index field.
type indexHeap[T any] struct {
	items []T
	less  func(a, b T) bool
	pos   func(T) *int
}

// Len is the number of items.
func (h *indexHeap[T]) Len() int { return len(h.items) }

// Top returns the first item; the heap must not be empty.
func (h *indexHeap[T]) Top() T { return h.items[0] }

// Push adds x.
func (h *indexHeap[T]) Push(x T) {
	h.items = append(h.items, x)
	*h.pos(x) = len(h.items) - 1
	h.up(len(h.items) - 1)
}

// Remove takes x out of the heap; x must be in it.
func (h *indexHeap[T]) Remove(x T) {
	i := *h.pos(x)
	last := len(h.items) - 1
	h.swap(i, last)
	h.items = h.items[:last]
	*h.pos(x) = -1
	if i < last {
		h.Fix(h.items[i])
	}
}

// Fix restores the order after x's key changed.
func (h *indexHeap[T]) Fix(x T) {
	i := *h.pos(x)
	if !h.down(i) {
		h.up(i)
	}
}

func (h *indexHeap[T]) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	*h.pos(h.items[i]) = i
	*h.pos(h.items[j]) = j
}

func (h *indexHeap[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down sifts item i down and reports whether it moved.
func (h *indexHeap[T]) down(i int) bool {
	start, n := i, len(h.items)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h.less(h.items[r], h.items[c]) {
			c = r
		}
		if !h.less(h.items[c], h.items[i]) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > start
}

// Sorted returns the items in heap order without changing the heap.
func (h *indexHeap[T]) Sorted() []T {
	c := indexHeap[T]{items: append([]T(nil), h.items...), less: h.less, pos: func(T) *int { return new(int) }}
	// pos is a scratch slot: positions in the copy are not recorded.
	out := make([]T, 0, len(c.items))
	for len(c.items) > 0 {
		out = append(out, c.items[0])
		last := len(c.items) - 1
		c.items[0] = c.items[last]
		c.items = c.items[:last]
		c.down(0)
	}
	return out
}
