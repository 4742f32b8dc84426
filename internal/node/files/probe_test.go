package files

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
)

// sparseFile makes a sparse file of size bytes in dir starting with head.
func sparseFile(t *testing.T, path string, size int64, head []byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// totalAlloc is the bytes allocated by the process so far.
func totalAlloc() uint64 {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	return s.TotalAlloc
}

// TestProbeOfHandCopiedWebMIsBounded: HEADs and GETs of a 300 MiB WebM
// copied into the directory by hand (no sidecar) probe it once, by its
// magic, and allocate a bounded amount (they read its first bytes as an
// MP4 box of 440 MB, four HEADs took 1.6 GB before the probe was bounded).
func TestProbeOfHandCopiedWebMIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, ts := testTier(t, Options{})
		const size = 300 << 20
		sparseFile(t, filepath.Join(tr.opts.Dir, "big.webm"), size, []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01"))
		before := totalAlloc()
		for range 4 {
			req, _ := http.NewRequest("HEAD", base+"/files/big.webm", nil)
			resp, err := ts.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.ContentLength != size {
				t.Fatalf("HEAD: %d, %d bytes", resp.StatusCode, resp.ContentLength)
			}
		}
		resp, body := get(t, ts, "big.webm", "bytes=0-3")
		if resp.StatusCode != 206 || string(body) != "\x1a\x45\xdf\xa3" {
			t.Fatalf("GET range: %d %q", resp.StatusCode, body)
		}
		if d := totalAlloc() - before; d > 16<<20 {
			t.Errorf("5 requests allocated %d MiB, want under 16 MiB", d>>20)
		}
		if n := tr.stats.probes.Load(); n != 1 {
			t.Errorf("probed %d times, want once", n)
		}
		m, err := tr.readMeta("big.webm")
		if err != nil || m.Duration != 0 || m.ByteRate != tr.opts.DefaultBitrate {
			t.Errorf("meta %+v, %v: want the default bitrate", m, err)
		}
		// A new version (another modification time) is probed again.
		os.Chtimes(filepath.Join(tr.opts.Dir, "big.webm"), time.Time{}, time.Unix(1e9, 0))
		tr.readMeta("big.webm")
		if n := tr.stats.probes.Load(); n != 2 {
			t.Errorf("probed %d times after a change, want twice", n)
		}
	})
}

// zeros is an endless body.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestPutRefusedUpFront: a declared length above MaxUpload is 413 before
// the body is read, one the directory has no room for is 507, and
// nothing is stored either way.
func TestPutRefusedUpFront(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, ts := testTier(t, Options{FreeSpace: func(string) (int64, error) { return 1 << 20, nil }})
		for _, c := range []struct {
			length int64
			code   int
		}{{MaxUpload + 1, 413}, {2 << 20, 507}} {
			req, _ := http.NewRequest("PUT", base+"/files/f.bin", io.LimitReader(zeros{}, c.length))
			req.ContentLength = c.length
			req.Header.Set("Authorization", "Bearer "+testToken)
			resp, err := ts.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.code {
				t.Errorf("PUT of %d bytes: %d, want %d", c.length, resp.StatusCode, c.code)
			}
		}
		ents, _ := os.ReadDir(tr.opts.Dir)
		if len(ents) != 0 {
			t.Errorf("the directory holds %d entries after refused uploads", len(ents))
		}
		put(t, ts, "small.bin", content(1000, 1)) // room for this one
		// The refused connections linger 500 ms (net/http's reset
		// avoidance) before they close: let that pass, in fake time.
		time.Sleep(time.Second)
	})
}
