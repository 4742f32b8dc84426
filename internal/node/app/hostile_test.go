package app

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// runningNode serves a test node until the test ends and returns its URL,
// its admin token and its configuration.
func runningNode(t *testing.T) (url, token string, cfg Config) {
	t.Helper()
	cfg = testConfig(t)
	n, url := serveNode(t, cfg)
	tok, err := os.ReadFile(n.Description().AdminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	return url, strings.TrimSpace(string(tok)), cfg
}

// multipartField is a multipart body with one file part of field name.
func multipartField(name string) (*bytes.Buffer, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	w, _ := mw.CreateFormFile(name, "a.mp4")
	w.Write([]byte("not a video"))
	mw.Close()
	return &buf, mw.FormDataContentType()
}

// TestNoRouteEchoesInput: every route answers a 100 KB id, name, query
// or multipart field name with a short error, never an echo of it (a
// 100 KB id gave a 100 KB body) nor a path of the data directory.
func TestNoRouteEchoesInput(t *testing.T) {
	url, token, cfg := runningNode(t)
	long := strings.Repeat("x", 100<<10)
	field, fieldType := multipartField(long)
	auth := []string{"Authorization", "Bearer " + token}
	for _, c := range []struct {
		method, path string
		body         io.Reader
		hdr          []string
	}{
		{"GET", "/videos/" + long + "/x.m4s", nil, nil},
		{"GET", "/videos/v/" + long, nil, nil},
		{"GET", "/videos/v/r/" + long, nil, nil},
		{"GET", "/files/" + long, nil, nil},
		{"PUT", "/files/" + long, strings.NewReader("x"), auth},
		{"GET", "/images/" + long, nil, nil},
		{"GET", "/images/p/" + long, nil, nil},
		{"PUT", "/images/" + long, strings.NewReader("x"), auth},
		{"DELETE", "/images/" + long, nil, auth},
		{"GET", "/iiif/3/" + long, nil, nil},
		{"GET", "/iiif/3/" + long + "/info.json", nil, nil},
		{"GET", "/iiif/3/p/" + long + "/max/0/default.jpg", nil, nil},
		{"GET", "/iiif/3/p/full/" + long + "/0/default.jpg", nil, nil},
		{"GET", "/iiif/3/p/full/max/" + long + "/default.jpg", nil, nil},
		{"GET", "/iiif/3/p/full/max/0/" + long, nil, nil},
		{"POST", "/videos/" + long, strings.NewReader("x"), auth},
		{"POST", "/videos/v?rendition=" + long, strings.NewReader("x"), auth},
		{"POST", "/videos/v?segment_duration=" + long, strings.NewReader("x"), auth},
		{"POST", "/videos/v", field, append([]string{"Content-Type", fieldType}, auth...)},
		{"POST", "/videos/v", strings.NewReader("not a video"), auth},
		{"POST", "/admin/invalidate/" + long, nil, auth},
		{"GET", "/" + long, nil, nil},
	} {
		resp, body := httpapitest.Do(t, c.method, url+c.path, c.body, c.hdr...)
		name := c.method + " " + c.path[:min(len(c.path), 40)]
		if resp.StatusCode < 400 {
			t.Errorf("%s: %d, want an error", name, resp.StatusCode)
		}
		if len(body) > 2048 || bytes.Contains(body, []byte(long[:200])) {
			t.Errorf("%s: %d: a body of %d bytes echoes the input", name, resp.StatusCode, len(body))
		}
		if bytes.Contains(body, []byte(cfg.Data)) {
			t.Errorf("%s: %d: %s names a path of the data directory", name, resp.StatusCode, body)
		}
	}
}

// pngBomb16 is a tiny PNG declaring w x h 16-bit RGB pixels.
func pngBomb16(w, h uint32) []byte {
	var buf bytes.Buffer
	png.Encode(&buf, image.NewGray(image.Rect(0, 0, 1, 1)))
	b := buf.Bytes()
	ihdr := b[16:29]
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 16, 2
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	return b
}

// freeBoxMP4 is an upload of n bytes: a free box over all of it but the
// header, zeros.
func freeBoxMP4(n int64) io.Reader {
	hdr := binary.BigEndian.AppendUint32(nil, uint32(n))
	return io.MultiReader(bytes.NewReader(append(hdr, "free"...)), io.LimitReader(zeroReader{}, n-8))
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// declaredHuge PUTs a body declared 1 TiB long, of which the server
// should read nothing: its status, or 413 if it closed the connection
// while the client was still sending.
func declaredHuge(t *testing.T, url, token string) int {
	req, _ := http.NewRequest("PUT", url, io.LimitReader(zeroReader{}, 1<<40))
	req.ContentLength = 1 << 40
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// budget is the RAM the configuration gives the node's caches: the
// segment tier's pool (--ram) and the image store's memtable and block
// cache.
func budget(cfg Config) uint64 {
	o := cfg.Images.ImagesOptions(quiet)
	o.EnsureDefaults()
	return uint64(cfg.RAM) + uint64(o.MemTableSize) + uint64(o.BlockCacheSize)
}

// heap returns the Go heap in use after a collection, and the bytes
// allocated so far.
func heap() (inuse, total uint64) {
	runtime.GC()
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	return s.HeapInuse, s.TotalAlloc
}

// burstOverhead is what a hostile burst may leave on the heap beyond
// what the node held before it, and hostileAlloc what the whole burst may
// allocate: each of its requests costs a bounded amount (docs/
// operations.md, "Memory bounds"), none the size of a file or a box.
const (
	burstOverhead = 32 << 20
	hostileAlloc  = 512 << 20
)

// TestHostileBurstStaysInBudget sends a bounded burst of hostile
// requests to a real node: HEADs and GETs of a hand-copied 300 MiB WebM
// (its probe read 440 MB a request), thousands of ranges, image bombs
// that pass the pixel limit, an MP4 upload that is one 64 MiB free box,
// bodies declared larger than the caps, long ids. The heap after them,
// after a collection, is within what the node held before plus
// burstOverhead, and the whole burst allocates under hostileAlloc.
func TestHostileBurstStaysInBudget(t *testing.T) {
	url, token, cfg := runningNode(t)
	big := filepath.Join(cfg.Files.Dir, "big.webm")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81"))
	f.Truncate(300 << 20)
	f.Close()
	auth := httpapitest.Bearer(token)
	ranges := httpapitest.OneByteRanges(20000)

	before, alloc0 := heap()
	requests := []func() (int, int){} // each returns the status and its wanted status
	add := func(want int, method, path string, body func() io.Reader, hdr ...string) {
		requests = append(requests, func() (int, int) {
			var b io.Reader
			if body != nil {
				b = body()
			}
			resp, _ := httpapitest.Do(t, method, url+path, b, hdr...)
			return resp.StatusCode, want
		})
	}
	for range 8 {
		add(200, "HEAD", "/files/big.webm", nil)
		add(206, "GET", "/files/big.webm", nil, "Range", "bytes=-100")
		add(416, "GET", "/files/big.webm", nil, "Range", ranges)
		add(400, "GET", "/videos/"+strings.Repeat("v", 64<<10)+"/x.m4s", nil)
	}
	for range 4 {
		add(422, "PUT", "/images/bomb", func() io.Reader { return bytes.NewReader(pngBomb16(10000, 10000)) }, auth...)
		requests = append(requests, func() (int, int) { return declaredHuge(t, url+"/files/huge", token), 413 })
	}
	add(400, "POST", "/videos/freebox", func() io.Reader { return freeBoxMP4(64 << 20) }, append(auth, "Content-Type", "video/mp4")...)

	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	var mu sync.Mutex
	var bad []string
	for i, req := range requests {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if got, want := req(); got != want {
				mu.Lock()
				bad = append(bad, fmt.Sprintf("request %d: %d, want %d", i, got, want))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	after, alloc1 := heap()
	for _, b := range bad {
		t.Error(b)
	}
	t.Logf("heap in use %d MiB before, %d MiB after; the burst allocated %d MiB", before>>20, after>>20, (alloc1-alloc0)>>20)
	if after > before+burstOverhead {
		t.Errorf("heap in use grew from %d to %d MiB, more than %d MiB", before>>20, after>>20, burstOverhead>>20)
	}
	if b := budget(cfg); after > b+burstOverhead {
		t.Errorf("heap in use %d MiB, more than the budgets (%d MiB) and %d MiB", after>>20, b>>20, burstOverhead>>20)
	}
	if alloc1-alloc0 > hostileAlloc {
		t.Errorf("the burst allocated %d MiB, more than %d MiB", (alloc1-alloc0)>>20, hostileAlloc>>20)
	}
}
