package main

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

	"github.com/strata-media/strata/internal/tools/loadgen"
)

// benchReporter posts a run's progress (measured requests and deadline
// misses so far) to the server's dashboard, POST /admin/bench, with the
// admin token. A failed post is said once on stderr; the run goes on.
type benchReporter struct {
	endpoint string
	token    string
	run      string
	client   *http.Client
	stderr   io.Writer

	mu     sync.Mutex // serializes posts, so counts arrive in order
	warned bool
}

// newBenchReporter reads the admin token from tokenFile and aims at the
// server of target (its scheme and host: the dashboard is at the root
// even when bench loads a prefix).
func newBenchReporter(target, tokenFile string, stderr io.Writer) (*benchReporter, error) {
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("%w: --report-token: %w", errUsage, err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return nil, fmt.Errorf("%w: --report-token: %s is empty", errUsage, tokenFile)
	}
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: the server URL %q has no host", errUsage, target)
	}
	var id [8]byte
	rand.Read(id[:])
	return &benchReporter{endpoint: u.Scheme + "://" + u.Host + "/admin/bench", token: token,
		run: hex.EncodeToString(id[:]), client: &http.Client{Timeout: 2 * time.Second}, stderr: stderr}, nil
}

// progress wraps a progress callback so that each call also reports.
func (b *benchReporter) progress(next func(loadgen.Progress)) func(loadgen.Progress) {
	return func(p loadgen.Progress) {
		next(p)
		if !p.Warmup {
			b.post(p.Measured, p.Misses)
		}
	}
}

// post sends the run's counts so far.
func (b *benchReporter) post(requests, misses int) {
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
