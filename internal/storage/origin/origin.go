// Package origin is Strata's capacity tier: where every object lives in
// full, read on a miss in RAM and flash. Backends: a directory of files
// (Dir), a synthetic library derived from ids (Synthetic), a router over
// several (Multi), and (later) an S3-compatible store.
package origin

import (
	"context"
	"errors"
	"time"

	"github.com/strata-media/strata/internal/ident"
)

// ErrNotFound reports an object or title the capacity tier does not hold.
var ErrNotFound = errors.New("origin: not found")

// An Origin is a capacity tier. Implementations are safe for concurrent use.
type Origin interface {
	// Get reads a whole object. It returns an error wrapping ErrNotFound
	// when the object does not exist.
	Get(ctx context.Context, o ident.Object) (Object, error)
	// Catalog lists the titles, sorted by ID. The returned slice is the
	// caller's, but the Renditions and Files slices of its titles may be
	// shared with the origin and must not be modified.
	Catalog(ctx context.Context) ([]Title, error)
	// Title describes one title, or returns an error wrapping ErrNotFound.
	// Its slices are shared as in Catalog.
	Title(ctx context.Context, id string) (Title, error)
	// Stats returns the origin's counters since it was created.
	Stats() Stats
}

// Stats counts an origin's Get calls, as the server reports them
// (origin.reads, origin.bytes).
type Stats struct {
	// Reads is the number of objects read successfully.
	Reads int64 `json:"reads"`
	// Bytes is the number of bytes those reads returned.
	Bytes int64 `json:"bytes"`
	// NotFound is the number of Gets that failed with ErrNotFound.
	NotFound int64 `json:"not_found"`
	// Errors is the number of Gets that failed otherwise (I/O errors,
	// invalid ids, cancelled contexts).
	Errors int64 `json:"errors"`
}

// Add returns the sum of two Stats.
func (s Stats) Add(o Stats) Stats {
	return Stats{s.Reads + o.Reads, s.Bytes + o.Bytes, s.NotFound + o.NotFound, s.Errors + o.Errors}
}

// An Object is an object's bytes and metadata.
type Object struct {
	Data     []byte
	Modified time.Time
}

// Title is a video in the catalog, as GET /videos reports it and strata
// bench reads it to build its workload.
type Title struct {
	ID string `json:"id"`
	// SegmentDuration is the play-out time of one media segment, in
	// seconds: a segment request misses its deadline when its response is
	// not complete within it (FlashStream §5.1).
	SegmentDuration float64     `json:"segment_duration_s"`
	Renditions      []Rendition `json:"renditions"`
	// Files are the title's own files (manifest.mpd, master.m3u8).
	Files    []string  `json:"files,omitempty"`
	Modified time.Time `json:"modified"`
	// Synthetic marks titles whose bytes are generated, not playable.
	Synthetic bool `json:"synthetic,omitempty"`
}

// Rendition is one encoding of a title.
type Rendition struct {
	ID string `json:"id"`
	// Bandwidth is the nominal bitrate in bits per second, 0 if unknown.
	Bandwidth int `json:"bandwidth"`
	// Segments is the number of media segments, named "<n>.m4s" for n in
	// StartNumber .. StartNumber+Segments-1. A directory may have gaps:
	// Segments then counts the files present and StartNumber is the lowest
	// number (0 when there are none).
	Segments    int `json:"segments"`
	StartNumber int `json:"start_number"`
	// Files are the rendition's other files (init.mp4, playlist.m3u8).
	Files []string `json:"files,omitempty"`
}

// SegmentCount is the number of media segments of all renditions.
func (t Title) SegmentCount() int {
	n := 0
	for _, r := range t.Renditions {
		n += r.Segments
	}
	return n
}
