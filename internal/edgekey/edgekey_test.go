package edgekey

import (
	"strings"
	"testing"
)

// TestTierGroup: the segments of one rendition share a group, other
// renditions and titles do not; keys of the videos module keep their
// directory.
func TestGroup(t *testing.T) {
	key := func(target string) string { return Whole("/edge/", "http://127.0.0.1:1/", target) }
	a1, a2 := key("videos/t1/700k/1.m4s"), key("videos/t1/700k/2.m4s")
	b1, c1 := key("videos/t1/1500k/1.m4s"), key("videos/t2/700k/1.m4s")
	if Group(a1) != Group(a2) {
		t.Errorf("segments of one rendition: groups %q and %q differ", Group(a1), Group(a2))
	}
	if g := Group(a1); g == Group(b1) || g == Group(c1) || g == a1 {
		t.Errorf("group %q shared with another rendition or title, or the key itself", g)
	}
	if want := Object(Upstream("/edge/", "http://127.0.0.1:1/"), "videos/t1/700k/1.m4s"); a1[:len(want)] != want {
		t.Errorf("Whole %q does not extend the object's key %q", a1, want)
	}
	if g := Group("t1/700k/3.m4s"); g != "t1/700k/" {
		t.Errorf("videos key: group %q, want t1/700k/", g)
	}
}

// TestAppendObject: Object, built in one buffer, is the scheme's key
// directory of SplitTarget's elements, for short, deep (past maxDirs) and
// odd targets, with and without a query (slashes in it included).
func TestAppendObject(t *testing.T) {
	up := Upstream("/", "http://127.0.0.1:1/")
	deep := strings.Repeat("d/", maxDirs+3) + "x.m4s"
	for _, target := range []string{
		"", "a", "a/", "/", "//", "videos/t1/700k/1.m4s", "seg.m4s?a=1&b=2", "x/y?q=/a/b?c",
		"?", "a/?", deep, deep + "?k=v/w", strings.Repeat("d/", maxDirs) + "n",
	} {
		dirs, name := SplitTarget(target)
		want := Dir(up, dirs) + "o" + hash36(name) + "/"
		if got := Object(up, target); got != want {
			t.Errorf("Object(%q) = %q, want %q", target, got, want)
		}
		if got := string(AppendObject([]byte("pre"), up, target)); got != "pre"+want {
			t.Errorf("AppendObject(pre, %q) = %q, want pre%q", target, got, want)
		}
	}
}
