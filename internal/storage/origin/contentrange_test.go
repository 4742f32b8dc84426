package origin

import "testing"

// The answer to a ranged GET must start at the offset asked, be as long
// as its Content-Length, and name the object's size: anything else, and
// anything httpcache.ParseContentRange refuses (signs, trailing bytes, an
// unknown size), is refused.
func TestCheckContentRange(t *testing.T) {
	for _, c := range []struct {
		cr     string
		off, n int64
		size   int64 // -1: refused
	}{
		{"", 0, 100, 100},
		{"", 10, 90, -1},
		{"bytes 10-19/100", 10, 10, 100},
		{"bytes 0-99/100", 0, 100, 100},
		{"bytes 10-19/*", 10, 10, -1},
		{"bytes 10-19/15", 10, 10, -1},
		{"bytes 11-19/100", 10, 9, -1},
		{"bytes 10-19/100", 10, 9, -1},
		{"items 10-19/100", 10, 10, -1},
		{"bytes +10-19/100", 10, 10, -1},
		{"bytes 10-19/100x", 10, 10, -1},
		{"bytes */100", 10, 10, -1},
	} {
		size, err := checkContentRange(c.cr, c.off, c.n)
		if c.size < 0 && err == nil || c.size >= 0 && (err != nil || size != c.size) {
			t.Errorf("%q from %d, %d bytes: %d %v, want size %d", c.cr, c.off, c.n, size, err, c.size)
		}
	}
}
