package files

import (
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
// MP4 box of 440 MB, four HEADs took 1.6 GB: issue 14, finding 1).
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
		if err != nil || m.Duration != 0 || m.Bitrate != tr.opts.DefaultBitrate {
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
