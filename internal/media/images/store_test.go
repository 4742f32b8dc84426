package images

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Every rung is generated at its fitted size, stored, and read back
// byte-identical; large ones go to the value log directory.
func TestIngestEveryVariant(t *testing.T) {
	st := openTestStore(t, nil)
	body := encodeTestJPEG(t, testPhoto(1600, 1200, 1), 90)
	m, replaced, err := st.Ingest("cat", body)
	if err != nil || replaced {
		t.Fatalf("ingest: %v, replaced %v", err, replaced)
	}
	want := map[string]image.Point{"thumbnail": {100, 75}, "small": {600, 450}, "medium": {1280, 960},
		"large": {1600, 1200}, "original": {1600, 1200}}
	if len(m.Variants) != len(want) || m.Generation != 1 || m.Width != 1600 || m.Format != "jpeg" {
		t.Fatalf("meta %+v", m)
	}
	for _, v := range m.Variants {
		_, got, data, err := st.Get("cat", v.Name)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		if size := decodeSize(t, data); size != want[v.Name] || got.ETag != etagOf(data) || int64(len(data)) != v.Bytes {
			t.Errorf("%s: %v (want %v), %d bytes, etag %s", v.Name, size, want[v.Name], len(data), got.ETag)
		}
	}
	if v, _ := m.Variant("large"); v.Blob != OriginalName {
		t.Errorf("large is the original's size and should share its bytes: %+v", v)
	}
	if _, _, orig, _ := st.Get("cat", OriginalName); !bytes.Equal(orig, body) {
		t.Error("original not stored byte-identical")
	}
}

// A small PNG is never enlarged: rungs above its size share one rendered
// JPEG (a PNG original cannot stand in for a JPEG variant).
func TestNeverUpscale(t *testing.T) {
	st := openTestStore(t, nil)
	m, _, err := st.Ingest("small", encodeTestPNG(t, testPhoto(300, 200, 2)))
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]image.Point{}
	for _, v := range m.Variants {
		sizes[v.Name] = image.Pt(v.Width, v.Height)
	}
	if sizes["thumbnail"] != image.Pt(100, 67) || sizes["small"] != image.Pt(300, 200) || sizes["large"] != image.Pt(300, 200) {
		t.Fatalf("sizes %v", sizes)
	}
	if v, _ := m.Variant("large"); v.Blob != "small" || v.ContentType != "image/jpeg" {
		t.Fatalf("large: %+v", v)
	}
}

// An EXIF-rotated JPEG is stored upright: sizes are the displayed ones and
// the pixel in the stored top-left corner ends up top-right (orientation 6).
func TestExifOrientation(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 400, 200))
	for y := range 200 {
		for x := range 400 {
			img.SetRGBA(x, y, color.RGBA{0, 0, 255, 255})
		}
	}
	for y := range 40 {
		for x := range 40 {
			img.SetRGBA(x, y, color.RGBA{255, 0, 0, 255})
		}
	}
	st := openTestStore(t, nil)
	m, _, err := st.Ingest("rot", withOrientation(encodeTestJPEG(t, img, 95), 6))
	if err != nil {
		t.Fatal(err)
	}
	if m.Width != 200 || m.Height != 400 {
		t.Fatalf("displayed size %dx%d, want 200x400", m.Width, m.Height)
	}
	_, _, data, _ := st.Get("rot", "thumbnail")
	thumb, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if thumb.Bounds().Size() != image.Pt(50, 100) {
		t.Fatalf("thumbnail %v", thumb.Bounds())
	}
	if r, _, b, _ := thumb.At(47, 2).RGBA(); r < 0xa000 || b > 0x6000 {
		t.Fatalf("top right of the upright thumbnail is not red: r=%x b=%x", r, b)
	}
}

// Bad uploads are refused with the right error, and nothing is stored.
func TestRejects(t *testing.T) {
	st := openTestStore(t, func(o *Options) { o.MaxPixels = 4_000_000; o.MaxUploadBytes = 3 << 20 })
	good := encodeTestJPEG(t, testPhoto(64, 48, 3), 90)
	cases := []struct {
		name string
		body []byte
		want error
	}{
		{"text", []byte("hello, this is not an image"), ErrUnsupported},
		{"empty", nil, ErrUnsupported},
		{"gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), ErrUnsupported},
		{"truncated-jpeg", good[:len(good)/2], ErrCorrupt},
		{"bomb-png", pngBomb(t, 100_000, 100_000), ErrTooManyPixels},
		{"just-over-png", pngBomb(t, 2001, 2000), ErrTooManyPixels},
		{"too-large", append(bytes.Clone(good), make([]byte, 3<<20)...), ErrTooLarge},
	}
	for _, c := range cases {
		if _, _, err := st.Ingest("x-"+c.name, c.body); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if _, err := st.Meta("x-" + c.name); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: something was stored: %v", c.name, err)
		}
	}
	if n := countKeys(t, st, "img/"); n != 0 {
		t.Fatalf("%d keys stored by rejected uploads", n)
	}
	if _, _, err := st.Ingest("../etc", good); err == nil {
		t.Fatal("accepted a path as an id")
	}
}

// A re-upload replaces every variant in one transaction: the new
// generation's bytes, and no key of the old one left behind.
func TestReplace(t *testing.T) {
	st := openTestStore(t, nil)
	if _, _, err := st.Ingest("img", encodeTestJPEG(t, testPhoto(1500, 1000, 4), 90)); err != nil {
		t.Fatal(err)
	}
	before := countKeys(t, st, "img/img/")
	body := encodeTestPNG(t, testPhoto(120, 90, 5))
	m, replaced, err := st.Ingest("img", body)
	if err != nil || !replaced || m.Generation != 2 {
		t.Fatalf("replace: %v replaced=%v gen=%d", err, replaced, m.Generation)
	}
	if after := countKeys(t, st, "img/img/"); after != len(m.blobs())+1 || after >= before {
		t.Fatalf("%d keys after the replacement (before %d), want %d", after, before, len(m.blobs())+1)
	}
	if _, _, orig, _ := st.Get("img", OriginalName); !bytes.Equal(orig, body) {
		t.Fatal("original is not the new upload")
	}
	if _, err := st.Blob("img", 1, "thumbnail"); !errors.Is(err, ErrChanged) {
		t.Fatalf("read of the old generation: %v", err)
	}
	if ok, err := st.Delete("img"); !ok || err != nil || countKeys(t, st, "img/") != 0 {
		t.Fatalf("delete: %v %v", ok, err)
	}
}

// Concurrent uploads of one id serialize: generations are 1..n.
func TestConcurrentReplace(t *testing.T) {
	st := openTestStore(t, nil)
	body := encodeTestJPEG(t, testPhoto(200, 150, 6), 90)
	p, err := st.Pipeline().Prepare(body)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() { _, _, err := st.Put("same", p); errs <- err }()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if m, _ := st.Meta("same"); m.Generation != 8 {
		t.Fatalf("generation %d after 8 uploads", m.Generation)
	}
}

func TestParseLadder(t *testing.T) {
	l, err := ParseLadder("thumbnail=100x100, small=600x800,medium=1280,large=2048x3072")
	if err != nil || FormatLadder(l) != FormatLadder(DefaultLadder()) {
		t.Fatalf("%v %v", FormatLadder(l), err)
	}
	for _, bad := range []string{"", "a", "a=0", "a=10x", "original=10", "a=10,a=20", "a/b=10", "a=70000"} {
		if _, err := ParseLadder(bad); !errors.Is(err, ErrOptions) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func countKeys(t *testing.T, st *Store, prefix string) int {
	t.Helper()
	n := 0
	st.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	return n
}

// A 1x1 lossless WebP (Modernizr's feature test image).
const webp1x1 = "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="

func TestWebP(t *testing.T) {
	body, _ := base64.StdEncoding.DecodeString(webp1x1)
	st := openTestStore(t, nil)
	m, _, err := st.Ingest("w", body)
	if err != nil {
		t.Fatal(err)
	}
	if m.Format != "webp" || m.Width != 1 || m.Height != 1 {
		t.Fatalf("%+v", m)
	}
	if v, _ := m.Variant("thumbnail"); v.ContentType != "image/jpeg" || v.Width != 1 {
		t.Fatalf("thumbnail %+v", v)
	}
	if v, _ := m.Variant(OriginalName); v.ContentType != "image/webp" {
		t.Fatalf("original %+v", v)
	}
}

// The GC loop runs while images are replaced and stops with Close; a
// closed store can be closed again, and a nil one (images disabled) too.
func TestGCLoopAndClose(t *testing.T) {
	st := openTestStore(t, func(o *Options) {
		o.GCInterval = 5 * time.Millisecond
		o.SplitThreshold = 2 << 20
		o.MaxUploadBytes = 1 << 20
	})
	p, err := st.Pipeline().Prepare(encodeTestJPEG(t, testPhoto(900, 600, 12), 90))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, _, err := st.Put(fmt.Sprintf("g%d", i%3), p); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(30 * time.Millisecond)
	if _, err := st.RunGC(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	var none *Store
	if err := none.Close(); err != nil {
		t.Fatal(err)
	}
}
