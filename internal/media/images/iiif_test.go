package images

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"net/http/httptest"
	"testing"
)

func TestParseSize(t *testing.T) {
	good := map[string]Size{
		"max":          {Kind: SizeMax},
		"^max":         {Kind: SizeMax, Up: true},
		"150,":         {Kind: SizeWidth, W: 150},
		"^150,":        {Kind: SizeWidth, W: 150, Up: true},
		",75":          {Kind: SizeHeight, H: 75},
		"pct:12.5":     {Kind: SizePct, Pct: 12.5},
		"^pct:250":     {Kind: SizePct, Pct: 250, Up: true},
		"640,480":      {Kind: SizeExact, W: 640, H: 480},
		"^640,480":     {Kind: SizeExact, W: 640, H: 480, Up: true},
		"!640,480":     {Kind: SizeFit, W: 640, H: 480},
		"^!6400,64800": {Kind: SizeFit, W: 6400, H: 64800, Up: true},
	}
	for s, want := range good {
		got, err := ParseSize(s)
		if err != nil || got != want || got.String() != s {
			t.Errorf("%q: %+v %v (String %q)", s, got, err, got.String())
		}
	}
	for _, s := range []string{"", "full", "^", "^^max", "!^100,100", ",", "0,", ",0", "-1,", "1,2,3", "!100,", "!,100",
		"pct:0", "pct:101", "pct:1e1", "pct:", "pct:.", "pct:1.2.3", "^pct:0", "^pct:10001", "65536,", "+5,", " 5,", "5 ,",
		"1.5,", "max ", "pct:NaN", "pct:inf", "^pct:Inf"} {
		if _, err := ParseSize(s); !errors.Is(err, ErrBadIIIF) {
			t.Errorf("%q: accepted", s)
		}
	}
}

func TestResolve(t *testing.T) {
	lim := OutputLimits{MaxWidth: 5000, MaxHeight: 5000, MaxArea: 14_000_000}
	cases := []struct {
		size string
		want image.Point
		err  bool
	}{
		{"max", image.Pt(4000, 3000), false},
		{"1000,", image.Pt(1000, 750), false},
		{",300", image.Pt(400, 300), false},
		{"pct:10", image.Pt(400, 300), false},
		{"!1000,1000", image.Pt(1000, 750), false},
		{"!9000,9000", image.Pt(9000, 6750), true}, // only with ^ (the validator's size_noup)
		{"!4000,4000", image.Pt(4000, 3000), false},
		{"100,100", image.Pt(100, 100), false},
		{"4001,", image.Pt(4001, 3001), true},
		{"10,3001", image.Pt(10, 3001), true},
		{"pct:100", image.Pt(4000, 3000), false},
		{"^4001,", image.Pt(4001, 3001), false},
		{"^pct:105", image.Pt(4200, 3150), false},
		{"^!4800,4800", image.Pt(4800, 3600), true}, // above maxArea
		{"^!4200,9000", image.Pt(4200, 3150), false},
		{"^max", image.Pt(4320, 3240), false}, // up to maxArea
		{"^5001,", image.Pt(5001, 3751), true},
		{"^pct:200", image.Pt(8000, 6000), true},
	}
	for _, c := range cases {
		z, _ := ParseSize(c.size)
		got, err := z.ResolveLimited(4000, 3000, lim)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("%s: %v %v, want %v error=%v", c.size, got, err, c.want, c.err)
		}
	}
	// max and ^max are scaled to the limits, never beyond them.
	small := OutputLimits{MaxWidth: 1000, MaxHeight: 1000, MaxArea: 500_000}
	for s, want := range map[string]image.Point{"max": {816, 612}, "^max": {816, 612}} {
		z, _ := ParseSize(s)
		if got, err := z.ResolveLimited(4000, 3000, small); got != want || err != nil {
			t.Errorf("%s under %+v: %v %v, want %v", s, small, got, err, want)
		}
	}
	z, _ := ParseSize("^max")
	if got, err := z.ResolveLimited(400, 300, small); got != image.Pt(816, 612) || err != nil {
		t.Errorf("^max of 400x300: %v %v", got, err)
	}
}

func TestParseRegion(t *testing.T) {
	good := map[string]Region{
		"full":          {Kind: RegionFull},
		"square":        {Kind: RegionSquare},
		"10,20,30,40":   {Kind: RegionPixels, X: 10, Y: 20, W: 30, H: 40},
		"pct:1,2.5,9,9": {Kind: RegionPct, X: 1, Y: 2.5, W: 9, H: 9},
	}
	for s, want := range good {
		got, err := ParseRegion(s)
		if err != nil || got != want || got.String() != s {
			t.Errorf("%q: %+v %v (String %q)", s, got, err, got.String())
		}
	}
	for _, s := range []string{"", "max", "Full", "1,2,3", "1,2,3,4,5", "0,0,0,10", "0,0,10,0", "-1,0,10,10", "1.5,0,10,10",
		"pct:0,0,0,10", "pct:0,0,101,10", "pct:a,0,1,1", "0,0,1e3,1", "0,0,1234567890,1", "pct:", "square "} {
		if _, err := ParseRegion(s); !errors.Is(err, ErrBadIIIF) {
			t.Errorf("%q: accepted", s)
		}
	}
}

func TestRegionResolve(t *testing.T) {
	cases := map[string]image.Rectangle{
		"full":             image.Rect(0, 0, 1000, 600),
		"square":           image.Rect(200, 0, 800, 600),
		"10,20,30,40":      image.Rect(10, 20, 40, 60),
		"900,500,500,500":  image.Rect(900, 500, 1000, 600), // cropped to the image
		"pct:10,50,20,50":  image.Rect(100, 300, 300, 600),
		"pct:0,0,100,100":  image.Rect(0, 0, 1000, 600),
		"pct:99.9,0,50,10": image.Rect(999, 0, 1000, 60),
	}
	for s, want := range cases {
		g, _ := ParseRegion(s)
		if got, err := g.Resolve(1000, 600); got != want || err != nil {
			t.Errorf("%s: %v %v, want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"1000,0,10,10", "0,600,10,10", "5000,5000,1,1", "pct:100,0,10,10"} {
		g, _ := ParseRegion(s)
		if _, err := g.Resolve(1000, 600); !errors.Is(err, ErrBadIIIF) {
			t.Errorf("%s: outside the image, accepted", s)
		}
	}
}

func TestParseRotationAndFile(t *testing.T) {
	for s, want := range map[string]Rotation{"0": {}, "90": {Degrees: 90}, "180.0": {Degrees: 180}, "270": {Degrees: 270},
		"360": {}, "!0": {Mirror: true}, "!90": {Mirror: true, Degrees: 90}, "45.5": {Degrees: 45.5}, "!359.999": {Mirror: true, Degrees: 359.999}} {
		if got, err := ParseRotation(s); got != want || err != nil {
			t.Errorf("rotation %q: %+v %v", s, got, err)
		}
	}
	for _, s := range []string{"", "-90", "450", "360.5", "!", "!!90", "90!", "1e2", "NaN", " 90", "1.2.3"} {
		if _, err := ParseRotation(s); !errors.Is(err, ErrBadIIIF) {
			t.Errorf("rotation %q: accepted", s)
		}
	}
	for _, f := range []string{"default.jpg", "color.png", "gray.jpg", "bitonal.png"} {
		if _, err := ParseIIIF("full", "max", "0", f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range []string{"default", "grey.jpg", "default.webp", "default.gif", "default.jpg.png", ".jpg", "native.jpg"} {
		if _, err := ParseIIIF("full", "max", "0", f); !errors.Is(err, ErrBadIIIF) {
			t.Errorf("%s: accepted", f)
		}
	}
}

// bigMeta is a 6000x4000 JPEG original with the default ladder.
func bigMeta() *Meta {
	return &Meta{ID: "big", Width: 6000, Height: 4000, Variants: []Variant{
		{Name: "thumbnail", Width: 100, Height: 67, ContentType: "image/jpeg"},
		{Name: "small", Width: 600, Height: 400, ContentType: "image/jpeg"},
		{Name: "medium", Width: 1280, Height: 853, ContentType: "image/jpeg"},
		{Name: "large", Width: 2048, Height: 1365, ContentType: "image/jpeg"},
		{Name: "original", Width: 6000, Height: 4000, ContentType: "image/jpeg"},
	}}
}

// PlanIIIF derives from the smallest variant whose crop has the pixels
// asked for: a 200-pixel response never decodes the 6000-pixel original.
func TestPlanIIIF(t *testing.T) {
	o := (&IIIFOptions{}).EnsureDefaults()
	cases := []struct {
		region, size, rotation, file string
		variant                      string
		crop                         image.Rectangle
		canonical                    string
	}{
		{"full", "200,", "0", "default.jpg", "small", image.Rect(0, 0, 600, 400), "full/200,133/0/default.jpg"},
		{"full", "100,", "0", "color.jpg", "thumbnail", image.Rect(0, 0, 100, 67), "full/100,67/0/default.jpg"},
		{"square", "200,", "90", "gray.png", "small", image.Rect(100, 0, 500, 400), "1000,0,4000,4000/200,200/90/gray.png"},
		{"0,0,3000,2000", "200,", "0", "default.jpg", "small", image.Rect(0, 0, 300, 200), "0,0,3000,2000/200,133/0/default.jpg"},
		{"0,0,600,400", "200,", "0", "default.jpg", "large", image.Rect(0, 0, 205, 137), "0,0,600,400/200,133/0/default.jpg"},
		{"pct:50,50,50,50", "max", "!180", "bitonal.jpg", "original", image.Rect(3000, 2000, 6000, 4000), "3000,2000,3000,2000/max/!180/bitonal.jpg"},
		{"100,100,200,200", "max", "0", "default.jpg", "original", image.Rect(100, 100, 300, 300), "100,100,200,200/max/0/default.jpg"},
		{"100,100,200,200", "^400,", "0", "default.jpg", "original", image.Rect(100, 100, 300, 300), "100,100,200,200/^400,400/0/default.jpg"},
		{"full", "!1024,1024", "270", "default.jpg", "medium", image.Rect(0, 0, 1280, 853), "full/1024,683/270/default.jpg"},
	}
	for _, c := range cases {
		q, err := ParseIIIF(c.region, c.size, c.rotation, c.file)
		if err != nil {
			t.Fatal(err)
		}
		p, err := PlanIIIF(bigMeta(), q, o)
		if err != nil || p.Variant.Name != c.variant || p.Crop != c.crop || p.Canonical != c.canonical {
			t.Errorf("%s/%s/%s/%s: %s %v %q %v; want %s %v %q", c.region, c.size, c.rotation, c.file,
				p.Variant.Name, p.Crop, p.Canonical, err, c.variant, c.crop, c.canonical)
		}
	}
}

// A request that needs a variant above MaxDecodePixels is refused before
// anything is read; one beyond the output limits is a 400.
func TestPlanIIIFLimits(t *testing.T) {
	o := (&IIIFOptions{MaxDecodePixels: 3_000_000, MaxOutputPixels: 5_000_000}).EnsureDefaults()
	q, _ := ParseIIIF("full", "2049,", "0", "default.jpg")
	if _, err := PlanIIIF(bigMeta(), q, o); !errors.Is(err, ErrTooMuchWork) || statusOf(err) != 413 {
		t.Errorf("decoding the original: %v", err)
	}
	// max is then the most the largest decodable variant holds.
	for region, want := range map[string]image.Point{"full": {2048, 1365}, "0,0,3000,2000": {1024, 682}} {
		q, _ = ParseIIIF(region, "max", "0", "default.jpg")
		if p, err := PlanIIIF(bigMeta(), q, o); err != nil || p.Size != want || p.Variant.Name != "large" {
			t.Errorf("%s/max under MaxDecodePixels: %v %s %v, want %v from large", region, p.Size, p.Variant.Name, err, want)
		}
	}
	info := newInfo("x", bigMeta(), o)
	if fmt.Sprint(info.Sizes) != "[{100 67} {600 400} {1280 853} {2048 1365}]" || fmt.Sprint(info.Tiles[0].ScaleFactors) != "[4 8 16]" {
		t.Errorf("info under MaxDecodePixels: sizes %v tiles %+v", info.Sizes, info.Tiles)
	}
	o = (&IIIFOptions{MaxOutputPixels: 1_000_000}).EnsureDefaults()
	q, _ = ParseIIIF("full", "1300,", "0", "default.jpg")
	if _, err := PlanIIIF(bigMeta(), q, o); !errors.Is(err, ErrBadIIIF) || statusOf(err) != 400 {
		t.Errorf("1300x867 above maxArea: %v", err)
	}
	q, _ = ParseIIIF("full", "max", "0", "default.jpg")
	if p, err := PlanIIIF(bigMeta(), q, o); err != nil || p.Size != image.Pt(1224, 816) || p.Variant.Name != "medium" {
		t.Errorf("max: %+v %v", p, err)
	}
}

// iiifCandidates lists each stored size once, the JPEG rung before the
// original of the same size, smallest first.
func TestIIIFCandidates(t *testing.T) {
	m := &Meta{Variants: []Variant{
		{Name: "thumbnail", Width: 100, Height: 67, ContentType: "image/jpeg"},
		{Name: "small", Width: 300, Height: 200, ContentType: "image/jpeg"},
		{Name: "medium", Width: 300, Height: 200, ContentType: "image/jpeg", Blob: "small"},
		{Name: "original", Width: 300, Height: 200, ContentType: "image/png"},
		{Name: "original2", Width: 900, Height: 600, ContentType: "image/png"},
	}}
	got := iiifCandidates(m)
	if len(got) != 3 || got[0].Name != "thumbnail" || got[1].Name != "small" || got[2].Name != "original2" {
		t.Fatalf("%+v", got)
	}
}

func TestScaleFactors(t *testing.T) {
	for _, c := range []struct {
		w, h, tile int
		want       string
	}{{1000, 1000, 512, "[1 2]"}, {512, 100, 512, "[1]"}, {6000, 4000, 512, "[1 2 4 8 16]"}} {
		if got := fmt.Sprint(scaleFactors(c.w, c.h, c.tile)); got != c.want {
			t.Errorf("%+v: %s", c, got)
		}
	}
}

// TestIIIFInfoNotPoisoned: info.json's id no longer follows an untrusted
// X-Forwarded-Proto (one client could have a shared cache serve every
// other an https or http id of its choosing, for an hour, with no Vary),
// says Vary: Host when it comes from the Host, and follows the forwarded
// headers only when told to trust them.
func TestIIIFInfoNotPoisoned(t *testing.T) {
	st := openTestStore(t, nil)
	if _, _, err := st.Ingest("p", encodeTestPNG(t, testPhoto(300, 200, 1))); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts     HandlerOptions
		host     string
		wantID   string
		wantVary string
	}{
		{HandlerOptions{}, "img.test", "http://img.test/iiif/3/p", "Host"},
		{HandlerOptions{}, "img.test/evil?x=", "http://localhost/iiif/3/p", "Host"},
		{HandlerOptions{BaseURL: "https://cdn.test/"}, "img.test", "https://cdn.test/iiif/3/p", ""},
		{HandlerOptions{TrustForwarded: true}, "img.test", "https://proxy.test/iiif/3/p", "Host, X-Forwarded-Proto, X-Forwarded-Host"},
	} {
		h := NewHandler(st, nil, c.opts)
		req := httptest.NewRequest("GET", "/iiif/3/p/info.json", nil)
		req.SetPathValue("id", "p")
		req.Host = c.host
		req.Header.Set("X-Forwarded-Proto", "https")
		req.Header.Set("X-Forwarded-Host", "proxy.test")
		rec := httptest.NewRecorder()
		h.iiifInfo(rec, req)
		var info infoJSON
		if err := json.Unmarshal(rec.Body.Bytes(), &info); err != nil || rec.Code != 200 {
			t.Fatalf("%+v: %d %v", c.opts, rec.Code, err)
		}
		if info.ID != c.wantID || rec.Header().Get("Vary") != c.wantVary {
			t.Errorf("%+v, Host %q: id %q Vary %q; want %q, %q", c.opts, c.host, info.ID, rec.Header().Get("Vary"), c.wantID, c.wantVary)
		}
	}
}

func TestIIIFOptionsDefaults(t *testing.T) {
	o := (&IIIFOptions{MaxOutputPixels: -1, MaxConcurrent: -3, Quality: 500, MaxOutputSide: 1 << 20}).EnsureDefaults()
	if o.MaxOutputPixels != DefaultIIIFMaxOutputPixels || o.MaxConcurrent < 1 || o.Quality != 100 || o.MaxOutputSide != maxSide ||
		o.MaxDecodePixels != DefaultIIIFMaxDecodePixels || o.TileSize != DefaultIIIFTileSize {
		t.Fatalf("%+v", o)
	}
}
