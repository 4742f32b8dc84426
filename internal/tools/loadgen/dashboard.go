package loadgen

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// A DashboardReporter posts a run's progress (measured requests and
// deadline misses so far) to the server's dashboard, POST /admin/bench,
// with the admin token (strata bench --report-token). A failed post is
// said once on stderr; the run goes on.
type DashboardReporter struct {
	endpoint string
	token    string
	run      string
	client   *http.Client
	stderr   io.Writer

	mu     sync.Mutex // serializes posts, so counts arrive in order
	warned bool
}

// NewDashboardReporter reads the admin token from tokenFile and aims at
// the server of target (its scheme and host: the dashboard is at the root
// even when bench loads a prefix).
func NewDashboardReporter(target, tokenFile string, stderr io.Writer) (*DashboardReporter, error) {
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("--report-token: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return nil, fmt.Errorf("--report-token: %s is empty", tokenFile)
	}
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("the server URL %q has no host", target)
	}
	var id [8]byte
	rand.Read(id[:])
	return &DashboardReporter{endpoint: u.Scheme + "://" + u.Host + "/admin/bench", token: token,
		run: hex.EncodeToString(id[:]), client: &http.Client{Timeout: 2 * time.Second}, stderr: stderr}, nil
}

// Progress wraps a progress callback so that each call also reports.
func (b *DashboardReporter) Progress(next func(Progress)) func(Progress) {
	return func(p Progress) {
		next(p)
		if !p.Warmup {
			b.Post(p.Measured, p.Misses)
		}
	}
}

// Post sends the run's counts so far.
func (b *DashboardReporter) Post(requests, misses int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"run": b.run, "requests": requests, "misses": misses})
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, b.endpoint, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Authorization", "Bearer "+b.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			err = fmt.Errorf("%s", resp.Status)
		}
	}
	if err != nil && !b.warned {
		b.warned = true
		fmt.Fprintf(b.stderr, "bench: reporting to %s failed (not retried in the log): %v\n", b.endpoint, err)
	}
}
