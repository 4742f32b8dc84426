package report

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMarkdownAndWrite(t *testing.T) {
	var m Markdown
	m.H(2, "Results")
	m.P("%d runs", 3)
	m.Table([]string{"a", "b"}, [][]string{{"1", "2"}})
	m.Img("f.svg", "figure")
	want := "## Results\n\n3 runs\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![figure](f.svg)\n\n"
	if m.String() != want {
		t.Fatalf("got %q", m.String())
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(dir, m.String(), []Figure{{File: "f.svg", SVG: []byte("<svg/>")}}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "f.svg")); err != nil || string(b) != "<svg/>" {
		t.Fatalf("figure: %q %v", b, err)
	}
}
