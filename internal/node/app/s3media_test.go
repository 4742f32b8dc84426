package app

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/storage/s3test"
)

// startNode serves cfg's node until stop is called (or the test ends).
func startNode(t *testing.T, cfg Config) (base string, stop func()) {
	t.Helper()
	n, err := Open(context.Background(), cfg, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return n.Description().URL, runNode(t, n)
}

// noisyJPEG is a JPEG of w x h random pixels: its variants are hundreds
// of KB, above the image store's size threshold.
func noisyJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
	}
	img.Set(0, 0, color.RGBA{A: 255})
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// With --origin s3://, whole files and the image store's large variants
// live in the bucket (no file in the files directory, the variants'
// objects under .images/); a file is served with ranges, a large variant
// from the bucket then RAM. A node restarted on the same data directory serves
// both again; a new node on another data directory serves the files
// (the images' pointers are in the LSM, on the first node's flash).
func TestS3FilesAndImages(t *testing.T) {
	srv := s3test.Start(t)
	cfg := s3Config(t, srv.Endpoint)
	cfg.AdminToken = "tok"
	base, stop := startNode(t, cfg)
	file := bytes.Repeat([]byte("0123456789abcdef"), 20000)
	auth := httpapitest.Bearer("tok")
	if resp, body := httpapitest.Do(t, "PUT", base+"/files/clip.bin", bytes.NewReader(file), auth...); resp.StatusCode != 201 {
		t.Fatalf("PUT file: %d %s", resp.StatusCode, body)
	}
	if _, err := os.Stat(filepath.Join(cfg.Files.Dir, "clip.bin")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the file is in the local directory: %v", err)
	}
	wantRange := func(base string) {
		t.Helper()
		resp, body := httpapitest.Do(t, "GET", base+"/files/clip.bin", nil, "Range", "bytes=1000-1999")
		if resp.StatusCode != 206 || !bytes.Equal(body, file[1000:2000]) {
			t.Fatalf("range: %d, %d bytes", resp.StatusCode, len(body))
		}
	}
	wantRange(base)

	photo := noisyJPEG(t, 800, 600)
	if resp, body := httpapitest.Do(t, "PUT", base+"/images/cat", bytes.NewReader(photo), auth...); resp.StatusCode != 201 {
		t.Fatalf("PUT image: %d %s", resp.StatusCode, body)
	}
	for _, tier := range []string{"bucket", "ram"} {
		resp, body := get(t, base+"/images/cat/original")
		if resp.StatusCode != 200 || !bytes.Equal(body, photo) || resp.Header.Get("X-Strata-Tier") != tier {
			t.Fatalf("original: %d, %d bytes from %q, want from %s", resp.StatusCode, len(body), resp.Header.Get("X-Strata-Tier"), tier)
		}
	}
	n := 0
	for o := range srv.Client(t).ListObjects(context.Background(), s3test.Bucket,
		minio.ListObjectsOptions{Prefix: "vod/.images/cat/", Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no image object in the bucket")
	}
	stop()

	base, stop = startNode(t, cfg)
	wantRange(base)
	if resp, body := get(t, base+"/images/cat/original"); resp.StatusCode != 200 || !bytes.Equal(body, photo) {
		t.Fatalf("original after a restart: %d, %d bytes", resp.StatusCode, len(body))
	}
	stop()

	other := s3Config(t, srv.Endpoint)
	base, _ = startNode(t, other)
	wantRange(base)
}
