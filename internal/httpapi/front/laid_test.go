package front

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fileBody is a BufferedFileBody over a whole file, as a RAM hit's memory
// file is (ramfile.Body).
type fileBody struct {
	fd int
	n  int64
}

func (b fileBody) Len() int64 { return b.n }
func (b fileBody) Parts() int { return 1 }
func (b fileBody) Part(int) (int64, int64, []byte, error) {
	return 0, b.n, nil, nil
}
func (b fileBody) WithFD(fn func(int) error) error { return fn(b.fd) }
func (b fileBody) Yield() bool                     { return false }
func (b fileBody) Rest(off int64) ([]byte, error) {
	p := make([]byte, b.n-off)
	_, err := unix.Pread(b.fd, p, off)
	return p, err
}
func (b fileBody) Buffered() bool { return true }
func (b fileBody) FD() int        { return b.fd }

// fastLaid answers /l/a and /l/b, each a file, as the edge answers the
// hits of one stored record: the header laid out for the path's last
// answer when the Front sends it again, else the fields filled in and
// the answer's header kept.
type fastLaid struct {
	files map[string]fileBody
	mu    sync.Mutex
	laid  map[string]*Laid
}

func (f *fastLaid) ServeFast(w http.ResponseWriter, r *http.Request, c CORS) (string, int, *http.Request) {
	b, ok := f.files[r.URL.Path]
	if !ok {
		return "", 0, r
	}
	lw, _ := w.(LaidWriter) // none on net/http alone
	f.mu.Lock()
	l := f.laid[r.URL.Path]
	f.mu.Unlock()
	if l != nil && lw != nil {
		if _, _, ok := lw.SendFileLaid(l, b); ok {
			return "GET /l/{id}", http.StatusOK, nil
		}
	}
	h := w.Header()
	h.Set("Content-Type", "video/mp4")
	h.Set("Content-Length", strconv.FormatInt(b.Len(), 10))
	h.Set("X-Path", r.URL.Path)
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return "GET /l/{id}", http.StatusOK, nil
	}
	if lw == nil {
		p, _ := b.Rest(0)
		w.Write(p) //nolint:errcheck
		return "GET /l/{id}", http.StatusOK, nil
	}
	lw.SendFile(b) //nolint:errcheck
	if l, ok := lw.Laid(); ok {
		f.mu.Lock()
		f.laid[r.URL.Path] = l
		f.mu.Unlock()
	}
	return "GET /l/{id}", http.StatusOK, nil
}

func laidFiles(t *testing.T) map[string]fileBody {
	t.Helper()
	files := map[string]fileBody{}
	for name, n := range map[string]int{"/l/a": 20 << 10, "/l/b": 3000} {
		path := filepath.Join(t.TempDir(), name[3:])
		if err := os.WriteFile(path, bytes.Repeat([]byte(name[3:]), n), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		files[name] = fileBody{fd: int(f.Fd()), n: int64(n)}
	}
	return files
}

// TestFrontLaidHeader: an answer sent with the header the Front laid out
// for an earlier one is the same bytes on the wire as net/http's answer
// of the same fields; a HEAD, another path's header or an access log
// makes the Front refuse it (the handler then answers as usual).
func TestFrontLaidHeader(t *testing.T) {
	files := laidFiles(t)
	get, head := req("/l/a"), "HEAD /l/a HTTP/1.1\r\nHost: a\r\n\r\n"
	raw := get + get + head + get + req("/l/b") + get + req("/l/b") + lastReq
	for _, withLog := range []bool{false, true} {
		var laid atomicCounter
		o := Options{Counters: Counters{Laid: &laid}}
		if withLog {
			o.AccessLog = nopLog{}
		}
		// Within one second, or the laid headers of the second before
		// are refused: tried again then.
		for try := 0; ; try++ {
			laid.Store(0)
			front, plain, _, stop := serveBoth(t, []Route{{Prefix: "/l/", Handler: &fastLaid{files: files, laid: map[string]*Laid{}}}}, o)
			sec := time.Now().Unix()
			got, want := wire(t, front, raw), wire(t, plain, raw)
			same := time.Now().Unix() == sec
			stop()
			if got != want {
				i := 0
				for i < min(len(got), len(want)) && got[i] == want[i] {
					i++
				}
				t.Fatalf("log %v: the Front's answers differ from net/http's at byte %d of %d/%d:\n%.300q\nnet/http:\n%.300q", withLog, i, len(got), len(want), got[max(i-100, 0):], want[max(i-100, 0):])
			}
			if !same && try < 3 {
				continue
			}
			// Every GET of /l/a but the first, the second of /l/b.
			if wantLaid := map[bool]int64{false: 4, true: 0}[withLog]; laid.Load() != wantLaid && same {
				t.Errorf("log %v: %d answers laid, want %d", withLog, laid.Load(), wantLaid)
			}
			break
		}
	}
}

// nopLog is an AccessLog that logs nothing.
type nopLog struct{}

func (nopLog) Timer(ctx context.Context) (context.Context, Timer)           { return ctx, nopTimer{} }
func (nopLog) Log(*http.Request, http.Header, int, int64, Timer, time.Time) {}

type nopTimer struct{}

func (nopTimer) Reset() {}
