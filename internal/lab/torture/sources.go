package torture

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/workload"
)

// library is the synthetic library the data directory serves beside the
// uploads: 12 titles of one rendition, 6 segments of 10 s each, 67 MB,
// nearly three times the flash cache the server gets, so that the loads
// and checks keep evicting and writing flash blocks. Its fields are
// those of <data>/synthetic.json.
var library = workload.Library{Titles: 12, AllRenditions: false, MaxLengthS: 60, SegmentDurationS: 10, Seed: 9, Prefix: "t"}

// sources are the bytes the torture uploads and reads, generated from the
// seed: file blobs, PNG images, the video sources' paths, and the
// synthetic library.
type sources struct {
	files  [][]byte
	images [][]byte
	videos [][]byte // MP4 sources
	syn    *origin.Synthetic
	segs   []segment // every file of the library: manifests, playlists, segments
}

// A segment is one file of the synthetic library.
type segment struct {
	video, rendition, name string
}

func (s segment) path() string { return objectOf(s).Path() }

func objectOf(s segment) ident.Object {
	return ident.Object{Video: s.video, Rendition: s.rendition, Name: s.name}
}

func newSources(seed uint64, videos []string) (*sources, error) {
	rng := rand.New(rand.NewPCG(seed, 0x534f5552))
	s := &sources{}
	for _, v := range videos {
		b, err := os.ReadFile(v)
		if err != nil {
			return nil, err
		}
		s.videos = append(s.videos, b)
	}
	for _, n := range []int{1, 3000, 64 << 10, 200 << 10, 700 << 10, 1500 << 10, 3 << 20} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		s.files = append(s.files, b)
	}
	for _, wh := range [][2]int{{160, 120}, {640, 480}, {900, 1300}, {1500, 1000}} {
		b, err := pngImage(rng, wh[0], wh[1])
		if err != nil {
			return nil, err
		}
		s.images = append(s.images, b)
	}
	ds := library.Dataset()
	syn, err := origin.NewSynthetic(ds, origin.SyntheticOptions{Seed: library.Seed})
	if err != nil {
		return nil, err
	}
	s.syn = syn
	titles, _ := syn.Catalog(context.Background())
	for _, t := range titles {
		for _, f := range t.Files {
			s.segs = append(s.segs, segment{t.ID, "", f})
		}
		for _, r := range t.Renditions {
			for _, f := range r.Files {
				s.segs = append(s.segs, segment{t.ID, r.ID, f})
			}
			for n := r.StartNumber; n < r.StartNumber+r.Segments; n++ {
				s.segs = append(s.segs, segment{t.ID, r.ID, fmt.Sprintf("%d.m4s", n)})
			}
		}
	}
	return s, nil
}

// writeLibrary describes the synthetic library in data.
func writeLibrary(data string) error {
	b, _ := json.Marshal(library)
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(data, "synthetic.json"), b, 0o644)
}

// pngImage is a w x h PNG: a gradient with a little noise, so that it
// compresses to a realistic size and its variants differ.
func pngImage(rng *rand.Rand, w, h int) ([]byte, error) {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	tint := uint8(rng.IntN(256))
	for y := range h {
		for x := range w {
			n := uint8(rng.IntN(16))
			img.SetNRGBA(x, y, color.NRGBA{uint8(x*255/w) + n, uint8(y*255/h) + n, tint + n, 255})
		}
	}
	var buf bytes.Buffer
	err := png.Encode(&buf, img)
	return buf.Bytes(), err
}

// sum is the hex SHA-256 of b: how the model names contents.
func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
