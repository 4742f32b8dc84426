package media

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// A process that dies between exchanging a title and invalidating the old
// version's cached objects (here: the invalidation fails, as if the
// process were killed before it) leaves a marker, and the next start
// invalidates the title. Without it, flash kept serving the old version's
// segments beside the new one's after a kill -9 (found by the crash torture).
func TestReplacementInterruptedIsInvalidatedAtStart(t *testing.T) {
	root := t.TempDir()
	var inv []string
	failing := true
	opts := IngestOptions{Options: testOptions(t), Invalidate: func(v string) error {
		if failing {
			return errors.New("killed")
		}
		inv = append(inv, v)
		return nil
	}}
	g := NewIngester(root, opts)
	in := []Input{{Name: "a", Path: testVideo(t, "nob-200k.mp4")}}
	if _, err := g.Ingest(context.Background(), "movie", in); err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(rootEntries(t, root), func(n string) bool { return strings.HasPrefix(n, replacingPrefix) }) {
		t.Fatal("a new title left a replacement marker")
	}
	if _, err := g.Ingest(context.Background(), "movie", in); err == nil {
		t.Fatal("the replacement reported success without its invalidation")
	}

	failing = false
	restarted := NewIngester(root, opts)
	ids, err := restarted.RecoverReplacements()
	if err != nil || !slices.Equal(ids, []string{"movie"}) || !slices.Equal(inv, []string{"movie"}) {
		t.Fatalf("recovered %v, invalidated %v: %v; want movie", ids, inv, err)
	}
	if got := strings.Join(rootEntries(t, root), ","); got != "movie" {
		t.Fatalf("root holds %s after the recovery", got)
	}
	if ids, _ := restarted.RecoverReplacements(); len(ids) != 0 {
		t.Fatalf("the marker survived its recovery: %v", ids)
	}
}
