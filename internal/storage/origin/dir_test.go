package origin

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-media/strata/internal/ident"
)

// logBuffer is an slog destination that tests can read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newTestDir opens a Dir over root, closed when the test ends.
func newTestDir(t testing.TB, root string, opts DirOptions) *Dir {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	d, err := NewDir(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d
}

// writeFile writes data to root/rel, creating directories.
func writeFile(t testing.TB, root, rel string, data []byte) {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t testing.TB, root, rel string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, rel), 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// sequence returns n bytes that differ from any other offset's.
func sequence(n int, seed byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = seed + byte(i*31+i>>8)
	}
	return p
}

// noOpenat2 simulates a kernel without openat2.
func noOpenat2(int, string, *unix.OpenHow) (int, error) { return -1, unix.ENOSYS }

// resolvers runs fn with the openat2 resolver and with the os.Root
// fallback.
func resolvers(t *testing.T, fn func(t *testing.T, opts DirOptions)) {
	t.Run("openat2", func(t *testing.T) { fn(t, DirOptions{}) })
	t.Run("osroot", func(t *testing.T) {
		var log logBuffer
		fn(t, DirOptions{openat2: noOpenat2, Logger: log.logger()})
		if !strings.Contains(log.String(), "openat2 unavailable") {
			t.Errorf("no warning about the fallback in %q", log.String())
		}
	})
}

func TestDirGetSizes(t *testing.T) {
	resolvers(t, func(t *testing.T, opts DirOptions) {
		root := t.TempDir()
		sizes := []int{0, 1, 511, 4095, 4096, 4097, 12345, 8192, 1<<20 + 3}
		for i, n := range sizes {
			writeFile(t, root, "v/r/"+ident.SegmentName(uint32(i)), sequence(n, byte(i)))
		}
		d := newTestDir(t, root, opts)
		for i, n := range sizes {
			o := ident.Object{Video: "v", Rendition: "r", Name: ident.SegmentName(uint32(i))}
			obj, err := d.Get(context.Background(), o)
			if err != nil {
				t.Fatalf("Get %s: %v", o, err)
			}
			if !bytes.Equal(obj.Data, sequence(n, byte(i))) {
				t.Errorf("Get %s: %d bytes, want %d bytes of the pattern", o, len(obj.Data), n)
			}
			if obj.Data == nil || cap(obj.Data) > n+n/32+directAlign {
				t.Errorf("Get %s: cap %d for %d bytes", o, cap(obj.Data), n)
			}
			checkModified(t, filepath.Join(root, o.Path()), obj.Modified)
		}
		if !d.Direct() {
			t.Log("the file system refused O_DIRECT; reads were buffered")
		}
		if s := d.Stats(); s.Reads != int64(len(sizes)) || s.Bytes != int64(sum(sizes)) {
			t.Errorf("Stats = %+v", s)
		}
	})
}

func sum(xs []int) (s int) {
	for _, x := range xs {
		s += x
	}
	return s
}

func checkModified(t *testing.T, path string, got time.Time) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(fi.ModTime()) {
		t.Errorf("%s: Modified %v, mtime %v", path, got, fi.ModTime())
	}
}

func TestDirTitleFile(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "v/manifest.mpd", []byte("<MPD/>"))
	d := newTestDir(t, root, DirOptions{})
	obj, err := d.Get(context.Background(), ident.Object{Video: "v", Name: "manifest.mpd"})
	if err != nil || string(obj.Data) != "<MPD/>" {
		t.Fatalf("Get = %q, %v", obj.Data, err)
	}
}

func TestDirGetNotFound(t *testing.T) {
	resolvers(t, testDirGetNotFound)
}

func testDirGetNotFound(t *testing.T, opts DirOptions) {
	root := t.TempDir()
	writeFile(t, root, "v/r/1.m4s", []byte("x"))
	if err := unix.Mkfifo(filepath.Join(root, "v", "r", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := newTestDir(t, root, opts)
	for _, o := range []ident.Object{
		{Video: "v", Rendition: "r", Name: "2.m4s"},
		{Video: "w", Rendition: "r", Name: "1.m4s"},
		{Video: "v", Name: "r"},                     // a directory
		{Video: "v", Rendition: "r", Name: "fifo"},  // must not block
		{Video: "v", Rendition: "1.m4s", Name: "x"}, // a file as a directory
	} {
		if _, err := d.Get(context.Background(), o); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get %s = %v, want ErrNotFound", o, err)
		}
	}
	for _, o := range []ident.Object{
		{Video: "..", Rendition: "r", Name: "1.m4s"},
		{Video: "v", Rendition: "r/..", Name: "1.m4s"},
		{Video: "v", Name: ""},
	} {
		if _, err := d.Get(context.Background(), o); !errors.Is(err, ident.ErrInvalid) {
			t.Errorf("Get %q = %v, want ident.ErrInvalid", o.Path(), err)
		}
	}
	if s := d.Stats(); s.NotFound != 5 || s.Errors != 3 || s.Reads != 0 {
		t.Errorf("Stats = %+v", s)
	}
	if !d.Direct() {
		t.Error("a directory or FIFO turned O_DIRECT off")
	}
}

func TestDirGetTooLarge(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "v/big", make([]byte, 5000))
	d := newTestDir(t, root, DirOptions{MaxObjectSize: 4096})
	if _, err := d.Get(context.Background(), ident.Object{Video: "v", Name: "big"}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Get = %v, want ErrTooLarge", err)
	}
}

func TestDirGetCancelled(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "v/x", []byte("x"))
	d := newTestDir(t, root, DirOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Get(ctx, ident.Object{Video: "v", Name: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get = %v, want context.Canceled", err)
	}
}

func TestDirSymlinks(t *testing.T) {
	resolvers(t, func(t *testing.T, opts DirOptions) {
		outside := t.TempDir()
		writeFile(t, outside, "secret", []byte("secret"))
		writeFile(t, outside, "title/r/1.m4s", []byte("secret"))
		root := filepath.Join(t.TempDir(), "root")
		writeFile(t, root, "v/r/1.m4s", []byte("inside"))
		writeFile(t, root, "v/file", []byte("inside"))
		links := map[string]string{
			"v/r/abs.m4s":    filepath.Join(outside, "secret"),
			"v/r/rel.m4s":    "../../../" + filepath.Base(outside) + "/secret",
			"v/r/absin.m4s":  filepath.Join(root, "v/file"), // absolute: refused even inside
			"v/r/up":         "../../..",
			"v/r/loop":       "loop",
			"v/r/inside.m4s": "../file",
			"v/up":           "../..",
			"evil":           outside + "/title",
			"v/evil":         outside,
		}
		if filepath.Dir(outside) != filepath.Dir(filepath.Dir(root)) {
			links["v/r/rel.m4s"], _ = filepath.Rel(filepath.Join(root, "v/r"), filepath.Join(outside, "secret"))
		}
		for link, target := range links {
			symlink(t, target, filepath.Join(root, link))
		}
		d := newTestDir(t, root, opts)
		refused := []ident.Object{
			{Video: "v", Rendition: "r", Name: "abs.m4s"},
			{Video: "v", Rendition: "r", Name: "rel.m4s"},
			{Video: "v", Rendition: "r", Name: "absin.m4s"},
			{Video: "v", Rendition: "up", Name: "secret"},
			{Video: "v", Rendition: "r", Name: "loop"},
			{Video: "evil", Rendition: "r", Name: "1.m4s"},
			{Video: "v", Rendition: "evil", Name: "secret"},
			{Video: "v", Rendition: "up", Name: filepath.Base(root)},
		}
		for _, o := range refused {
			obj, err := d.Get(context.Background(), o)
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("Get %s = %q, %v; want ErrNotFound", o, obj.Data, err)
			}
		}
		for _, o := range refused[:4] {
			if _, err := d.Get(context.Background(), o); !errors.Is(err, ErrEscapesRoot) {
				t.Errorf("Get %s = %v, want ErrEscapesRoot", o, err)
			}
		}
		obj, err := d.Get(context.Background(), ident.Object{Video: "v", Rendition: "r", Name: "inside.m4s"})
		if err != nil || string(obj.Data) != "inside" {
			t.Errorf("symlink inside the root: %q, %v", obj.Data, err)
		}
		cat, err := d.Catalog(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(cat) != 1 || cat[0].ID != "v" || len(cat[0].Renditions) != 1 {
			t.Errorf("catalog = %+v, want only v with rendition r", cat)
		}
		if _, err := d.Title(context.Background(), "evil"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Title(evil) = %v, want ErrNotFound", err)
		}
	})
}

// FuzzDirGet reads arbitrary ids from a root whose symlinks lead out of
// it: a read may fail, but never return bytes from outside.
func FuzzDirGet(f *testing.F) {
	outside := f.TempDir()
	writeFile(f, outside, "secret", []byte("secret"))
	root := filepath.Join(f.TempDir(), "root")
	writeFile(f, root, "v/r/1.m4s", []byte("inside"))
	symlink(f, filepath.Join(outside, "secret"), filepath.Join(root, "v/r/abs"))
	symlink(f, "../../..", filepath.Join(root, "v/r/up"))
	symlink(f, outside, filepath.Join(root, "out"))
	d := newTestDir(f, root, DirOptions{})
	for _, s := range []string{"v/r/1.m4s", "v/r/abs", "v/up/secret", "out/secret", "v/r/up/secret", "../secret"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		o, err := ident.ParseObject(path)
		if err != nil {
			o = ident.Object{Video: path, Name: path}
		}
		obj, err := d.Get(context.Background(), o)
		if err == nil && string(obj.Data) != "inside" {
			t.Fatalf("Get %q = %q", path, obj.Data)
		}
	})
}

func TestDirDirectFallback(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "v/r/1.m4s", sequence(5000, 1))
	writeFile(t, root, "v/r/2.m4s", sequence(3, 2))
	var log logBuffer
	refuseDirect := func(dirfd int, path string, how *unix.OpenHow) (int, error) {
		if how.Flags&unix.O_DIRECT != 0 {
			return -1, unix.EINVAL
		}
		return unix.Openat2(dirfd, path, how)
	}
	d := newTestDir(t, root, DirOptions{openat2: refuseDirect, Logger: log.logger()})
	for i, n := range []int{5000, 3} {
		o := ident.Object{Video: "v", Rendition: "r", Name: ident.SegmentName(uint32(i + 1))}
		obj, err := d.Get(context.Background(), o)
		if err != nil || !bytes.Equal(obj.Data, sequence(n, byte(i+1))) {
			t.Fatalf("Get %s = %d bytes, %v", o, len(obj.Data), err)
		}
	}
	if d.Direct() {
		t.Error("still direct after EINVAL")
	}
	if n := strings.Count(log.String(), "O_DIRECT refused"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, log.String())
	}
}

func TestDirNoDirect(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "v/r/1.m4s", sequence(10000, 7))
	d := newTestDir(t, root, DirOptions{NoDirect: true})
	obj, err := d.Get(context.Background(), ident.Object{Video: "v", Rendition: "r", Name: "1.m4s"})
	if err != nil || !bytes.Equal(obj.Data, sequence(10000, 7)) || d.Direct() {
		t.Fatalf("Get = %d bytes, %v, direct %v", len(obj.Data), err, d.Direct())
	}
}

func TestNewDirErrors(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "file", nil)
	for _, p := range []string{filepath.Join(root, "missing"), filepath.Join(root, "file")} {
		if d, err := NewDir(p, DirOptions{}); err == nil {
			d.Close()
			t.Errorf("NewDir(%s) succeeded", p)
		}
	}
}

func BenchmarkDirGet(b *testing.B) {
	root := b.TempDir()
	const size = 1 << 20
	writeFile(b, root, "v/r/1.m4s", sequence(size, 1))
	d := newTestDir(b, root, DirOptions{})
	o := ident.Object{Video: "v", Rendition: "r", Name: "1.m4s"}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Get(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(boolMetric(d.Direct()), "direct")
}

func boolMetric(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
