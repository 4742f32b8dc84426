package origin

import (
	"context"
	"time"

	"github.com/strata-media/strata/internal/ident"
)

// Timed returns org with every Get and GetRange timed: observe receives
// each read's duration, failed ones included (a metric of the capacity
// tier's latency as the server sees it). Reads of a range still use
// org's own ranged read when it has one.
func Timed(org Origin, observe func(time.Duration)) Origin {
	return &timed{Origin: org, observe: observe}
}

type timed struct {
	Origin
	observe func(time.Duration)
}

func (t *timed) Get(ctx context.Context, o ident.Object) (Object, error) {
	start := time.Now()
	obj, err := t.Origin.Get(ctx, o)
	t.observe(time.Since(start))
	return obj, err
}

func (t *timed) GetRange(ctx context.Context, o ident.Object, off, length int64) (Range, error) {
	start := time.Now()
	r, err := GetRange(ctx, t.Origin, o, off, length)
	t.observe(time.Since(start))
	return r, err
}
