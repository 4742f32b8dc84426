package ident

import (
	"errors"
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	for _, s := range []string{"bbb", "Big_Buck-Bunny.v2", "1500k", "0.m4s", strings.Repeat("a", MaxNameLen)} {
		if err := ValidName(s); err != nil {
			t.Errorf("ValidName(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"", ".", "..", ".hidden", "a/b", `a\b`, "a b", "a\x00", "é", strings.Repeat("a", MaxNameLen+1)} {
		if err := ValidName(s); !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidName(%q) = %v, want ErrInvalid", s, err)
		}
	}
}

func TestParseObject(t *testing.T) {
	s, err := ParseObject("bbb/700k/12.m4s")
	if err != nil || s != (Object{"bbb", "700k", "12.m4s"}) || s.Key() != "v/bbb/700k/12.m4s" {
		t.Fatalf("got %+v %v", s, err)
	}
	m, err := ParseObject("bbb/manifest.mpd")
	if err != nil || m != (Object{Video: "bbb", Name: "manifest.mpd"}) || m.Path() != "bbb/manifest.mpd" {
		t.Fatalf("got %+v %v", m, err)
	}
	for _, bad := range []string{"bbb", "bbb/700k/12.m4s/x", "../700k/1.m4s", "bbb//1.m4s", "/bbb/700k/1.m4s", "bbb/.."} {
		if _, err := ParseObject(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseObject(%q) = %v", bad, err)
		}
	}
}

func TestSegmentNumber(t *testing.T) {
	cases := map[string]int64{"0.m4s": 0, "17.m4s": 17, "4294967295.m4s": 4294967295,
		"4294967296.m4s": -1, "017.m4s": -1, "init.mp4": -1, ".m4s": -1, "-1.m4s": -1, "1.m4s.m4s": -1}
	for name, want := range cases {
		n, ok := SegmentNumber(name)
		if (want < 0) == ok || ok && int64(n) != want {
			t.Errorf("SegmentNumber(%q) = %d %t, want %d", name, n, ok, want)
		}
		if ok && SegmentName(n) != name {
			t.Errorf("SegmentName(%d) = %q", n, SegmentName(n))
		}
	}
}

// FuzzParseObject checks that whatever parses is made of valid names and
// round-trips, so no parsed id can address a path outside its directory.
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{"bbb/700k/12.m4s", "a/b/init.mp4", "../x/y", "a/./b", "a/b/c/d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seg, err := ParseObject(s)
		if err != nil {
			return
		}
		if seg.String() != s {
			t.Fatalf("%q round-trips to %q", s, seg.String())
		}
		for _, p := range []string{seg.Video, seg.Rendition, seg.Name} {
			if p == "" && seg.Rendition == "" {
				continue
			}
			if p == "." || p == ".." || strings.ContainsAny(p, "/\\\x00") || ValidName(p) != nil {
				t.Fatalf("%q parsed to unsafe component %q", s, p)
			}
		}
		if n, ok := SegmentNumber(seg.Name); ok && SegmentName(n) != seg.Name {
			t.Fatalf("segment name %q round-trips to %q", seg.Name, SegmentName(n))
		}
	})
}
