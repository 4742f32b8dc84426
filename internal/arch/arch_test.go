package arch

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/strata-media/strata/"

// layer returns the layer of a package path relative to the module:
// "core", "storage", "node", "tools", "media", "cmd", "front" for the
// Front (internal/httpapi/front), or "leaf" for the small shared packages
// directly under internal/; and for the lab (internal/lab,
// cmd/strata-lab): "sim" for the simulators, "labkit" for their plotting,
// reports and golden files, "lab" for the benchmarking tools, "labcmd"
// for the lab's binary.
func layer(rel string) string {
	parts := strings.Split(rel, "/")
	if parts[0] == "cmd" {
		if len(parts) >= 2 && parts[1] == "strata-lab" {
			return "labcmd"
		}
		return "cmd"
	}
	if rel == "internal/httpapi/front" || strings.HasPrefix(rel, "internal/httpapi/front/") {
		return "front"
	}
	if len(parts) >= 3 && parts[0] == "internal" && parts[1] == "lab" {
		switch parts[2] {
		case "sim":
			return "sim"
		case "plot", "report", "golden":
			return "labkit"
		}
		return "lab"
	}
	if len(parts) >= 2 && parts[0] == "internal" {
		switch parts[1] {
		case "core", "storage", "node", "tools", "media", "arch":
			return parts[1]
		}
		return "leaf"
	}
	return "other"
}

// allowed lists, for each layer, the layers its packages may depend on,
// directly or not. The core and the leaf packages depend on nothing of
// ours: they are the code both drivers share. The node and the simulator
// both use the core, storage and media, never each other. The product
// (every layer but the lab's) never depends on the lab; the lab's tools
// may use the whole product.
var allowed = map[string][]string{
	"front":   {},
	"core":    {},
	"leaf":    {},
	"arch":    {},
	"storage": {"core", "leaf", "storage"},
	"media":   {"core", "leaf", "storage", "media"},
	"node":    {"core", "leaf", "storage", "media", "node"},
	"tools":   {"core", "leaf", "storage", "tools"},
	"cmd":     {"core", "leaf", "storage", "media", "node", "tools"},
	// The lab.
	"labkit": {"leaf", "labkit"},
	"sim":    {"core", "leaf", "storage", "media", "sim", "labkit"},
	"lab":    {"core", "leaf", "storage", "media", "node", "tools", "sim", "labkit", "lab"},
	"labcmd": {"core", "leaf", "storage", "media", "node", "tools", "sim", "labkit", "lab"},
}

// frontImporters are the only packages that may import the Front: the
// API that builds it over its fast routes, the node that serves it and
// the node's FastHandlers. The Front itself imports nothing of ours
// (allowed): it is an HTTP/1.1 server, and knows no route, metric or log
// but through the interfaces of its Options.
var frontImporters = []string{
	"internal/httpapi",
	"internal/node/app",
	"internal/node/edge",
	"internal/node/server",
}

// labLayers are the lab's layers, which no layer of the product may
// depend on.
var labLayers = []string{"labkit", "sim", "lab", "labcmd"}

func TestLayers(t *testing.T) {
	touchSources(t)
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}{{range .Imports}} >{{.}}{{end}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 20 {
		t.Fatalf("go list found only %d packages", len(lines))
	}
	cores := 0
	for _, line := range lines {
		f := strings.Fields(line)
		rel := strings.TrimPrefix(f[0], module)
		from := layer(rel)
		if from == "core" {
			cores++
		}
		for _, dep := range f[1:] {
			if imp, ok := strings.CutPrefix(dep, ">"); ok { // a direct import
				if irel, ok := strings.CutPrefix(imp, module); ok && layer(irel) == "front" && from != "front" && !slices.Contains(frontImporters, rel) {
					t.Errorf("%s imports the Front (%s): only %v may", rel, irel, frontImporters)
				}
				continue
			}
			drel, ok := strings.CutPrefix(dep, module)
			if !ok {
				continue
			}
			if to := layer(drel); to != "front" && !slices.Contains(allowed[from], to) {
				t.Errorf("%s (layer %s) depends on %s (layer %s)", rel, from, drel, to)
			}
		}
	}
	if cores < 3 {
		t.Errorf("found %d core packages, want tier, vod and framegroup at least", cores)
	}
}

// touchSources stats every Go file of the module, so that go test's cache,
// which cannot see what the go list child reads, reruns this test when
// any import changes.
func touchSources(t *testing.T) {
	t.Helper()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") {
			_, err = os.ReadFile(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLayerNames(t *testing.T) {
	for rel, want := range map[string]string{
		"internal/core/tier":      "core",
		"internal/node/engine":    "node",
		"internal/lab/sim/des":    "sim",
		"internal/lab/plot":       "labkit",
		"internal/lab/peers":      "lab",
		"cmd/strata-lab":          "labcmd",
		"internal/tools/loadgen":  "tools",
		"internal/httpapi":        "leaf",
		"internal/httpapi/front":  "front",
		"internal/media/images":   "media",
		"internal/storage/origin": "storage",
		"cmd/strata":              "cmd",
	} {
		if got := layer(rel); got != want {
			t.Errorf("layer(%s) = %s, want %s", rel, got, want)
		}
	}
	if slices.Contains(allowed["sim"], "node") || slices.Contains(allowed["node"], "sim") {
		t.Error("the node and the simulator may not depend on each other")
	}
	for from, to := range allowed {
		if slices.Contains(labLayers, from) {
			continue
		}
		for _, l := range labLayers {
			if slices.Contains(to, l) {
				t.Errorf("layer %s of the product may depend on the lab's layer %s", from, l)
			}
		}
	}
}
