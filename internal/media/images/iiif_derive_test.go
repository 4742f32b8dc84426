package images

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"testing"
)

// quadrants is a w x h image whose quadrants are red (top left), green
// (top right), blue (bottom left) and white.
func quadrants(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	cols := [4]color.RGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {255, 255, 255, 255}}
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, cols[2*(2*y/h)+2*x/w])
		}
	}
	return img
}

// corners are the colors at the four corners of img, clockwise from the
// top left.
func corners(img image.Image) [4]color.RGBA {
	b := img.Bounds()
	at := func(x, y int) color.RGBA { return color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) }
	return [4]color.RGBA{at(b.Min.X, b.Min.Y), at(b.Max.X-1, b.Min.Y), at(b.Max.X-1, b.Max.Y-1), at(b.Min.X, b.Max.Y-1)}
}

// The derived pixels: crop, scale, mirror then rotate clockwise, and the
// qualities, checked on PNG (lossless) responses of a quadrant image.
func TestDeriveIIIF(t *testing.T) {
	src := encodeTestPNG(t, quadrants(400, 200))
	m := &Meta{ID: "q", Width: 400, Height: 200, Variants: []Variant{{Name: OriginalName, Width: 400, Height: 200, ContentType: "image/png"}}}
	red, green, blue, white := color.RGBA{255, 0, 0, 255}, color.RGBA{0, 255, 0, 255}, color.RGBA{0, 0, 255, 255}, color.RGBA{255, 255, 255, 255}
	cases := []struct {
		region, size, rotation string
		want                   [4]color.RGBA // corners, clockwise from the top left
		size2                  image.Point
	}{
		{"full", "max", "0", [4]color.RGBA{red, green, white, blue}, image.Pt(400, 200)},
		{"full", "100,", "90", [4]color.RGBA{blue, red, green, white}, image.Pt(50, 100)},
		{"full", "100,", "180", [4]color.RGBA{white, blue, red, green}, image.Pt(100, 50)},
		{"full", "100,", "270", [4]color.RGBA{green, white, blue, red}, image.Pt(50, 100)},
		{"full", "100,", "!0", [4]color.RGBA{green, red, blue, white}, image.Pt(100, 50)},
		{"full", "100,", "!90", [4]color.RGBA{white, green, red, blue}, image.Pt(50, 100)},
		{"200,100,200,100", "max", "0", [4]color.RGBA{white, white, white, white}, image.Pt(200, 100)},
		{"pct:0,50,50,50", "^400,", "0", [4]color.RGBA{blue, blue, blue, blue}, image.Pt(400, 200)},
	}
	o := (&IIIFOptions{}).EnsureDefaults()
	for _, c := range cases {
		q, err := ParseIIIF(c.region, c.size, c.rotation, "default.png")
		if err != nil {
			t.Fatal(err)
		}
		p, err := PlanIIIF(m, q, o)
		if err != nil {
			t.Fatal(err)
		}
		out, err := deriveIIIF(src, p, 90)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if img.Bounds().Size() != c.size2 || corners(img) != c.want {
			t.Errorf("%s/%s/%s: %v %v, want %v %v", c.region, c.size, c.rotation, img.Bounds().Size(), corners(img), c.size2, c.want)
		}
	}
	for quality, want := range map[string][4]uint8{"gray": {76, 150, 255, 29}, "bitonal": {0, 255, 255, 0}} {
		q, _ := ParseIIIF("full", "max", "0", quality+".png")
		p, _ := PlanIIIF(m, q, o)
		out, err := deriveIIIF(src, p, 90)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(out))
		g, ok := img.(*image.Gray)
		if err != nil || !ok {
			t.Fatalf("%s: %T %v", quality, img, err)
		}
		if got := [4]uint8{g.GrayAt(0, 0).Y, g.GrayAt(399, 0).Y, g.GrayAt(399, 199).Y, g.GrayAt(0, 199).Y}; got != want {
			t.Errorf("%s: corners %v, want %v", quality, got, want)
		}
	}
}

// A derivation waits for one of MaxConcurrent slots: with every slot
// taken, a request renders nothing and leaves when its client does; once
// a slot is free, the same request is served.
func TestIIIFConcurrencyBound(t *testing.T) {
	st := openTestStore(t, nil)
	if _, _, err := st.Ingest("c", encodeTestPNG(t, quadrants(64, 48))); err != nil {
		t.Fatal(err)
	}
	h := NewHandler(st, nil, HandlerOptions{IIIF: IIIFOptions{MaxConcurrent: 1}})
	req := func(ctx context.Context) (rec *httptest.ResponseRecorder, aborted bool) {
		r := httptest.NewRequestWithContext(ctx, "GET", "/iiif/3/c/full/32,/0/default.png", nil)
		for k, v := range map[string]string{"id": "c", "region": "full", "size": "32,", "rotation": "0", "file": "default.png"} {
			r.SetPathValue(k, v)
		}
		rec = httptest.NewRecorder()
		defer func() {
			if p := recover(); p != nil {
				if p != http.ErrAbortHandler {
					panic(p)
				}
				aborted = true
			}
		}()
		h.iiifImage(rec, r)
		return rec, false
	}
	h.renders <- struct{}{} // the one slot, taken
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Its client gone while it waited, the answer is aborted.
	if rec, aborted := req(ctx); !aborted || rec.Body.Len() != 0 || rec.Header().Get("X-Strata-Tier") != "" {
		t.Fatalf("rendered without a slot: %d, %d bytes (aborted %v)", rec.Code, rec.Body.Len(), aborted)
	}
	<-h.renders
	if rec, _ := req(context.Background()); rec.Code != 200 || rec.Header().Get("X-Strata-Tier") != "render" || len(h.renders) != 0 {
		t.Fatalf("with a free slot: %d %q, %d slots held", rec.Code, rec.Header().Get("X-Strata-Tier"), len(h.renders))
	}
}

// rotateArbitrary turns the same way as rotate90s: at multiples of 90
// degrees their pixels are equal; at 45 the bounding box grows and its
// corners are transparent.
func TestRotateArbitrary(t *testing.T) {
	img := quadrants(40, 20)
	for _, deg := range []int{90, 180, 270} {
		if a, b := rotateArbitrary(img, float64(deg)), rotate90s(img, deg); a.Bounds() != b.Bounds() || !bytes.Equal(a.Pix, b.Pix) {
			t.Errorf("%d: %v and %v differ", deg, a.Bounds(), b.Bounds())
		}
	}
	r := rotateArbitrary(img, 45)
	if r.Bounds().Size() != image.Pt(43, 43) {
		t.Fatalf("45: %v", r.Bounds())
	}
	for _, c := range corners(r) {
		if c.A != 0 {
			t.Errorf("45: corner %v not transparent", c)
		}
	}
	// The top-left (red) quadrant turns to the top: the pixel above the
	// centre is red.
	if c := r.RGBAAt(21, 12); c != (color.RGBA{255, 0, 0, 255}) {
		t.Errorf("45: above the centre %v, want red", c)
	}
}
