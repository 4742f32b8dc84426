package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/storage/s3test"
)

// These tests run against a real S3 server (versitygw, s3test): they
// skip without it, and fail when STRATA_REQUIRE_S3 is set.

// testBucket returns a Bucket over the server's test bucket, prefix
// "media", with the smallest part size S3 allows (5 MiB) so that a file
// of a few MiB goes in parts.
func testBucket(t *testing.T, srv *s3test.Server) *origin.Bucket { return testBucketTB(t, srv) }

func testBucketTB(t testing.TB, srv *s3test.Server) *origin.Bucket {
	t.Helper()
	b, err := origin.NewBucket(origin.S3Options{Bucket: s3test.Bucket, Prefix: "media", Endpoint: srv.Endpoint,
		Region: "us-east-1", PathStyle: true, AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey,
		PartSize: 5 << 20, RequestTimeout: 5 * time.Second, Retries: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bucketTier opens a tier over b, with flash if dev is not nil, served on
// 127.0.0.1 until the test ends.
func bucketTier(t *testing.T, b *origin.Bucket, dev device.Device) (*Tier, string) {
	t.Helper()
	tr, err := Open(Options{Bucket: b, Flash: dev, BlockSize: testBlock, StatTTL: time.Hour,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mountTier(t, tr))
	t.Cleanup(func() { srv.Close(); tr.Close() })
	return tr, srv.URL
}

func httpPut(t *testing.T, url, id string, data []byte) *http.Response {
	t.Helper()
	resp, _ := httpapitest.Do(t, "PUT", url+"/files/"+id, bytes.NewReader(data), httpapitest.Bearer(testToken)...)
	return resp
}

func httpGet(t *testing.T, url, id, rng string) (*http.Response, []byte) {
	t.Helper()
	return httpapitest.Do(t, "GET", url+"/files/"+id, nil, rangeField(rng)...)
}

// keys lists the objects under the files' folder.
func keys(t *testing.T, b *origin.Bucket) []string {
	t.Helper()
	objs, err := b.List(context.Background(), bucketDir)
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, o := range objs {
		ks = append(ks, o.Key)
	}
	return ks
}

// A file uploaded through PUT /files is a multipart object in the bucket
// with its sidecar; GETs and ranges read it in pieces through RAM: asking
// again for what was read makes no request to the bucket.
func TestBucketFileUploadAndRanges(t *testing.T) {
	srv := s3test.Start(t)
	b := testBucket(t, srv)
	tr, url := bucketTier(t, b, nil)
	data := content(6<<20+1234, 3) // two parts of 5 MiB at most
	if resp := httpPut(t, url, "movie.mp4", data); resp.StatusCode != 201 {
		t.Fatalf("PUT: %s", resp.Status)
	}
	if got := strings.Join(keys(t, b), " "); got != ".files/movie.mp4 .files/movie.mp4.json" {
		t.Fatalf("objects: %s", got)
	}
	side, info, err := b.ReadAll(context.Background(), sidecarKey("movie.mp4"), maxSidecar)
	obj, _ := b.Stat(context.Background(), fileKey("movie.mp4"))
	if err != nil || !strings.Contains(string(side), obj.ETag) || info.Size == 0 {
		t.Fatalf("sidecar %s does not name the object's ETag %q: %v", side, obj.ETag, err)
	}
	resp, body := httpGet(t, url, "movie.mp4", "")
	if resp.StatusCode != 200 || !bytes.Equal(body, data) || resp.Header.Get("X-Strata-Tier") != "bucket" {
		t.Fatalf("GET: %s, %d bytes of %d", resp.Status, len(body), len(data))
	}
	ps := int(tr.pieceSize("movie.mp4"))
	ranges := [][2]int{{0, 0}, {ps - 10, ps + 10}, {5 << 20, 5<<20 + 100}, {len(data) - 7, len(data) - 1}}
	for _, r := range ranges {
		resp, body := httpGet(t, url, "movie.mp4", fmt.Sprintf("bytes=%d-%d", r[0], r[1]))
		if resp.StatusCode != 206 || !bytes.Equal(body, data[r[0]:r[1]+1]) {
			t.Fatalf("range %v: %s, %d bytes", r, resp.Status, len(body))
		}
	}
	reads, sent := tr.stats.bucketReads.Load(), tr.Stats().BucketRequests.Total()
	for _, r := range ranges {
		httpGet(t, url, "movie.mp4", fmt.Sprintf("bytes=%d-%d", r[0], r[1]))
	}
	st := tr.Stats()
	if again := tr.stats.bucketReads.Load(); again != reads || st.RAMHits == 0 || st.BucketRequests.Total() != sent {
		t.Fatalf("ranges read again made %d piece reads, %d requests to the bucket (RAM hits %d)",
			again-reads, st.BucketRequests.Total()-sent, st.RAMHits)
	}
	if resp, _ := httpGet(t, url, "absent.bin", ""); resp.StatusCode != 404 {
		t.Fatalf("absent file: %s", resp.Status)
	}
}

// halfPut sends a PUT that declares n bytes, sends half of them, and
// closes its side of the connection; it returns the answer's status line,
// once the server has given up the upload.
func halfPut(t *testing.T, url, id string, n int) string {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "PUT /files/%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", id, testToken, n)
	if _, err := conn.Write(content(n/2, 9)); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).CloseWrite()
	answer, _ := io.ReadAll(conn)
	status, _, _ := strings.Cut(string(answer), "\r\n")
	return status
}

// An upload cut off half way, after a part was sent, or refused, leaves
// nothing: no object, no incomplete multipart upload, and the earlier
// version of a replaced file served whole.
func TestBucketHalfUploadLeavesNothing(t *testing.T) {
	srv := s3test.Start(t)
	b := testBucket(t, srv)
	tr, url := bucketTier(t, b, nil)
	old := content(100<<10, 4)
	httpPut(t, url, "kept.bin", old)
	uploads := tr.stats.uploads.Load()
	for _, id := range []string{"half.bin", "kept.bin"} {
		// 7 MiB sent: one part of 5 MiB uploaded, then the body ends short.
		if status := halfPut(t, url, id, 14<<20); strings.Contains(status, "201") {
			t.Fatalf("cut upload of %s: %s", id, status)
		}
	}
	if resp := httpPut(t, url, "empty.bin", nil); resp.StatusCode != 400 {
		t.Fatalf("empty upload: %s", resp.Status)
	}
	if n, err := b.IncompleteUploads(context.Background(), bucketDir); n != 0 || err != nil {
		t.Fatalf("incomplete uploads left: %d, %v", n, err)
	}
	if got := strings.Join(keys(t, b), " "); got != ".files/kept.bin .files/kept.bin.json" {
		t.Fatalf("objects after the cut uploads: %s", got)
	}
	if resp, _ := httpGet(t, url, "half.bin", ""); resp.StatusCode != 404 {
		t.Fatalf("half upload: %s", resp.Status)
	}
	if _, body := httpGet(t, url, "kept.bin", ""); !bytes.Equal(body, old) {
		t.Fatal("the earlier version is not served whole after a cut replacement")
	}
	if tr.stats.uploads.Load() != uploads {
		t.Fatal("a cut upload was counted as stored")
	}
}

// A popular file in the bucket is copied to flash in whole blocks; a node
// restarted on the same bucket and flash finds the copy again and serves
// from it, and a new node with no flash serves the file from the bucket.
func TestBucketFlashCopyAndRestart(t *testing.T) {
	srv := s3test.Start(t)
	b := testBucket(t, srv)
	mem := device.NewMem(64*testBlock, 4096)
	dev := &wholeBlocks{Device: mem}
	tr, url := bucketTier(t, b, dev)
	data := content(3*testBlock+77, 5)
	httpPut(t, url, "hot.webm", data)
	httpGet(t, url, "hot.webm", "")
	waitResident(t, tr, 1)
	resp, body := httpGet(t, url, "hot.webm", "bytes=100-")
	if resp.Header.Get("X-Strata-Tier") != "flash" || !bytes.Equal(body, data[100:]) {
		t.Fatalf("served from %s", resp.Header.Get("X-Strata-Tier"))
	}
	if dev.bad.Load() != 0 || dev.ok.Load() == 0 {
		t.Fatalf("flash writes: %d whole blocks, %d others", dev.ok.Load(), dev.bad.Load())
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}

	tr2, url2 := bucketTier(t, b, &wholeBlocks{Device: mem})
	if st := tr2.Stats(); st.ResidentFiles != 1 {
		t.Fatalf("after restart: %+v", st)
	}
	reads := tr2.stats.bucketReads.Load()
	resp, body = httpGet(t, url2, "hot.webm", "")
	if resp.Header.Get("X-Strata-Tier") != "flash" || !bytes.Equal(body, data) || tr2.stats.bucketReads.Load() != reads {
		t.Fatalf("after restart: served from %s, %d bucket reads", resp.Header.Get("X-Strata-Tier"), tr2.stats.bucketReads.Load()-reads)
	}

	_, url3 := bucketTier(t, testBucket(t, srv), nil)
	if _, body := httpGet(t, url3, "hot.webm", ""); !bytes.Equal(body, data) {
		t.Fatal("a new node on the bucket does not serve the file")
	}
}

// waitResident waits, bounded, until tr has want files on flash.
func waitResident(t *testing.T, tr *Tier, want int) {
	t.Helper()
	for i := 0; tr.Stats().ResidentFiles < want; i++ {
		if i == 200 {
			t.Fatalf("not copied to flash: %+v", tr.Stats())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A handle reads only its version: once the object is replaced, its reads
// fail with ErrChanged rather than mix two versions.
func TestBucketHandleKeepsItsVersion(t *testing.T) {
	srv := s3test.Start(t)
	b := testBucket(t, srv)
	tr, _ := bucketTier(t, b, nil)
	v1, v2 := content(1000, 1), content(1000, 2)
	if _, err := tr.Put("v.bin", bytes.NewReader(v1)); err != nil {
		t.Fatal(err)
	}
	h, err := tr.cap.open(context.Background(), "v.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Put("v.bin", bytes.NewReader(v2)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := h.ReadAt(buf, 0); !errors.Is(err, origin.ErrChanged) {
		t.Fatalf("read of a replaced version: %v", err)
	}
	h2, _ := tr.cap.open(context.Background(), "v.bin")
	if _, err := h2.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, v2[:10]) {
		t.Fatalf("new version: %v", err)
	}
}

// A bucket that does not answer gets 503 with Retry-After, not cached,
// and never a 404.
func TestBucketDownIs503(t *testing.T) {
	srv := s3test.Start(t)
	b := testBucket(t, srv)
	_, url := bucketTier(t, b, nil)
	srv.Stop()
	resp, _ := httpGet(t, url, "any.bin", "")
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("bucket down: %s, Retry-After %q, Cache-Control %q", resp.Status, resp.Header.Get("Retry-After"), resp.Header.Get("Cache-Control"))
	}
}

// A file replaced by another node on the same bucket: a read of this
// node's remembered version fails (the response is cut, never mixed),
// and the next request serves the new version.
func TestBucketReplacedByAnotherNode(t *testing.T) {
	srv := s3test.Start(t)
	b := testBucket(t, srv)
	trA, urlA := bucketTier(t, b, nil)
	trB, _ := bucketTier(t, testBucket(t, srv), nil)
	ps := int(trA.pieceSize("f.bin"))
	v1, v2 := content(2*ps, 1), content(2*ps, 2)
	if _, err := trA.Put("f.bin", bytes.NewReader(v1)); err != nil {
		t.Fatal(err)
	}
	if _, body := httpGet(t, urlA, "f.bin", "bytes=0-9"); !bytes.Equal(body, v1[:10]) {
		t.Fatal("first version")
	}
	if _, err := trB.Put("f.bin", bytes.NewReader(v2)); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", urlA+"/files/f.bin", nil)
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", ps, ps+9))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode < 300 {
			t.Fatalf("a piece of the replaced version was served: %d %q", resp.StatusCode, body[:min(len(body), 10)])
		}
	}
	if _, body := httpGet(t, urlA, "f.bin", fmt.Sprintf("bytes=%d-%d", ps, ps+9)); !bytes.Equal(body, v2[ps:ps+10]) {
		t.Fatal("the new version is not served after the failed read")
	}
}
