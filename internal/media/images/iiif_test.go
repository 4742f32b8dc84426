package images

import (
	"encoding/json"
	"errors"
	"image"
	"net/http/httptest"
	"testing"
)

func TestParseSize(t *testing.T) {
	good := map[string]Size{
		"max":      {Kind: SizeMax},
		"150,":     {Kind: SizeWidth, W: 150},
		",75":      {Kind: SizeHeight, H: 75},
		"pct:12.5": {Kind: SizePct, Pct: 12.5},
		"640,480":  {Kind: SizeExact, W: 640, H: 480},
		"!640,480": {Kind: SizeFit, W: 640, H: 480},
	}
	for s, want := range good {
		got, err := ParseSize(s)
		if err != nil || got != want || got.String() != s {
			t.Errorf("%q: %+v %v (String %q)", s, got, err, got.String())
		}
	}
	for _, s := range []string{"", "full", "^max", "^100,", ",", "0,", ",0", "-1,", "1,2,3", "!100,", "!,100",
		"pct:0", "pct:101", "pct:1e1", "pct:", "65536,", "+5,", " 5,", "5 ,", "1.5,", "max ", "pct:NaN", "pct:inf"} {
		if _, err := ParseSize(s); !errors.Is(err, ErrBadIIIF) {
			t.Errorf("%q: accepted", s)
		}
	}
}

func TestResolve(t *testing.T) {
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
		{"!9000,9000", image.Pt(4000, 3000), false}, // fits without enlarging
		{"100,100", image.Pt(100, 100), false},
		{"4001,", image.Pt(4001, 3001), true},
		{"10,3001", image.Pt(10, 3001), true},
	}
	for _, c := range cases {
		z, _ := ParseSize(c.size)
		got, err := z.Resolve(4000, 3000)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("%s: %v %v, want %v error=%v", c.size, got, err, c.want, c.err)
		}
	}
}

func TestSelectVariant(t *testing.T) {
	cands := []Variant{{Name: "t", Width: 100, Height: 75}, {Name: "s", Width: 600, Height: 450}, {Name: "l", Width: 2048, Height: 1536}}
	cases := map[image.Point]string{
		{1, 1}: "t", {100, 75}: "t", {101, 10}: "s", {100, 76}: "s", {600, 450}: "s",
		{601, 1}: "l", {2048, 1536}: "l", {3000, 2000}: "l", {10, 1000}: "l",
	}
	for want, name := range cases {
		if v, ok := SelectVariant(cands, want); !ok || v.Name != name {
			t.Errorf("%v: %s, want %s", want, v.Name, name)
		}
	}
	if _, ok := SelectVariant(nil, image.Pt(1, 1)); ok {
		t.Error("selected from nothing")
	}
}

// iiifCandidates lists each stored JPEG size once, smallest first, and
// leaves out a PNG original.
func TestIIIFCandidates(t *testing.T) {
	m := &Meta{Variants: []Variant{
		{Name: "thumbnail", Width: 100, Height: 67, ContentType: "image/jpeg"},
		{Name: "small", Width: 300, Height: 200, ContentType: "image/jpeg"},
		{Name: "medium", Width: 300, Height: 200, ContentType: "image/jpeg", Blob: "small"},
		{Name: "original", Width: 300, Height: 200, ContentType: "image/png"},
	}}
	got := iiifCandidates(m)
	if len(got) != 2 || got[0].Name != "thumbnail" || got[1].Name != "small" {
		t.Fatalf("%+v", got)
	}
}

// The size parser never panics, accepts only what it can print back, and
// resolves to sizes within the image.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"max", "100,", ",100", "pct:50", "100,200", "!100,200", "^max", "pct:0.001", "65535,65535"} {
		f.Add(s, 4000, 3000)
	}
	f.Fuzz(func(t *testing.T, s string, w, h int) {
		z, err := ParseSize(s)
		if err != nil {
			if !errors.Is(err, ErrBadIIIF) {
				t.Fatalf("%q: untyped error %v", s, err)
			}
			return
		}
		if back, err := ParseSize(z.String()); err != nil || back != z {
			t.Fatalf("%q -> %+v -> %q -> %+v %v", s, z, z.String(), back, err)
		}
		w, h = 1+int(uint(w)%maxSide), 1+int(uint(h)%maxSide)
		p, err := z.Resolve(w, h)
		if err == nil && (p.X < 1 || p.Y < 1 || p.X > w || p.Y > h) {
			t.Fatalf("%q on %dx%d: %v", s, w, h, p)
		}
	})
}

// TestIIIFInfoNotPoisoned: info.json's id no longer follows an untrusted
// X-Forwarded-Proto (one client could have a shared cache serve every
// other an https or http id of its choosing, for an hour, with no Vary),
// says Vary: Host when it comes from the Host, and follows the forwarded
// headers only when told to trust them (issue 14, finding 4).
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
