package tier

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The core imports nothing of this module and does no I/O: drivers, live
// or simulated, do that and pass the time in. Direct imports suffice, as
// none of them may be ours.
func TestCoreImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := map[string]bool{"os": true, "net": true, "net/http": true, "syscall": true, "io/ioutil": true, "log": true, "log/slog": true}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/strata-media/strata/") || forbidden[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}
