package media

import (
	"bytes"
	"errors"
	"mime/multipart"
	"os"
	"testing"
)

// FuzzSpoolParts spools arbitrary multipart bodies: no panic, a typed
// error (400 material) or files that exist, at most maxParts of them,
// with valid rendition names.
func FuzzSpoolParts(f *testing.F) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.SetBoundary("zz")
	w, _ := mw.CreateFormFile("700k", "a.mp4")
	w.Write([]byte("\x00\x00\x00\x08free"))
	w, _ = mw.CreateFormFile("file", "b.mp4")
	w.Write([]byte("data"))
	mw.WriteField("note", "not a file")
	mw.Close()
	f.Add(buf.Bytes())
	f.Add([]byte("--zz\r\nContent-Disposition: form-data; name=\"../x\"; filename=\"y\"\r\n\r\nabc\r\n--zz--\r\n"))
	f.Add([]byte("--zz\r\nnonsense"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		inputs, err := spoolParts(multipart.NewReader(bytes.NewReader(b), "zz"), dir)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) && !errors.Is(err, errUpload) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if len(inputs) == 0 || len(inputs) > maxParts {
			t.Fatalf("%d inputs", len(inputs))
		}
		for _, in := range inputs {
			if _, err := os.Stat(in.Path); err != nil {
				t.Fatalf("input %+v: %v", in, err)
			}
			if in.Name != "" && checkRenditionName(in.Name) != nil {
				t.Fatalf("accepted rendition name %q", in.Name)
			}
		}
	})
}
