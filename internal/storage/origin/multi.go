package origin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/strata-media/strata/internal/ident"
)

// Multi is an Origin that routes by title over several backends: a title
// belongs to the first backend, in order, that has it, and every object of
// the title is read from that backend alone. Its catalog is the union of
// the backends' (the first backend wins when ids clash), sorted by id. A
// Multi is safe for concurrent use if its backends are.
type Multi struct {
	backends []Origin
	own      counters // Gets that failed before reaching a backend
}

var (
	_ Origin      = (*Multi)(nil)
	_ RangeReader = (*Multi)(nil)
)

// NewMulti routes over backends, in order of precedence.
func NewMulti(backends ...Origin) *Multi {
	return &Multi{backends: slices.Clone(backends)}
}

// Backends returns the backends, in order of precedence.
func (m *Multi) Backends() []Origin { return slices.Clone(m.backends) }

// Get reads o from the first backend that has its title.
func (m *Multi) Get(ctx context.Context, o ident.Object) (Object, error) {
	b, err := m.route(ctx, o)
	if err != nil {
		m.own.record(0, err)
		return Object{}, err
	}
	return b.Get(ctx, o)
}

// GetRange reads part of o from the first backend that has its title,
// with a ranged read where the backend has one (see GetRange).
func (m *Multi) GetRange(ctx context.Context, o ident.Object, off, length int64) (Range, error) {
	b, err := m.route(ctx, o)
	if err != nil {
		m.own.record(0, err)
		return Range{}, err
	}
	return GetRange(ctx, b, o, off, length)
}

// route returns the first backend that has o's title.
func (m *Multi) route(ctx context.Context, o ident.Object) (Origin, error) {
	if err := validObject(o); err != nil {
		return nil, err
	}
	for _, b := range m.backends {
		_, err := b.Title(ctx, o.Video)
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return nil, err
		}
	}
	return nil, notFound("title " + o.Video)
}

// Title describes title id as the first backend that has it does.
func (m *Multi) Title(ctx context.Context, id string) (Title, error) {
	for _, b := range m.backends {
		t, err := b.Title(ctx, id)
		if !errors.Is(err, ErrNotFound) {
			return t, err
		}
	}
	return Title{}, notFound("title " + id)
}

// Catalog is the union of the backends' catalogs, sorted by id; a title
// several backends have is described by the first.
func (m *Multi) Catalog(ctx context.Context) ([]Title, error) {
	var all []Title
	seen := make(map[string]bool)
	for i, b := range m.backends {
		ts, err := b.Catalog(ctx)
		if err != nil {
			return nil, fmt.Errorf("origin: catalog of backend %d: %w", i, err)
		}
		for _, t := range ts {
			if !seen[t.ID] {
				seen[t.ID] = true
				all = append(all, t)
			}
		}
	}
	slices.SortFunc(all, func(a, b Title) int { return cmp.Compare(a.ID, b.ID) })
	return all, nil
}

// Stats sums the backends' counters and the Gets that reached none of
// them (titles no backend has, invalid ids).
func (m *Multi) Stats() Stats {
	s := m.own.load()
	for _, b := range m.backends {
		s = s.Add(b.Stats())
	}
	return s
}

// Close closes the backends that are io.Closers.
func (m *Multi) Close() error {
	var errs []error
	for _, b := range m.backends {
		if c, ok := b.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}
