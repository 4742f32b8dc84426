package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/node/app"
)

// TestDashboardBrowser loads a real node with strata bench (reporting
// its progress to the dashboard), then opens the dashboard in headless
// Chromium (tests/browser/dashboard.test.mjs): the charts refresh by
// themselves and plot the requests by tier, the hit ratio, flash writes
// and the bench run's requests. A screenshot of the page is saved in the
// test's artifact directory (go test -artifacts keeps it). It runs when
// STRATA_BROWSER_TESTS is set (make test-browser).
func TestDashboardBrowser(t *testing.T) {
	if os.Getenv("STRATA_BROWSER_TESTS") == "" {
		t.Skip("set STRATA_BROWSER_TESTS=1 (make test-browser) to open the dashboard in Chromium")
	}
	data := t.TempDir()
	writeLibrary(t, data)
	url, stop := startServe(t, smallConfig(data), app.Options{})
	defer stop()
	err := runBench([]string{url, "--rate", "40", "--duration", "3s", "--report-token", filepath.Join(data, "admin.token")},
		io.Discard, io.Discard)
	if err != nil {
		t.Fatalf("bench: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	shot := filepath.Join(t.ArtifactDir(), "dashboard.png")
	cmd := exec.CommandContext(ctx, "node", "--test", "dashboard.test.mjs")
	cmd.Dir = filepath.Join("..", "..", "tests", "browser")
	cmd.Env = append(os.Environ(), "STRATA_URL="+url, "STRATA_SCREENSHOT="+shot)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test dashboard.test.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("dashboard browser test failed: %v", err)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot: %v", err)
	}
	t.Logf("screenshot of the dashboard: %s", shot)
}
