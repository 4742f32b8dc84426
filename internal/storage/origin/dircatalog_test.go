package origin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/ident"
)

// segments writes media segments ns of root/path.
func segments(t *testing.T, root, path string, ns ...int) {
	t.Helper()
	for _, n := range ns {
		writeFile(t, root, path+"/"+ident.SegmentName(uint32(n)), []byte{byte(n)})
	}
}

func catalogOf(t *testing.T, d *Dir) []Title {
	t.Helper()
	cat, err := d.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func ids(ts []Title) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func TestDirCatalog(t *testing.T) {
	root := t.TempDir()
	segments(t, root, "bbb/200k", 1, 2, 3, 4, 5)
	writeFile(t, root, "bbb/200k/init.mp4", []byte("init"))
	writeFile(t, root, "bbb/200k/playlist.m3u8", []byte("#EXTM3U"))
	writeFile(t, root, "bbb/200k/.partial.m4s", nil) // hidden: ignored
	writeFile(t, root, "bbb/200k/007.m4s", nil)      // not a segment name: a file
	segments(t, root, "bbb/2M", 3, 4, 7)             // gaps
	mkdir(t, root, "bbb/2M/sub")                     // directories in a rendition: ignored
	mkdir(t, root, "bbb/hd")                         // no segments, no bandwidth
	segments(t, root, "bbb/1.5M", 1)
	writeFile(t, root, "bbb/manifest.mpd", []byte("<MPD/>"))
	writeFile(t, root, "bbb/bad name", nil)
	mkdir(t, root, "empty")
	mkdir(t, root, ".hidden")
	mkdir(t, root, "bad name")
	writeFile(t, root, "loose.mp4", nil)
	d := newTestDir(t, root, DirOptions{DefaultSegmentDuration: 6 * time.Second})

	cat := catalogOf(t, d)
	if got := ids(cat); !reflect.DeepEqual(got, []string{"bbb", "empty"}) {
		t.Fatalf("titles %v", got)
	}
	bbb := cat[0]
	want := []Rendition{
		{ID: "hd"},
		{ID: "200k", Bandwidth: 200000, Segments: 5, StartNumber: 1, Files: []string{"007.m4s", "init.mp4", "playlist.m3u8"}},
		{ID: "1.5M", Bandwidth: 1500000, Segments: 1, StartNumber: 1},
		{ID: "2M", Bandwidth: 2000000, Segments: 3, StartNumber: 3},
	}
	if !reflect.DeepEqual(bbb.Renditions, want) {
		t.Errorf("renditions\n got %+v\nwant %+v", bbb.Renditions, want)
	}
	if !reflect.DeepEqual(bbb.Files, []string{"manifest.mpd"}) || bbb.SegmentDuration != 6 || bbb.Synthetic {
		t.Errorf("title %+v", bbb)
	}
	if bbb.SegmentCount() != 9 {
		t.Errorf("SegmentCount = %d", bbb.SegmentCount())
	}
	checkTitleModified(t, root, bbb, "bbb", "bbb/200k", "bbb/2M", "bbb/hd", "bbb/1.5M")
	got, err := d.Title(context.Background(), "bbb")
	if err != nil || !reflect.DeepEqual(got, bbb) {
		t.Errorf("Title(bbb) = %+v, %v", got, err)
	}
}

// checkTitleModified checks that t.Modified is the latest mtime of paths.
func checkTitleModified(t *testing.T, root string, title Title, paths ...string) {
	t.Helper()
	var latest time.Time
	for _, p := range paths {
		fi, err := os.Stat(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if fi.ModTime().After(latest) {
			latest = fi.ModTime()
		}
	}
	if !title.Modified.Equal(latest) {
		t.Errorf("Modified %v, want %v", title.Modified, latest)
	}
}

func TestDirTitleLookup(t *testing.T) {
	root := t.TempDir()
	segments(t, root, "a/700k", 1)
	d := newTestDir(t, root, DirOptions{})
	if _, err := d.Title(context.Background(), "b"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Title(b) = %v, want ErrNotFound", err)
	}
	if _, err := d.Title(context.Background(), "../a"); !errors.Is(err, ident.ErrInvalid) {
		t.Errorf("Title(../a) = %v, want ident.ErrInvalid", err)
	}
	a, err := d.Title(context.Background(), "a")
	if err != nil || len(a.Renditions) != 1 || a.Renditions[0].Bandwidth != 700000 {
		t.Errorf("Title(a) = %+v, %v", a, err)
	}
	// A title added after the catalog was cached is found at once.
	catalogOf(t, d)
	segments(t, root, "b/1M", 1)
	if b, err := d.Title(context.Background(), "b"); err != nil || b.ID != "b" {
		t.Errorf("Title(b) = %+v, %v", b, err)
	}
}

func TestDirMeta(t *testing.T) {
	root := t.TempDir()
	segments(t, root, "a/700k", 1, 2)
	segments(t, root, "a/hd", 1)
	writeFile(t, root, "a/strata.json",
		[]byte(`{"segment_duration_s": 4, "renditions": {"700k": {"bandwidth": 123}, "hd": {"bandwidth": 5000000}, "gone": {"bandwidth": 1}}, "future": true}`))
	segments(t, root, "bad/700k", 1)
	writeFile(t, root, "bad/strata.json", []byte(`{"segment_duration_s": "ten"}`))
	var log logBuffer
	d := newTestDir(t, root, DirOptions{Logger: log.logger()})
	cat := catalogOf(t, d)
	a := cat[0]
	if a.SegmentDuration != 4 || len(a.Files) != 0 {
		t.Errorf("a: %+v", a)
	}
	want := []Rendition{{ID: "700k", Bandwidth: 123, Segments: 2, StartNumber: 1}, {ID: "hd", Bandwidth: 5000000, Segments: 1, StartNumber: 1}}
	if !reflect.DeepEqual(a.Renditions, want) {
		t.Errorf("a: renditions %+v", a.Renditions)
	}
	checkTitleModified(t, root, a, "a", "a/700k", "a/hd", "a/strata.json")
	bad := cat[1]
	if bad.SegmentDuration != 10 || bad.Renditions[0].Bandwidth != 700000 {
		t.Errorf("bad: %+v", bad)
	}
	if !strings.Contains(log.String(), "ignoring a title's metadata") {
		t.Errorf("no warning for bad/strata.json: %q", log.String())
	}
}

func TestDirCatalogRefresh(t *testing.T) {
	root := t.TempDir()
	segments(t, root, "a/700k", 1)
	d := newTestDir(t, root, DirOptions{CatalogTTL: -1})
	catalogOf(t, d)

	segments(t, root, "b/700k", 1, 2) // a new title
	segments(t, root, "a/700k", 2, 3) // new segments
	segments(t, root, "a/1M", 1)      // a new rendition
	writeFile(t, root, "a/strata.json", []byte(`{"segment_duration_s": 2}`))
	cat := catalogOf(t, d)
	if got := ids(cat); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("titles %v", got)
	}
	a := cat[0]
	if len(a.Renditions) != 2 || a.Renditions[0].Segments != 3 || a.SegmentDuration != 2 {
		t.Errorf("a: %+v", a)
	}
	writeFile(t, root, "a/strata.json", []byte(`{"segment_duration_s": 3.5}`)) // in place
	if err := os.RemoveAll(filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	cat = catalogOf(t, d)
	if got := ids(cat); !reflect.DeepEqual(got, []string{"a"}) || cat[0].SegmentDuration != 3.5 {
		t.Fatalf("catalog %+v", cat)
	}
}

func TestDirCatalogTTL(t *testing.T) {
	root := t.TempDir()
	segments(t, root, "a/700k", 1)
	d := newTestDir(t, root, DirOptions{CatalogTTL: time.Hour})
	catalogOf(t, d)
	segments(t, root, "b/700k", 1)
	if got := ids(catalogOf(t, d)); !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("within the TTL: titles %v", got)
	}
	if err := d.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ids(catalogOf(t, d)); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("after Refresh: titles %v", got)
	}
}

// TestDirCatalogStamps checks that an unchanged catalog is not read again
// and that a change rescans only the title it touched. Directory times are
// moved an hour back first, so a change gets a different mtime whatever
// the file system's timestamp granularity.
func TestDirCatalogStamps(t *testing.T) {
	root := t.TempDir()
	for _, id := range []string{"a", "b", "c"} {
		segments(t, root, id+"/700k", 1, 2)
	}
	backdate(t, root, "a", "a/700k", "b", "b/700k", "c", "c/700k", ".")
	d := newTestDir(t, root, DirOptions{CatalogTTL: -1, racyWindow: -1})
	catalogOf(t, d)
	catalogOf(t, d)
	if n := d.cat.scans.Load(); n != 3 {
		t.Fatalf("%d title scans, want 3", n)
	}
	segments(t, root, "b/700k", 3)
	cat := catalogOf(t, d)
	if n := d.cat.scans.Load(); n != 4 || cat[1].Renditions[0].Segments != 3 {
		t.Fatalf("%d title scans, b = %+v", n, cat[1])
	}
	segments(t, root, "d/700k", 1)
	if got := ids(catalogOf(t, d)); len(got) != 4 || d.cat.scans.Load() != 5 {
		t.Fatalf("titles %v after %d scans", got, d.cat.scans.Load())
	}
}

func backdate(t *testing.T, root string, paths ...string) {
	t.Helper()
	past := time.Now().Add(-time.Hour)
	for _, p := range paths {
		if err := os.Chtimes(filepath.Join(root, p), past, past); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDirCatalogRacy checks that titles changed within the racy window
// are rescanned at every check, since their stamps cannot be trusted.
func TestDirCatalogRacy(t *testing.T) {
	root := t.TempDir()
	segments(t, root, "a/700k", 1)
	d := newTestDir(t, root, DirOptions{CatalogTTL: -1, racyWindow: time.Hour})
	catalogOf(t, d)
	catalogOf(t, d)
	if n := d.cat.scans.Load(); n != 2 {
		t.Fatalf("%d title scans, want 2", n)
	}
}

func TestDirCatalogCancelled(t *testing.T) {
	root := t.TempDir()
	segments(t, root, "a/700k", 1)
	d := newTestDir(t, root, DirOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Catalog(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Catalog = %v, want context.Canceled", err)
	}
}

func TestInferBandwidth(t *testing.T) {
	for id, want := range map[string]int{
		"700k": 700000, "1500k": 1500000, "2M": 2000000, "2.5m": 2500000, "64K": 64000,
		"hd": 0, "k": 0, "M": 0, "1e3k": 0, "-1k": 0, "infk": 0, "nank": 0, "0k": 0,
		"1.2.3k": 0, "99999999M": 0, "700": 0, "700kb": 0, "0x10k": 0,
	} {
		if got := inferBandwidth(id); got != want {
			t.Errorf("inferBandwidth(%q) = %d, want %d", id, got, want)
		}
	}
}

func FuzzInferBandwidth(f *testing.F) {
	for _, s := range []string{"700k", "2.5M", "nank", "1e9M", ".k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if bw := inferBandwidth(id); bw < 0 {
			t.Fatalf("inferBandwidth(%q) = %d", id, bw)
		}
	})
}

func FuzzParseMeta(f *testing.F) {
	f.Add([]byte(`{"segment_duration_s": 10, "renditions": {"700k": {"bandwidth": 700000}}}`))
	f.Add([]byte(`{"renditions": {"a": {}}}`))
	f.Add([]byte(`{"segment_duration_s": -1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseMeta(data)
		if err != nil {
			return
		}
		title := Title{SegmentDuration: 10, Renditions: []Rendition{{ID: "a"}, {ID: "700k"}}}
		m.apply(&title)
		if title.SegmentDuration <= 0 || title.Renditions[0].Bandwidth < 0 || title.Renditions[1].Bandwidth < 0 {
			t.Fatalf("%s gives %+v", data, title)
		}
	})
}

// TestDirConcurrent runs reads, lookups and listings while titles are
// added and the catalog refreshed, for the race detector; in the end the
// catalog must hold every title.
func TestDirConcurrent(t *testing.T) {
	root := t.TempDir()
	segments(t, root, "t00/700k", 1, 2)
	d := newTestDir(t, root, DirOptions{CatalogTTL: -1})
	const titles = 20
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 3 {
		wg.Go(func() { readLoop(t, d, stop) })
	}
	for i := 1; i < titles; i++ {
		segments(t, root, fmt.Sprintf("t%02d/700k", i), 1, 2)
		if i%5 == 0 {
			if err := d.Refresh(context.Background()); err != nil {
				t.Error(err)
			}
		}
	}
	close(stop)
	wg.Wait()
	if got := catalogOf(t, d); len(got) != titles {
		t.Fatalf("%d titles: %v", len(got), ids(got))
	}
}

func readLoop(t *testing.T, d *Dir, stop chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		if _, err := d.Get(context.Background(), segment("t00", "700k", 2)); err != nil {
			t.Error(err)
			return
		}
		if _, err := d.Title(context.Background(), "t00"); err != nil {
			t.Error(err)
			return
		}
		if _, err := d.Catalog(context.Background()); err != nil {
			t.Error(err)
			return
		}
	}
}

// BenchmarkDirCatalog lists a library of 2000 titles: "cached" within the
// TTL, "check" with every stamp checked (nothing changed), "scan" reading
// every directory again.
func BenchmarkDirCatalog(b *testing.B) {
	root := b.TempDir()
	const titles = 2000
	for i := range titles {
		for _, r := range []string{"200k", "2M"} {
			for n := 1; n <= 10; n++ {
				writeFile(b, root, fmt.Sprintf("t%04d/%s/%d.m4s", i, r, n), nil)
			}
		}
	}
	for _, bc := range []struct {
		name string
		opts DirOptions
		op   func(*Dir) error
	}{
		{"cached", DirOptions{CatalogTTL: time.Hour}, nil},
		{"check", DirOptions{CatalogTTL: -1, racyWindow: -1}, nil},
		{"scan", DirOptions{}, func(d *Dir) error { return d.Refresh(context.Background()) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			d := newTestDir(b, root, bc.opts)
			if _, err := d.Catalog(context.Background()); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if bc.op != nil {
					if err := bc.op(d); err != nil {
						b.Fatal(err)
					}
				}
				if cat, err := d.Catalog(context.Background()); err != nil || len(cat) != titles {
					b.Fatalf("%d titles, %v", len(cat), err)
				}
			}
		})
	}
}
