package loadgen

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/storage/origin"
)

// TestViewersReadTitlesInOrder: one viewer reads a rendition's segments
// from its first to its last, then starts another title; with several,
// no segment of a rendition is requested more often than the one before
// it (every request continues a viewer's reading).
func TestViewersReadTitlesInOrder(t *testing.T) {
	var titles []origin.Title
	for _, id := range []string{"a", "b", "c", "d"} {
		titles = append(titles, catalogOf([]titleSpec{{id: id, duration: 2}})...)
	}
	p, err := planFor("", titles, Theta(DefaultTheta))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	one := newViewers(p, 1, rng, 0)
	var got []string
	for range 10 {
		q := one.pick(rng, 0)
		i := strings.LastIndexByte(q.url, '/')
		got = append(got, q.url[i+1:])
	}
	want := "1.m4s 2.m4s 3.m4s 4.m4s 5.m4s 1.m4s 2.m4s 3.m4s 4.m4s 5.m4s"
	if strings.Join(got, " ") != want {
		t.Fatalf("one viewer read %v, want %s", got, want)
	}

	many := newViewers(p, 8, rng, 0)
	count := map[string]int{} // rendition directory + segment number
	titlesSeen := map[int]int{}
	for range 4000 {
		q := many.pick(rng, 0)
		i := strings.LastIndexByte(q.url, '/')
		dir, n := q.url[:i+1], q.url[i+1:]
		titlesSeen[q.rank]++
		count[dir+n]++
		if n != "1.m4s" {
			prev := map[string]string{"2.m4s": "1.m4s", "3.m4s": "2.m4s", "4.m4s": "3.m4s", "5.m4s": "4.m4s"}[n]
			if count[dir+n] > count[dir+prev] {
				t.Fatalf("%s%s requested %d times, its previous segment %d", dir, n, count[dir+n], count[dir+prev])
			}
		}
	}
	if titlesSeen[0] <= titlesSeen[3] {
		t.Errorf("titles not drawn by the law: %v", titlesSeen)
	}
}

// TestRunViewers: a run with Viewers sends every request to the server
// and says so in its report.
func TestRunViewers(t *testing.T) {
	srv := newFakeServer(t, []titleSpec{{id: "a", duration: 5}, {id: "b", duration: 5}}, fakeOptions{})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Rate: 200, Duration: 300 * time.Millisecond, Viewers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Viewers != 3 || rep.Completed == 0 || rep.Errors != 0 {
		t.Fatalf("viewers %d, completed %d, errors %d", rep.Viewers, rep.Completed, rep.Errors)
	}
	var b strings.Builder
	rep.WriteText(&b)
	if !strings.Contains(b.String(), "from 3 viewers") {
		t.Errorf("report does not name the viewers:\n%s", b.String())
	}
}
