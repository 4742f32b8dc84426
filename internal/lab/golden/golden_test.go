package golden

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTables(t *testing.T) {
	md := "# Report\n\nWall time 12 s.\n\n## A\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\nprose\n\n## B\n\nno table\n\n## C\n\n| z |\n|---|\n"
	want := "## A\n| x | y |\n|---|---|\n| 1 | 2 |\n## C\n| z |\n|---|\n"
	if got := Tables(md); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.txt")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Check(t, path, "a\nb\n")
	var rec recorder
	Check(&rec, path, "a\nc\n")
	if !rec.failed {
		t.Fatal("a differing line passed")
	}
}

// recorder is a testing.TB whose Fatalf records the failure and returns.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
