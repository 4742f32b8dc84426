package framegroup

import (
	"go/build"
	"slices"
	"testing"
)

// TestCoreImports keeps the package the core: no package of this module
// and nothing that does I/O, keeps time or starts goroutines, so the
// frame store and the simulator drive the very same code.
func TestCoreImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"encoding/binary", "errors", "fmt", "hash/crc32", "math", "slices", "sort"}
	for _, imp := range pkg.Imports {
		if !slices.Contains(allowed, imp) {
			t.Errorf("framegroup imports %s; the core may import only %v", imp, allowed)
		}
	}
}
