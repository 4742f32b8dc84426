package app

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// slowUpstream is an origin whose answers wait: with body set, it sends
// the header and half the body first. Each request says on started that it
// began, waits for release or its context's end, and says on canceled
// when its context ended first.
type slowUpstream struct {
	started, canceled chan string
	release           chan struct{}
}

const slowBody = 200 << 10

func newSlowUpstream(t *testing.T) (*slowUpstream, *httptest.Server) {
	u := &slowUpstream{started: make(chan string, 16), canceled: make(chan string, 16), release: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := strings.Repeat("s", slowBody)
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Header().Set("Content-Type", "video/iso.segment")
		w.Header().Set("Content-Length", "204800")
		midBody := strings.Contains(r.URL.Path, "mid")
		if midBody {
			io.WriteString(w, body[:slowBody/2])
			w.(http.Flusher).Flush()
			body = body[slowBody/2:]
		}
		u.started <- r.URL.Path
		select {
		case <-u.release:
			io.WriteString(w, body)
		case <-r.Context().Done():
			u.canceled <- r.URL.Path
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-u.release:
		default:
			close(u.release)
		}
	})
	return u, srv
}

// within waits for ch up to d (a deadline, not a measure of speed).
func within(t *testing.T, ch <-chan string, d time.Duration, what string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(d):
		t.Fatalf("%s: not within %v", what, d)
		return ""
	}
}

// TestEdgeHangUpAbandonsMiss: on an edge node, with its Front and with
// net/http alone, a client that hangs up on a miss has its upstream
// request canceled (before the body or in the middle of it), and a miss
// two clients wait for goes on when one of them hangs up: the other gets
// the whole body.
func TestEdgeHangUpAbandonsMiss(t *testing.T) {
	for _, withFront := range []bool{true, false} {
		u, up := newSlowUpstream(t)
		var log syncBuffer
		cfg := func(c *Config) {
			c.Upstreams = []UpstreamConfig{{Prefix: "/edge/", URL: up.URL + "/"}}
			c.AccessLog = "-"
		}
		c := testConfig(t)
		cfg(&c)
		n, err := Open(context.Background(), c, Options{Logger: quiet, AccessOut: &log})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		addr, plain, _ := frontPair(t, n, n)
		if !withFront {
			addr = plain
		}
		name := map[bool]string{true: "front", false: "net/http"}[withFront]
		dial := func(path string) (net.Conn, *bufio.Reader) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			c.SetDeadline(time.Now().Add(20 * time.Second))
			io.WriteString(c, rawGet("GET", path))
			return c, bufio.NewReader(c)
		}
		for _, path := range []string{"/edge/one", "/edge/one-mid"} {
			c, br := dial(path)
			within(t, u.started, 10*time.Second, name+" "+path+": the upstream request")
			if strings.Contains(path, "mid") { // the client has the header: the miss is streamed
				if _, err := http.ReadResponse(br, nil); err != nil {
					t.Fatal(err)
				}
			}
			c.Close()
			if got := within(t, u.canceled, 5*time.Second, name+" "+path+": the client hung up; the upstream request canceled"); got != strings.TrimPrefix(path, "/edge") {
				t.Errorf("%s: canceled %s", name, got)
			}
		}
		for _, path := range []string{"/edge/two", "/edge/two-mid"} {
			lines := strings.Count(log.String(), "\n")
			c1, br1 := dial(path)
			within(t, u.started, 10*time.Second, name+" "+path+": the upstream request")
			mid := strings.Contains(path, "mid")
			if mid {
				if _, err := http.ReadResponse(br1, nil); err != nil {
					t.Fatal(err)
				}
			}
			_, br2 := dial(path)
			if mid {
				resp, err := http.ReadResponse(br2, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				c1.Close()
				waitLines(t, &log, lines+1)
				close(u.release)
				n, err := io.Copy(io.Discard, resp.Body)
				if n != slowBody || err != nil {
					t.Errorf("%s %s: the client that stayed got %d bytes of %d (%v)", name, path, n, slowBody, err)
				}
			} else {
				for deadline := time.Now().Add(10 * time.Second); n.eng.Stats().Origin.Waiting < 2; time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("%s %s: the second client does not wait for the miss", name, path)
					}
				}
				c1.Close()
				waitLines(t, &log, lines+1)
				close(u.release)
				resp, err := http.ReadResponse(br2, nil)
				if err != nil {
					t.Fatal(err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				if resp.StatusCode != 200 || n != slowBody || err != nil {
					t.Errorf("%s %s: the client that stayed got %s, %d bytes of %d (%v)", name, path, resp.Status, n, slowBody, err)
				}
			}
			select {
			case p := <-u.canceled:
				t.Errorf("%s: %s canceled upstream while a client waited", name, p)
			default:
			}
			u.release = make(chan struct{})
		}
	}
}

// waitLines waits (up to 10 s) for the access log to hold n lines: the
// requests before them are done.
func waitLines(t *testing.T, log *syncBuffer, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); strings.Count(log.String(), "\n") < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d access log lines, want %d", strings.Count(log.String(), "\n"), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
