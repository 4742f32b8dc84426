package source

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestOpenRejects(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrNotMP4},
		{"text", []byte("hello, world, this is text"), ErrNotMP4},
		{"ftyp only", []byte("\x00\x00\x00\x10ftypisom\x00\x00\x00\x00"), ErrInvalid},
	} {
		p := filepath.Join(dir, c.name)
		os.WriteFile(p, c.data, 0o644)
		if _, err := Open(p); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// FuzzOpen opens arbitrary bytes as an MP4: errors are fine, panics and
// hangs are not.
func FuzzOpen(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x10ftypisom\x00\x00\x00\x00\x00\x00\x00\x08moov"))
	f.Add([]byte("\x00\x00\x00\x08mdat"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "in.mp4")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if f, err := Open(p); err == nil {
			f.Close()
		}
	})
}
