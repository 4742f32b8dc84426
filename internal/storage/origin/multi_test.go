package origin

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/strata-media/strata/internal/ident"
)

// newTestMulti routes over a Dir holding "aaa" and "title-0001" (which
// the Synthetic also has), then a Synthetic.
func newTestMulti(t *testing.T) (*Multi, *Dir, *Synthetic) {
	root := t.TempDir()
	writeFile(t, root, "aaa/700k/1.m4s", []byte("aaa"))
	writeFile(t, root, "title-0001/700k/1.m4s", []byte("from dir"))
	d := newTestDir(t, root, DirOptions{})
	s := newTestSynthetic(t, 1)
	return NewMulti(d, s), d, s
}

func TestMultiCatalog(t *testing.T) {
	m, _, s := newTestMulti(t)
	cat, err := m.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	syn, _ := s.Catalog(context.Background())
	want := []string{"aaa"}
	for _, title := range syn {
		want = append(want, title.ID)
	}
	if !reflect.DeepEqual(ids(cat), want) {
		t.Fatalf("titles %v, want %v", ids(cat), want)
	}
	if cat[2].ID != "title-0001" || cat[2].Synthetic || cat[3].ID != "title-0002" || !cat[3].Synthetic {
		t.Errorf("clash not won by the first backend: %+v %+v", cat[2], cat[3])
	}
	for _, id := range []string{"title-0001", "title-0002"} {
		title, err := m.Title(context.Background(), id)
		if err != nil || title.Synthetic != (id == "title-0002") {
			t.Errorf("Title(%s) = %+v, %v", id, title, err)
		}
	}
	if _, err := m.Title(context.Background(), "zzz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Title(zzz) = %v", err)
	}
}

func TestMultiGet(t *testing.T) {
	m, d, s := newTestMulti(t)
	if got := get(t, m, segment("title-0001", "700k", 1)); string(got) != "from dir" {
		t.Errorf("title-0001 read %q, want the Dir's", got)
	}
	o := segment("title-0002", s.byID["title-0002"].title.Renditions[0].ID, 1)
	if got := get(t, m, o); !s.Verify(o, got) {
		t.Error("title-0002 not the Synthetic's")
	}
	// No fall-through: the Dir owns title-0001, so its other objects are
	// not looked for in the Synthetic.
	for _, o := range []ident.Object{
		segment("title-0001", "700k", 2),
		segment("zzz", "700k", 1),
	} {
		if _, err := m.Get(context.Background(), o); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get %s = %v, want ErrNotFound", o, err)
		}
	}
	if _, err := m.Get(context.Background(), ident.Object{Video: "..", Name: "x"}); !errors.Is(err, ident.ErrInvalid) {
		t.Errorf("invalid id: %v", err)
	}
	want := Stats{Reads: 2, Bytes: int64(len("from dir")) + s.Stats().Bytes, NotFound: 2, Errors: 1}
	if got := m.Stats(); got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
	if d.Stats().NotFound != 1 || s.Stats().NotFound != 0 {
		t.Errorf("backend stats %+v %+v", d.Stats(), s.Stats())
	}
}

func TestMultiClose(t *testing.T) {
	root := t.TempDir()
	d, err := NewDir(root, DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMulti(d, newTestSynthetic(t, 1))
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("Dir not closed by Multi.Close: %v", err)
	}
	if _, err := d.Get(context.Background(), segment("a", "b", 1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close = %v", err)
	}
	if _, err := d.Catalog(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Catalog after Close = %v", err)
	}
}
