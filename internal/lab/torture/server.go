package torture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/strata-media/strata/internal/banner"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// A server is one strata serve process on the torture's data directory.
type server struct {
	cmd    *exec.Cmd
	url    string
	done   <-chan struct{} // closed when the process has exited
	client *http.Client
}

// serveArgs are strata serve's flags: the small tiers of the kill-restart
// tests (3 MiB of RAM, 24 MiB of flash in 1 MiB blocks) so that every
// tier serves and flash fills within a cycle, a fast RAM monitor, and a
// flash threshold above 1 because the machine's one disk is shared.
func serveArgs(data string) []string {
	return []string{"serve", "--data", data, "--listen", "127.0.0.1:0",
		"--ram", "3MiB", "--flash-size", "24MiB", "--block-size", "1MiB",
		"--monitor-period", "20ms", "--threshold", "1.01",
		"--files-flash-size", "64MiB", "--log-level", "warn"}
}

// startServer starts strata serve and returns once it printed its URL,
// without waiting for it to answer.
func (t *torture) startServer() (*server, error) {
	s, err := startServe(t.opts.Bin, serveArgs(t.data), t.opts.Dir)
	if err != nil {
		return nil, err
	}
	t.srv = s
	return s, nil
}

// startServe runs bin with args, its log appended to dir/serve.log, and
// returns once it printed its URL, without waiting for it to answer.
func startServe(bin string, args []string, dir string) (*server, error) {
	logf, err := os.OpenFile(filepath.Join(dir, "serve.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logf
	url, exited, err := banner.Start(cmd, 2*time.Minute)
	if err != nil {
		return nil, fmt.Errorf("%w (see %s/serve.log)", err, dir)
	}
	return &server{cmd: cmd, url: url, done: exited, client: newClient()}, nil
}

// newClient is a client without proxy or compression, whose requests are
// bounded: a server that stops answering is a failure, not a hang.
func newClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DisableCompression = true
	tr.MaxIdleConnsPerHost = 16
	return &http.Client{Transport: tr, Timeout: 2 * time.Minute}
}

// ready polls GET /stats (every 20 ms, at most 30 s) until it answers 200.
func (s *server) ready(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := s.client.Get(s.url + "/stats")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s/stats did not answer 200 within 30 s: %v", s.url, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			return errors.New("strata serve exited while starting")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill() {
	s.cmd.Process.Kill()
	<-s.done
	s.client.CloseIdleConnections()
}

// stopServer kills the running server, if any.
func (t *torture) stopServer() {
	if t.srv != nil {
		t.srv.kill()
		t.srv = nil
	}
}

// ssdStats are the /stats counters of the flash tier the torture checks.
type ssdStats struct {
	Hits              int64 `json:"hits"`
	Segments          int64 `json:"segments"`
	EvictedSegments   int64 `json:"evicted_segments"`
	RecoveredSegments int64 `json:"recovered_segments"`
	CorruptRecords    int64 `json:"recovery_corrupt_records"`
}

func (s *server) ssd() (ssdStats, error) {
	var st struct {
		SSD ssdStats `json:"ssd"`
	}
	resp, err := s.client.Get(s.url + "/stats")
	if err != nil {
		return st.SSD, err
	}
	defer resp.Body.Close()
	return st.SSD, json.NewDecoder(resp.Body).Decode(&st)
}

// fsckReport is what the torture reads of strata fsck --json.
type fsckReport struct {
	Segments       int
	Records        int
	CorruptRecords int
	OrphanRecords  int
	Problems       []string `json:"problems"`
}

// fsck runs strata fsck on the flash cache file of the stopped server:
// it must exit 0 (no corrupt record).
func (t *torture) fsck() (fsckReport, error) {
	return fsck(t.opts.Bin, filepath.Join(t.data, "flash.cache"))
}

// fsck runs bin's strata fsck on the flash cache file at path: it must
// exit 0 (no corrupt record).
func fsck(bin, path string) (fsckReport, error) {
	var rep fsckReport
	cmd := exec.Command(bin, "fsck", "--ssd", path, "--json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if jerr := json.Unmarshal(out, &rep); jerr != nil && err == nil {
		err = jerr
	}
	if err != nil {
		return rep, fmt.Errorf("%w: strata fsck: %v: %+v %s", ErrFailed, err, rep, stderr.String())
	}
	return rep, nil
}
