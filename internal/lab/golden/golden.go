// Package golden compares a test's output with a file under testdata, which the -rewrite flag regenerates.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata with this run's output")

// Check fails t unless got equals the contents of path; under -rewrite it
// writes got to path instead. The failure shows the first differing line.
func Check(t testing.TB, path, got string) {
	t.Helper()
	if *rewrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -rewrite to create it)", err)
	}
	if got == string(want) {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		gl, wl := line(g, i), line(w, i)
		if gl != wl {
			t.Fatalf("%s: line %d differs (rerun with -rewrite if the change is intended)\n got: %s\nwant: %s", path, i+1, gl, wl)
		}
	}
}

func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "<end of file>"
}

// Tables returns the Markdown table lines of a report, each section's
// heading before its tables: the numbers a report states, without the
// prose (which quotes wall time) and figure links.
func Tables(markdown string) string {
	var b strings.Builder
	heading := ""
	for l := range strings.Lines(markdown) {
		switch {
		case strings.HasPrefix(l, "#"):
			heading = l
		case strings.HasPrefix(l, "|"):
			b.WriteString(heading)
			heading = ""
			b.WriteString(l)
		}
	}
	return b.String()
}
