package loadgen

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/storage/origin"
)

func TestPickFollowsLaw(t *testing.T) {
	titles := []origin.Title{
		{ID: "a", SegmentDuration: 2, Renditions: []origin.Rendition{{ID: "r1", Segments: 4, StartNumber: 10}, {ID: "r2", Segments: 4, StartNumber: 10}}},
		{ID: "no-segments", Renditions: []origin.Rendition{{ID: "r1"}}},
		{ID: "b c", Renditions: []origin.Rendition{{ID: "r1", Segments: 1}, {ID: "empty"}}},
		{ID: "d", SegmentDuration: 0.5, Renditions: []origin.Rendition{{ID: "r1", Segments: 3, StartNumber: 1}}},
	}
	p, err := planFor("http://h:1/base", titles, Exponent(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.targets) != 3 || p.targets[1].id != "b c" || p.targets[1].deadline != DefaultDeadline {
		t.Fatalf("targets %+v", p.targets)
	}
	r := rand.New(rand.NewPCG(1, 2))
	const n = 60000
	ranks := make([]int, 3)
	urls := map[string]int{}
	for range n {
		q := p.pick(r)
		ranks[q.rank]++
		urls[q.url]++
	}
	for i, c := range ranks {
		if got, want := float64(c)/n, p.zipf.P(i); math.Abs(got-want) > 4*math.Sqrt(want/n) {
			t.Errorf("rank %d drawn %.4f, want %.4f", i, got, want)
		}
	}
	checkURLs(t, urls, ranks)
}

// checkURLs checks the drawn URLs: every segment of a title's renditions,
// each about equally often.
func checkURLs(t *testing.T, urls map[string]int, ranks []int) {
	t.Helper()
	want := map[string]float64{"http://h:1/base/videos/b%20c/r1/0.m4s": float64(ranks[1])}
	for rd := 1; rd <= 2; rd++ {
		for seg := 10; seg < 14; seg++ {
			want[fmt.Sprintf("http://h:1/base/videos/a/r%d/%d.m4s", rd, seg)] = float64(ranks[0]) / 8
		}
	}
	for seg := 1; seg <= 3; seg++ {
		want[fmt.Sprintf("http://h:1/base/videos/d/r1/%d.m4s", seg)] = float64(ranks[2]) / 3
	}
	if len(urls) != len(want) {
		t.Fatalf("drew %d distinct URLs, want %d: %v", len(urls), len(want), urls)
	}
	for u, w := range want {
		if got := float64(urls[u]); math.Abs(got-w) > 5*math.Sqrt(w) {
			t.Errorf("%s drawn %v times, want about %v", u, got, w)
		}
	}
}

func TestPlanRejectsEmptyCatalog(t *testing.T) {
	_, err := planFor("http://h", []origin.Title{{ID: "a"}}, Theta(0.2))
	if !errors.Is(err, ErrEmptyCatalog) || !strings.Contains(err.Error(), "1 titles") {
		t.Fatalf("error %v", err)
	}
}

func TestLaw(t *testing.T) {
	var c Config
	c.EnsureDefaults()
	if c.Popularity.S() != 0.8 || c.Popularity.String() != "theta=0.2 (s=0.8)" {
		t.Fatalf("default law %v", c.Popularity)
	}
	if l := Exponent(0); l.IsZero() || l.S() != 0 || l.String() != "s=0" {
		t.Fatalf("uniform law %v", l)
	}
	if Theta(1).S() != 0 || Theta(0).S() != 1 {
		t.Fatal("theta does not map to s = 1 - theta")
	}
}

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8080":        "http://h:8080",
		"http://h:8080/":       "http://h:8080",
		"https://h/strata//":   "https://h/strata",
		"http://h/a%2Fb/":      "http://h/a%2Fb",
		"http://[::1]:80/x/y/": "http://[::1]:80/x/y",
	} {
		if got, err := baseURL(in); err != nil || got != want {
			t.Errorf("baseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "h:80", "/videos", "http://h/?x=1", "mailto:a@b", "http://h/#f"} {
		if _, err := baseURL(bad); !errors.Is(err, ErrBadURL) {
			t.Errorf("baseURL(%q): error %v", bad, err)
		}
	}
}

// TestReleasesShiftPopularity: after a release the catalog's last title
// is drawn as often as the top title was, and the former top one rank
// lower.
func TestReleasesShiftPopularity(t *testing.T) {
	var titles []origin.Title
	for _, id := range []string{"a", "b", "c", "d"} {
		titles = append(titles, origin.Title{ID: id, Renditions: []origin.Rendition{{ID: "r", Segments: 2, StartNumber: 1}}})
	}
	p, err := planFor("http://h:1", titles, Exponent(1))
	if err != nil {
		t.Fatal(err)
	}
	const n = 40000
	for released, top := range []int{0, 3, 2} {
		r := rand.New(rand.NewPCG(5, 6))
		counts := make([]int, 4)
		for range n {
			counts[p.pickShifted(r, released).rank]++
		}
		for rank := range 4 {
			i := ((rank-released)%4 + 4) % 4
			if got, want := float64(counts[i])/n, p.zipf.P(rank); math.Abs(got-want) > 4*math.Sqrt(want/n) {
				t.Errorf("released %d: title %d drawn %.4f, want rank %d's %.4f", released, i, got, rank, want)
			}
		}
		if slices.Index(counts, slices.Max(counts)) != top {
			t.Errorf("released %d: most drawn title %d, want %d (%v)", released, slices.Index(counts, slices.Max(counts)), top, counts)
		}
	}
	c := Config{ReleaseEvery: 10 * time.Second}
	if c.released(25*time.Second) != 2 || (&Config{}).released(time.Hour) != 0 {
		t.Error("released counts")
	}
}
