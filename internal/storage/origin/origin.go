// Package origin is Strata's capacity tier: where every object lives in
// full, read on a miss in RAM and flash. Backends: a directory of files
// (Dir), a bucket of an S3-compatible object store (S3), a synthetic
// library derived from ids (Synthetic), and a router over several (Multi).
package origin

import (
	"context"
	"errors"
	"time"

	"github.com/strata-media/strata/internal/ident"
)

// ErrNotFound reports an object or title the capacity tier does not hold.
var ErrNotFound = errors.New("origin: not found")

// Errors of a remote capacity tier (S3), for the HTTP layer to answer
// with the status each names. Nothing that failed with one of them may be
// cached.
var (
	// ErrUpstream reports a bad answer from the store: a server error
	// that persisted through the retries, a refusal (access denied, no
	// such bucket), a truncated or malformed response. HTTP 502.
	ErrUpstream = errors.New("origin: bad answer from the object store")
	// ErrUnavailable reports a store that cannot be reached (connection
	// refused or reset, name resolution failed) or that asks clients to
	// slow down (503 Slow Down, 429). HTTP 503.
	ErrUnavailable = errors.New("origin: object store unavailable")
	// ErrTimeout reports a request to the store that did not complete
	// within its timeout, or a gateway timeout from the store. HTTP 504.
	ErrTimeout = errors.New("origin: object store timed out")
	// ErrInvalidRange reports a ranged read that starts past the end of
	// the object. HTTP 416.
	ErrInvalidRange = errors.New("origin: range not satisfiable")
)

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

// A RangeReader is an Origin that can read part of an object without
// reading the rest: S3 sends a ranged GET. The HTTP layer uses it for
// Range requests of objects too large to read whole (MaxObjectSize).
type RangeReader interface {
	// GetRange reads length bytes of o from offset off, or to the end
	// of the object if length is negative or reaches past it. It returns
	// an error wrapping ErrNotFound if o does not exist, and ErrInvalidRange
	// if off is at or past its end (an empty object has no satisfiable
	// range).
	GetRange(ctx context.Context, o ident.Object, off, length int64) (Range, error)
}

// A Range is part of an object.
type Range struct {
	// Data are the bytes from Offset on.
	Data []byte
	// Offset is where Data starts in the object.
	Offset int64
	// Size is the size of the whole object, bytes.
	Size int64
	// Modified is the object's modification time.
	Modified time.Time
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
