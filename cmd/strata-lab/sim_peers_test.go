package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePeersRun writes a small run.sh result to dir: Strata's find-max
// trials (max 100 req/s) and a Varnish whose byte hit ratio is 0.25.
func writePeersRun(t *testing.T, dir string) {
	t.Helper()
	for name, js := range map[string]string{
		"strata.json":  `{"server": "strata", "max": {"max_rps": 100, "trials": [{"rate_rps": 50}, {"rate_rps": 100}]}}`,
		"varnish.json": `{"server": "varnish", "at80": {"requests": 100, "bytes": 1000}, "after": {"origin": {"segment_bytes": 750}}}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSimPeers runs strata-lab sim peers on a short steady trace without
// libCacheSim: the trace is exported for it, and the report lists the
// core under each objective, our Belady and the static oracles, against
// the best peer's byte hit ratio read from the run's results.
func TestSimPeers(t *testing.T) {
	dir, run := t.TempDir(), t.TempDir()
	writePeersRun(t, run)
	var out, errb bytes.Buffer
	if err := runSimPeers([]string{"--from", run, "--steady", "3000", "--out", dir, "--python", "/nonexistent/python"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, want := range []string{"core reinsert/requests", "core reinsert/bytes", "core reinsert/balanced", "our Belady",
		"static oracle, law known, worth per byte", "(1 - 0.250)", "(varnish, " + run + ")"} {
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

// TestSimPeersNeedsARun: no measured result stands in for a run's: without
// --from, or without a peer's result or --peer-byte-hit, sim peers is a
// usage error saying what to give.
func TestSimPeersNeedsARun(t *testing.T) {
	var errb bytes.Buffer
	if err := runSimPeers(nil, &errb, &errb); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--from is required") {
		t.Errorf("no --from: %v", err)
	}
	run := t.TempDir()
	writePeersRun(t, run)
	os.Remove(filepath.Join(run, "varnish.json"))
	if err := runSimPeers([]string{"--from", run}, &errb, &errb); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--peer-byte-hit") {
		t.Errorf("no peer: %v", err)
	}
}
