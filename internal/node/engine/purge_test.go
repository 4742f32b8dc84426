package engine

import (
	"context"
	"log/slog"
	"testing"

	"github.com/strata-media/strata/internal/core/tier"
)

// Purge says how many objects and bytes it dropped: those under the
// prefix only, once.
func TestPurgeCounts(t *testing.T) {
	e, err := New(Options{Tier: tier.Options{RAMBytes: 8 << 20}, Logger: slog.New(slog.DiscardHandler)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for key, n := range map[string]int{"p/a/1": 100, "p/a/2": 250, "p/b/1": 7} {
		if _, err := e.GetWith(context.Background(), key, func(context.Context) ([]byte, error) { return make([]byte, n), nil }); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		prefix string
		want   tier.Dropped
	}{{"p/a/", tier.Dropped{Objects: 2, Bytes: 350}}, {"p/a/", tier.Dropped{}}, {"p/b/1", tier.Dropped{Objects: 1, Bytes: 7}}} {
		if d, err := e.Purge(c.prefix); err != nil || d != c.want {
			t.Errorf("Purge(%q) = %+v, %v; want %+v", c.prefix, d, err, c.want)
		}
	}
}
