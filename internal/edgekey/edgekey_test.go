package edgekey

import "testing"

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
