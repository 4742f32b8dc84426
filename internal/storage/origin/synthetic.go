package origin

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/workload"
)

// SyntheticOptions configure NewSynthetic.
type SyntheticOptions struct {
	// Seed selects the content bytes and the modification time; the same
	// dataset and seed always give the same bytes.
	Seed uint64
}

// Synthetic is an Origin that generates a workload.Dataset's titles from
// their ids instead of storing them: media segments of the dataset's VBR
// sizes filled with deterministic pseudo-random bytes, and per title a
// DASH manifest.mpd and an HLS master.m3u8, per rendition a playlist.m3u8.
// It lets the tiers be benchmarked on FlashStream's 545 GB library (§5.1)
// without the disk space, and lets tests check served bytes with Verify
// instead of keeping a copy. A Synthetic is safe for concurrent use.
type Synthetic struct {
	ds       *workload.Dataset
	seed     uint64
	modified time.Time
	titles   []Title // sorted by ID
	byID     map[string]synthTitle
	stats    counters
}

// synthTitle is a title of the catalog and its source in the dataset.
type synthTitle struct {
	title *Title
	src   *workload.Title
}

var _ Origin = (*Synthetic)(nil)

// NewSynthetic serves the titles of d. Their ids (and rendition ids) must
// be valid names.
func NewSynthetic(d *workload.Dataset, opts SyntheticOptions) (*Synthetic, error) {
	s := &Synthetic{ds: d, seed: opts.Seed, modified: seedTime(opts.Seed), byID: make(map[string]synthTitle)}
	srcs := make([]*workload.Title, len(d.Titles))
	for i := range d.Titles {
		srcs[i] = &d.Titles[i]
	}
	slices.SortFunc(srcs, func(a, b *workload.Title) int { return cmp.Compare(a.ID, b.ID) })
	s.titles = make([]Title, len(srcs))
	for i, src := range srcs {
		t, err := s.catalogTitle(src)
		if err != nil {
			return nil, err
		}
		if _, dup := s.byID[t.ID]; dup {
			return nil, fmt.Errorf("origin: synthetic title %q appears twice", t.ID)
		}
		s.titles[i] = t
		s.byID[t.ID] = synthTitle{title: &s.titles[i], src: src}
	}
	return s, nil
}

// seedTime is the fixed modification time of every object: a whole second
// in 2020 chosen by the seed (whole, so HTTP dates round-trip).
func seedTime(seed uint64) time.Time {
	const year = 365 * 24 * 3600
	return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(mix64(seed)%year) * time.Second)
}

// catalogTitle describes a dataset title, checking its ids. Its
// renditions keep the dataset's order, so index i is the same rendition
// in both.
func (s *Synthetic) catalogTitle(src *workload.Title) (Title, error) {
	if err := ident.ValidName(src.ID); err != nil {
		return Title{}, fmt.Errorf("origin: synthetic title: %w", err)
	}
	t := Title{
		ID:              src.ID,
		SegmentDuration: s.ds.SegmentDuration.Seconds(),
		Files:           []string{dashManifestName, hlsMasterName},
		Modified:        s.modified,
		Synthetic:       true,
	}
	for _, r := range src.Renditions {
		if err := ident.ValidName(r.ID); err != nil {
			return Title{}, fmt.Errorf("origin: synthetic title %s: %w", src.ID, err)
		}
		t.Renditions = append(t.Renditions, Rendition{
			ID: r.ID, Bandwidth: r.Kbps * 1000, Segments: r.Segments, StartNumber: 1,
			Files: []string{hlsMediaName},
		})
	}
	return t, nil
}

// Catalog lists the dataset's titles, sorted by id.
func (s *Synthetic) Catalog(ctx context.Context) ([]Title, error) {
	return slices.Clone(s.titles), nil
}

// Title describes one title.
func (s *Synthetic) Title(ctx context.Context, id string) (Title, error) {
	t, ok := s.byID[id]
	if !ok {
		return Title{}, notFound("title " + id)
	}
	return *t.title, nil
}

// Stats returns the read counters.
func (s *Synthetic) Stats() Stats { return s.stats.load() }

// Modified is the modification time of every object.
func (s *Synthetic) Modified() time.Time { return s.modified }

// Get generates the object o.
func (s *Synthetic) Get(ctx context.Context, o ident.Object) (Object, error) {
	data, err := s.get(ctx, o)
	s.stats.record(len(data), err)
	if err != nil {
		return Object{}, err
	}
	return Object{Data: data, Modified: s.modified}, nil
}

func (s *Synthetic) get(ctx context.Context, o ident.Object) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("origin: get %s: %w", o, err)
	}
	return s.Expected(o)
}

// Expected returns the bytes Get serves for o, without counting a read.
func (s *Synthetic) Expected(o ident.Object) ([]byte, error) {
	r, err := s.resolve(o)
	if err != nil || r.text != nil {
		return r.text, err
	}
	data := make([]byte, r.size)
	fill(data, r.key, 0)
	return data, nil
}

// Verify reports whether data is exactly the object o, without
// allocating a copy of a segment.
func (s *Synthetic) Verify(o ident.Object, data []byte) bool {
	r, err := s.resolve(o)
	return err == nil && int64(len(data)) == r.len() && r.matches(data, 0)
}

// VerifyAt reports whether data is the part of object o that starts at
// byte off, as an HTTP range response carries it.
func (s *Synthetic) VerifyAt(o ident.Object, off int64, data []byte) bool {
	r, err := s.resolve(o)
	return err == nil && off >= 0 && off <= r.len()-int64(len(data)) && r.matches(data, off)
}

// resolved is what an object is: a generated text file, or a segment of
// size bytes generated from key.
type resolved struct {
	text []byte
	size int64
	key  uint64
}

func (r resolved) len() int64 {
	if r.text != nil {
		return int64(len(r.text))
	}
	return r.size
}

func (r resolved) matches(data []byte, off int64) bool {
	if r.text != nil {
		return bytes.Equal(r.text[off:off+int64(len(data))], data)
	}
	return matches(data, r.key, off)
}

// resolve finds what o is, or returns an error wrapping ErrNotFound (or
// ident.ErrInvalid).
func (s *Synthetic) resolve(o ident.Object) (resolved, error) {
	if err := validObject(o); err != nil {
		return resolved{}, err
	}
	t, ok := s.byID[o.Video]
	if !ok {
		return resolved{}, notFound("title " + o.Video)
	}
	if o.Rendition == "" {
		return s.titleFile(t, o)
	}
	return s.renditionFile(t, o)
}

func (s *Synthetic) titleFile(t synthTitle, o ident.Object) (resolved, error) {
	switch o.Name {
	case dashManifestName:
		return resolved{text: dashManifest(*t.title)}, nil
	case hlsMasterName:
		return resolved{text: hlsMaster(*t.title)}, nil
	}
	return resolved{}, notFound("object " + o.Path())
}

func (s *Synthetic) renditionFile(t synthTitle, o ident.Object) (resolved, error) {
	i := slices.IndexFunc(t.title.Renditions, func(r Rendition) bool { return r.ID == o.Rendition })
	if i < 0 {
		return resolved{}, notFound("object " + o.Path())
	}
	if o.Name == hlsMediaName {
		return resolved{text: hlsMedia(*t.title, t.title.Renditions[i])}, nil
	}
	n, ok := ident.SegmentNumber(o.Name)
	src := t.src.Renditions[i]
	if !ok || n < 1 || int(n) > src.Segments {
		return resolved{}, notFound("object " + o.Path())
	}
	size := s.ds.SegmentSize(t.src.ID, src, int(n))
	return resolved{size: size, key: objectKey(s.seed, o.Path())}, nil
}
