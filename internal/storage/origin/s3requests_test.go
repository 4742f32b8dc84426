package origin

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/s3test"
)

// The requests an S3 origin sends a real store (versitygw) are counted by
// kind: a catalog is listings (and the titles' metadata GETs), a read one
// GET, a ranged read one GET, an empty range a HEAD, a missing object a
// failed GET, a bucket check a HEAD.
func TestS3Requests(t *testing.T) {
	srv := s3test.Start(t)
	root := t.TempDir()
	packagedTitle(t, root, "bbb", 2)
	opts := s3Options(srv, "count", nil)
	if _, err := newTestWriter(t, opts).PutTitle(context.Background(), filepath.Join(root, "bbb"), "bbb", nil); err != nil {
		t.Fatal(err)
	}
	s := newTestS3(t, opts)
	ctx := context.Background()
	if got := s.Requests(); got != (S3Requests{}) {
		t.Fatalf("a new origin counts %+v", got)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Catalog(ctx); err != nil {
		t.Fatal(err)
	}
	afterCatalog := s.Requests()
	if afterCatalog.List == 0 || afterCatalog.Head != 1 || afterCatalog.Failed != 0 || afterCatalog.Other != 0 {
		t.Fatalf("after a bucket check and a catalog: %+v", afterCatalog)
	}
	seg := ident.Object{Video: "bbb", Rendition: "hd", Name: "1.m4s"}
	steps := []struct {
		name string
		read func() error
		want S3Requests // added by the read
	}{
		{"get", func() error { _, err := s.Get(ctx, seg); return err }, S3Requests{Get: 1}},
		{"range", func() error { _, err := s.GetRange(ctx, seg, 10, 20); return err }, S3Requests{Get: 1}},
		{"empty range", func() error { _, err := s.GetRange(ctx, seg, 10, 0); return err }, S3Requests{Head: 1}},
		{"missing", func() error {
			_, err := s.Get(ctx, ident.Object{Video: "bbb", Rendition: "hd", Name: "9.m4s"})
			if err == nil {
				t.Fatal("a missing object was read")
			}
			return nil
		}, S3Requests{Get: 1, Failed: 1}},
	}
	for _, st := range steps {
		before := s.Requests()
		if err := st.read(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		after := s.Requests()
		added := S3Requests{Get: after.Get - before.Get, Head: after.Head - before.Head, List: after.List - before.List,
			Other: after.Other - before.Other, Failed: after.Failed - before.Failed}
		if added != st.want {
			t.Fatalf("%s sent %+v, want %+v", st.name, added, st.want)
		}
	}
	if total := s.Requests().Total(); total != afterCatalog.Total()+4 {
		t.Fatalf("total %d", total)
	}
}
