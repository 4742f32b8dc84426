package main

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/strata-media/strata/internal/banner"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a process's stderr, read while it writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits up to 30 s for the n-th occurrence of s in b.
func (b *lockedBuffer) waitFor(t *testing.T, s string, n int) {
	t.Helper()
	for range 3000 {
		if strings.Count(b.String(), s) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%q never appeared %d times in the log:\n%s", s, n, b)
}

func reloadConfig(data, token, cors, ram string) string {
	return fmt.Sprintf(`data = %q
listen = "127.0.0.1:0"
ram = %q
flash_size = "24MiB"
block_size = "1MiB"
threshold = 1.01
log_level = "info"
admin_token = %q
cors_origins = [%s]
`, data, ram, token, cors)
}

func put(t *testing.T, url, token string, body io.Reader, n int64) int {
	t.Helper()
	req, _ := http.NewRequest("PUT", url, body)
	req.ContentLength = n
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Reload's acceptance test, on the real binary: the config file of a running
// strata serve changes and SIGHUP puts it in force while an upload is in
// flight; the upload completes, the next requests see the new token and
// CORS origins, a key that needs a restart is reported, an invalid file
// is refused with the old config kept, and SIGTERM still drains and exits
// cleanly.
func TestServeSIGHUPReload(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildStrata(t)
	data := t.TempDir()
	conf := filepath.Join(t.TempDir(), "strata.toml")
	write := func(s string) {
		if err := os.WriteFile(conf, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(reloadConfig(data, "one", "", "3MiB"))
	cmd := exec.Command(bin, "serve", "--config", conf)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var url string
	sc := bufio.NewScanner(stdout)
	for url == "" && sc.Scan() {
		if u, ok := banner.URL(sc.Text()); ok {
			url = u
		}
	}
	if url == "" {
		t.Fatalf("no URL; log:\n%s", logs)
	}
	go io.Copy(io.Discard, stdout)

	// An upload in flight: half its body sent, its handler writing.
	pr, pw := io.Pipe()
	half := bytes.Repeat([]byte("s"), 1<<20)
	status := make(chan int, 1)
	go func() { status <- put(t, url+"/files/inflight", "one", pr, 2<<20) }()
	pw.Write(half)
	for i := 0; ; i++ {
		if m, _ := filepath.Glob(filepath.Join(data, "files", ".upload-*")); len(m) > 0 {
			break
		}
		if i == 1000 {
			t.Fatal("the upload never reached its handler")
		}
		time.Sleep(10 * time.Millisecond)
	}

	write(reloadConfig(data, "two", `"https://player.example"`, "6MiB"))
	cmd.Process.Signal(syscall.SIGHUP)
	logs.waitFor(t, "config reloaded", 1)
	pw.Write(half)
	pw.Close()
	if got := <-status; got != http.StatusCreated {
		t.Fatalf("the upload in flight during SIGHUP: %d\n%s", got, logs)
	}
	if got := put(t, url+"/files/a", "one", strings.NewReader("a"), 1); got != http.StatusUnauthorized {
		t.Errorf("old token after SIGHUP: %d", got)
	}
	if got := put(t, url+"/files/a", "two", strings.NewReader("a"), 1); got != http.StatusCreated {
		t.Errorf("new token after SIGHUP: %d", got)
	}
	req, _ := http.NewRequest("GET", url+"/files/inflight", nil)
	req.Header.Set("Origin", "https://player.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n != 2<<20 || resp.Header.Get("Access-Control-Allow-Origin") != "https://player.example" {
		t.Errorf("after SIGHUP: %d bytes, CORS %q", n, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	if l := logs.String(); !strings.Contains(l, "need a restart") || !strings.Contains(l, "keys=[ram]") {
		t.Errorf("the ignored ram change was not reported:\n%s", l)
	}

	// An invalid file: refused, the process and its config stay.
	write("ram = [\n")
	cmd.Process.Signal(syscall.SIGHUP)
	logs.waitFor(t, "config reload refused", 1)
	if got := put(t, url+"/files/b", "two", strings.NewReader("b"), 1); got != http.StatusCreated {
		t.Errorf("after a refused reload: %d", got)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, logs)
	}
	if !strings.Contains(logs.String(), "shutting down") {
		t.Errorf("no graceful shutdown in the log:\n%s", logs)
	}
}
