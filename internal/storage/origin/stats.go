package origin

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/strata-media/strata/internal/ident"
)

// counters are an origin's Stats, updated atomically by concurrent Gets.
type counters struct {
	reads, bytes, notFound, errors atomic.Int64
}

// record counts one Get that returned n bytes and err.
func (c *counters) record(n int, err error) {
	switch {
	case err == nil:
		c.reads.Add(1)
		c.bytes.Add(int64(n))
	case errors.Is(err, ErrNotFound):
		c.notFound.Add(1)
	default:
		c.errors.Add(1)
	}
}

// load returns a snapshot of the counters.
func (c *counters) load() Stats {
	return Stats{Reads: c.reads.Load(), Bytes: c.bytes.Load(), NotFound: c.notFound.Load(), Errors: c.errors.Load()}
}

// validObject checks every component of o, so that no backend builds a
// file name or key from an unchecked id.
func validObject(o ident.Object) error {
	if err := ident.ValidName(o.Video); err != nil {
		return fmt.Errorf("origin: %w", err)
	}
	if o.Rendition != "" {
		if err := ident.ValidName(o.Rendition); err != nil {
			return fmt.Errorf("origin: %w", err)
		}
	}
	if err := ident.ValidName(o.Name); err != nil {
		return fmt.Errorf("origin: %w", err)
	}
	return nil
}

// notFound returns an error wrapping ErrNotFound for what ("object
// v/r/n", "title v").
func notFound(what string) error {
	return fmt.Errorf("%w: %s", ErrNotFound, what)
}
