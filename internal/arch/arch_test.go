package arch

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/strata-media/strata/"

// layer returns the layer of a package path relative to the module:
// "core", "storage", "node", "sim", "tools", "media", "cmd" or "leaf" for
// the small shared packages directly under internal/.
func layer(rel string) string {
	parts := strings.Split(rel, "/")
	if parts[0] == "cmd" {
		return "cmd"
	}
	if len(parts) >= 2 && parts[0] == "internal" {
		switch parts[1] {
		case "core", "storage", "node", "sim", "tools", "media", "arch":
			return parts[1]
		}
		return "leaf"
	}
	return "other"
}

// allowed lists, for each layer, the layers its packages may depend on
// (directly or not). Every layer may depend on itself and on leaf
// packages, except the core and leaf packages, which depend on nothing of
// ours: they are the code both drivers share.
var allowed = map[string][]string{
	"core":    {},
	"leaf":    {},
	"storage": {"core", "leaf", "storage"},
	"media":   {"core", "leaf", "storage", "media"},
	"node":    {"core", "leaf", "storage", "media", "node"},
	"sim":     {"core", "leaf", "storage", "media", "sim", "node"},
	"tools":   {"core", "leaf", "storage", "tools"},
	"cmd":     {"core", "leaf", "storage", "media", "node", "sim", "tools"},
	"arch":    {},
}

// simUsesNode lists the only node packages a simulator may use: the image
// store, which MRIS's benchmark runs for real with the server's own
// options. Anything else there would mean the simulator drives the live
// server instead of the core.
var simUsesNode = map[string]bool{"internal/node/images": true}

// pending lists the edges the redesign has not removed yet, each with the
// change that removes it. The test fails when an edge here no longer
// exists, so the list only shrinks.
var pending = map[[2]string]string{
	{"internal/media", "internal/node/httpapi"}:       "the upload handler moves to the node",
	{"internal/sim/mrissim", "internal/node/engine"}:  "the image store moves to storage",
	{"internal/sim/mrissim", "internal/node/httpapi"}: "the image store moves to storage",
	{"internal/sim/mrissim", "internal/node/server"}:  "the image store moves to storage",
}

func TestLayers(t *testing.T) {
	seen := map[[2]string]bool{}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, module+"...").Output()
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
			if !strings.HasPrefix(dep, module) {
				continue
			}
			drel := strings.TrimPrefix(dep, module)
			to := layer(drel)
			if _, ok := pending[[2]string{rel, drel}]; ok {
				seen[[2]string{rel, drel}] = true
				continue
			}
			if from == "sim" && to == "node" && !simUsesNode[drel] {
				t.Errorf("%s depends on %s: a simulator drives the core, not the live node", rel, drel)
				continue
			}
			if !permits(from, to) {
				t.Errorf("%s (layer %s) depends on %s (layer %s)", rel, from, drel, to)
			}
		}
	}
	for edge, why := range pending {
		if !seen[edge] {
			t.Errorf("%s no longer depends on %s (%s): drop it from pending", edge[0], edge[1], why)
		}
	}
	if cores < 2 {
		t.Errorf("found %d core packages, want the tier and vod cores at least", cores)
	}
}

func permits(from, to string) bool {
	for _, l := range allowed[from] {
		if l == to {
			return true
		}
	}
	return false
}
