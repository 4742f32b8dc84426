package tier

import (
	"fmt"
	"math"
	"testing"
)

func TestOrdinal(t *testing.T) {
	for _, c := range []struct {
		key, group string
		want       int32
	}{
		{"v/T/R/12.m4s", "v/T/R/", 12},
		{"e/up/d1/oseg_00012.m4s/v/3", "e/up/d1/", 12},
		{"v/T/R/init.mp4", "v/T/R/", -1},
		{"v/T/R/init.m4s", "v/T/R/", -1},
		{"key", "key", -1},
		{"v/T/R/1234567890123.ts", "v/T/R/", 567890123},
	} {
		if got := ordinal(c.key, c.group); got != c.want {
			t.Errorf("ordinal(%q) = %d, want %d", c.key, got, c.want)
		}
	}
}

// TestSessionValue reads a rendition in order: after sessionMinRun steps
// the segments ahead of the viewer are worth more the nearer they are,
// those behind it nothing, and another group nothing.
func TestSessionValue(t *testing.T) {
	c, _, err := New(Options{RAMBytes: 1 << 20, DeviceSize: 64 << 20, BlockSize: 1 << 20}, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := c.freq
	key := func(n int) string { return fmt.Sprintf("v/T/R/%d.m4s", n) }
	for i := range 7 {
		c.Lookup(key(i), 0)
		c.Lookup(fmt.Sprintf("v/X/R/%d.m4s", (i*37)%50), 0) // random: no viewer
	}
	v := func(k string) float64 { return s.sessionValue(s.hashOf(k)) }
	if v(key(5)) != 0 || v(key(6)) != 0 {
		t.Errorf("segments the viewer passed: %v %v, want 0", v(key(3)), v(key(4)))
	}
	near, far := v(key(7)), v(key(22))
	if near <= far || far <= 0 {
		t.Errorf("ahead: next %v, 16 further %v: want next > further > 0", near, far)
	}
	for i := range 50 {
		if x := v(fmt.Sprintf("v/X/R/%d.m4s", i)); x != 0 {
			t.Errorf("random requests left a viewer: segment %d worth %v", i, x)
		}
	}
	// The viewer stops; many steps later it is taken to have left.
	for i := range 200 {
		c.Lookup(fmt.Sprintf("other/%d", i), 0)
	}
	if x := v(key(7)); x != 0 {
		t.Errorf("a viewer gone for 100 steps still vouches for its next segment: %v", x)
	}
}

// TestSessionRescue writes two titles' segments to flash, unread and
// aged, then lets a viewer read one title from its start: the segments
// ahead of the viewer are rescued from their victim block, the other
// title's are not, and without the session table neither is.
func TestSessionRescue(t *testing.T) {
	for _, sessions := range []int{0, -1} {
		const bs = 8192
		c, _, err := New(Options{RAMBytes: 1500, BlockSize: bs, DeviceSize: bs * 8, Alignment: 512, MonitorRoom: 1,
			FreqWindow: 1024, ReinsertMinEst: 3, Admission: Threshold{Max: 2}, Sessions: sessions}, 1)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, title := range []string{"A", "B"} {
			for _, n := range []int{14, 12, 10, 13, 11} { // out of order: no viewer
				keys = append(keys, fmt.Sprintf("v/%s/R/%d.m4s", title, n))
			}
		}
		for _, k := range append(keys, "Z/0", "Z/1") {
			l := c.Lookup(k, 0)
			c.Insert(k, 1000, nil, l.Token, 0)
			c.Monitor(0)
		}
		for {
			w := c.Feed(0, Signals{})
			if w == nil {
				w = c.Flush(0)
			}
			if w == nil {
				break
			}
			c.WriteDone(w, nil, 0)
		}
		for i := range 3000 { // age the sketch: the titles' own counts fade
			c.Lookup(fmt.Sprintf("noise%d", i), 0)
		}
		for n := range 6 {
			c.Lookup(fmt.Sprintf("v/A/R/%d.m4s", n), 0)
		}
		rescued := func(key string) bool {
			s, ok := c.ix.get(key)
			if !ok {
				t.Fatalf("%s not on flash", key)
			}
			for _, r := range c.planRescue(c.ix.blocks[s.Chunks[0].Block]) {
				if r.Key == key {
					return true
				}
			}
			return false
		}
		a, b := rescued("v/A/R/10.m4s"), rescued("v/B/R/10.m4s")
		if want := sessions >= 0; a != want || b {
			t.Errorf("sessions %d: ahead of the viewer rescued %v (want %v), the other title's %v (want false)",
				sessions, a, want, b)
		}
	}
}

// TestReadThroughRate: a rendition read through is scored by its readings
// times how often the renditions read through were read again, whatever
// its length, where capture-recapture (SessionCapture) scores a
// rendition read once by its length over the longest group's; a group
// never read in order, or in order for a few segments only, keeps
// capture-recapture's score either way.
func TestReadThroughRate(t *testing.T) {
	type world struct {
		short, long, random, brief float64 // scores of a segment of each
	}
	// run reads titles through, in order, then the short title S (40
	// segments) and the long one L (200) once each, and requests a group
	// X out of order; rereads of the first titles are read again.
	run := func(capture bool, rereads int) world {
		c, _, err := New(Options{RAMBytes: 1 << 20, DeviceSize: 64 << 20, BlockSize: 1 << 20, FreqWindow: 1 << 20,
			SessionCapture: capture}, 1)
		if err != nil {
			t.Fatal(err)
		}
		read := func(title string, n int) {
			for i := range n {
				c.Lookup(fmt.Sprintf("v/%s/R/%d.m4s", title, i), 0)
			}
		}
		for i := range 4 {
			read(fmt.Sprintf("T%d", i), 100)
		}
		for i := range rereads {
			read(fmt.Sprintf("T%d", i), 100)
		}
		read("S", 40)
		read("L", 200)
		for i := range 10 {
			c.Lookup(fmt.Sprintf("v/X/R/%d.m4s", (i*7)%10), 0)
		}
		read("Y", 12) // a viewer, not (yet) one reading its group through
		s := c.freq
		// segments no viewer is on its way to
		return world{s.score("v/S/R/1.m4s"), s.score("v/L/R/1.m4s"), s.score("v/X/R/3.m4s"), s.score("v/Y/R/1.m4s")}
	}
	once, again := run(false, 0), run(false, 3)
	if math.Abs(again.short-again.long) > 1e-9 {
		t.Errorf("read through once: short title %.3f, long title %.3f, want equal", again.short, again.long)
	}
	if again.short < once.short+0.2 {
		t.Errorf("a title read once scores %.3f when no title was read again, %.3f when three of four were: want markedly more",
			once.short, again.short)
	}
	capOnce, capAgain := run(true, 0), run(true, 3)
	if capAgain.short >= capAgain.long/2 || capOnce.short != capAgain.short {
		t.Errorf("SessionCapture: short %.3f long %.3f, short with no title read again %.3f: want short by its length, "+
			"whatever the rereads", capAgain.short, capAgain.long, capOnce.short)
	}
	if again.random != capAgain.random || once.random != capOnce.random {
		t.Errorf("a group never read in order: %.3f and %.3f, then %.3f and %.3f with SessionCapture",
			once.random, again.random, capOnce.random, capAgain.random)
	}
	// Twelve segments in order: random requests within a popular title
	// line up that far now and then; the group is not taken to be read
	// through.
	if again.brief != capAgain.brief {
		t.Errorf("a group read in order for 12 segments: %.3f, %.3f with SessionCapture", again.brief, capAgain.brief)
	}
}
