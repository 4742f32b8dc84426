package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimPeers runs strata sim peers on a short steady trace without
// libCacheSim: the trace is exported for it, and the report lists the
// core under each objective, our Belady and the static oracles.
func TestSimPeers(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if err := runSimPeers([]string{"--steady", "3000", "--out", dir, "--python", "/nonexistent/python"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, want := range []string{"core reinsert/requests", "core reinsert/bytes", "core reinsert/balanced", "our Belady", "static oracle, law known, worth per byte"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	for _, f := range []string{"manifest.json", "peers.oracleGeneral", "report.md"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
