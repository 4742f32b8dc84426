package progress

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestTo: every step is one whole stamped line, even from parallel jobs.
func TestTo(t *testing.T) {
	var buf bytes.Buffer
	p := To(&buf)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				p("job %d step %d: %s", i, j, strings.Repeat("x", 100))
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	re := regexp.MustCompile(`^\[ +\d+s\] job \d step \d+: x{100}$`)
	if len(lines) != 400 {
		t.Fatalf("%d lines, want 400", len(lines))
	}
	for _, l := range lines {
		if !re.MatchString(l) {
			t.Fatalf("line %q is not one stamped step", l)
		}
	}
}

// TestWriter: text written in pieces is reported a line at a time; an
// unfinished line waits for its end.
func TestWriter(t *testing.T) {
	var got []string
	w := Writer(func(format string, args ...any) { got = append(got, fmt.Sprintf(format, args...)) })
	fmt.Fprint(w, "real write ")
	fmt.Fprint(w, "random 100 ops/s\nreal read 9")
	if len(got) != 1 || got[0] != "real write random 100 ops/s" {
		t.Fatalf("got %q", got)
	}
	fmt.Fprint(w, "0 ops/s\n")
	if len(got) != 2 || got[1] != "real read 90 ops/s" {
		t.Fatalf("got %q", got)
	}
}
