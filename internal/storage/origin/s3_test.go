package origin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/s3test"
)

// s3Options returns options for the server's test bucket under prefix,
// with short retries, the catalog checked on every call, and logs into
// logs (if not nil).
func s3Options(srv *s3test.Server, prefix string, logs *logBuffer) S3Options {
	o := S3Options{
		Bucket: s3test.Bucket, Prefix: prefix, Endpoint: srv.Endpoint, Region: "us-east-1", PathStyle: true,
		AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey,
		RetryBase: time.Millisecond, RetryMax: 10 * time.Millisecond, CatalogTTL: -1,
		Logger: slog.New(slog.DiscardHandler),
	}
	if logs != nil {
		o.Logger = logs.logger()
	}
	return o
}

func newTestS3(t testing.TB, opts S3Options) *S3 {
	t.Helper()
	s, err := NewS3(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newTestWriter(t testing.TB, opts S3Options) *S3Writer {
	t.Helper()
	w, err := NewS3Writer(opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// packagedTitle writes a title directory as ingest lays it out under
// root/id: metadata, manifests, two renditions, the frame store.
func packagedTitle(t *testing.T, root, id string, segments int) {
	t.Helper()
	writeFile(t, root, id+"/strata.json", []byte(`{"segment_duration_s": 4, "renditions": {"hd": {"bandwidth": 3000000}}}`))
	writeFile(t, root, id+"/manifest.mpd", []byte("<MPD/>"))
	writeFile(t, root, id+"/master.m3u8", []byte("#EXTM3U\n"))
	for i, r := range []string{"700k", "hd"} {
		writeFile(t, root, id+"/"+r+"/init.mp4", sequence(100, byte(i)))
		writeFile(t, root, id+"/"+r+"/playlist.m3u8", []byte("#EXTM3U\n"))
		for n := 1; n <= segments; n++ {
			writeFile(t, root, fmt.Sprintf("%s/%s/%d.m4s", id, r, n), sequence(1000+n, byte(n+i)))
		}
	}
	writeFile(t, root, id+"/.frames/700k/blocks", sequence(4096, 9))
}

// withoutTimes strips what differs between backends: modification times.
func withoutTimes(ts []Title) []Title {
	out := make([]Title, len(ts))
	for i, t := range ts {
		t.Modified = time.Time{}
		out[i] = t
	}
	return out
}

func TestS3TitleLikeDir(t *testing.T) {
	srv := s3test.Start(t)
	root := t.TempDir()
	packagedTitle(t, root, "bbb", 3)
	packagedTitle(t, root, "sintel", 2)
	opts := s3Options(srv, "media/vod", nil)
	w := newTestWriter(t, opts)
	for _, id := range []string{"bbb", "sintel"} {
		res, err := w.PutTitle(context.Background(), filepath.Join(root, id), id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Removed != 0 || res.Files == 0 {
			t.Fatalf("upload of %s: %+v", id, res)
		}
	}
	s := newTestS3(t, opts)
	ctx := context.Background()
	got, err := s.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := newTestDir(t, root, DirOptions{}).Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := fmt.Sprint(withoutTimes(got)), fmt.Sprint(withoutTimes(want)); g != w {
		t.Fatalf("S3 catalog\n%s\nwant, as a Dir over the same files,\n%s", g, w)
	}
	for _, tt := range got {
		if tt.Modified.IsZero() {
			t.Errorf("title %s has no modification time", tt.ID)
		}
	}
	for _, path := range []string{"bbb/manifest.mpd", "bbb/hd/init.mp4", "bbb/700k/3.m4s", "sintel/hd/2.m4s"} {
		o, err := ident.ParseObject(path)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := s.Get(ctx, o)
		if err != nil {
			t.Fatalf("Get %s: %v", path, err)
		}
		local, _ := os.ReadFile(filepath.Join(root, path))
		if !bytes.Equal(obj.Data, local) || obj.Modified.IsZero() {
			t.Fatalf("Get %s: %d bytes at %v, want the %d uploaded", path, len(obj.Data), obj.Modified, len(local))
		}
	}
	if st := s.Stats(); st.Reads != 4 || st.Errors != 0 {
		t.Fatalf("stats %+v", st)
	}
	// The frame store is uploaded with the title, though not cataloged.
	if _, err := srv.Client(t).StatObject(ctx, s3test.Bucket, "media/vod/bbb/.frames/700k/blocks", minio.StatObjectOptions{}); err != nil {
		t.Fatalf("frame store: %v", err)
	}
}

// TestGetRange reads ranges of one object from an S3 (ranged GETs), a
// Multi over it, and a Dir (whole reads, sliced): all answer alike.
func TestGetRange(t *testing.T) {
	srv := s3test.Start(t)
	root := t.TempDir()
	packagedTitle(t, root, "bbb", 2)
	opts := s3Options(srv, "", nil)
	if _, err := newTestWriter(t, opts).PutTitle(context.Background(), filepath.Join(root, "bbb"), "bbb", nil); err != nil {
		t.Fatal(err)
	}
	s3 := newTestS3(t, opts)
	for name, org := range map[string]Origin{"s3": s3, "multi": NewMulti(s3), "dir": newTestDir(t, root, DirOptions{})} {
		t.Run(name, func(t *testing.T) { checkRanges(t, org, root) })
	}
}

func checkRanges(t *testing.T, org Origin, root string) {
	ctx := context.Background()
	o := ident.Object{Video: "bbb", Rendition: "700k", Name: "2.m4s"} // 1002 bytes
	whole, _ := os.ReadFile(filepath.Join(root, o.Path()))
	for _, c := range []struct{ off, n, wantEnd int64 }{
		{0, 10, 10}, {500, 100, 600}, {1000, 2, 1002}, {1000, 50, 1002}, {7, -1, 1002}, {0, -1, 1002}, {1001, 1, 1002}, {5, 0, 5},
	} {
		r, err := GetRange(ctx, org, o, c.off, c.n)
		if err != nil {
			t.Fatalf("GetRange(%d, %d): %v", c.off, c.n, err)
		}
		if r.Offset != c.off || r.Size != 1002 || !bytes.Equal(r.Data, whole[c.off:c.wantEnd]) || r.Modified.IsZero() {
			t.Fatalf("GetRange(%d, %d) = offset %d size %d, %d bytes, want %d", c.off, c.n, r.Offset, r.Size, len(r.Data), c.wantEnd-c.off)
		}
	}
	for _, off := range []int64{1002, 5000, -1} {
		for _, n := range []int64{0, 1, -1} {
			if _, err := GetRange(ctx, org, o, off, n); !errors.Is(err, ErrInvalidRange) {
				t.Errorf("GetRange(%d, %d) = %v, want ErrInvalidRange", off, n, err)
			}
		}
	}
	missing := ident.Object{Video: "bbb", Rendition: "700k", Name: "9.m4s"}
	if _, err := GetRange(ctx, org, missing, 0, 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetRange of a missing object: %v", err)
	}
}

func TestS3NotFound(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	opts := s3Options(srv, "p", nil)
	// An upload in progress: objects, no strata.json yet.
	c := srv.Client(t)
	for _, k := range []string{"p/half/700k/1.m4s", "p/half/manifest.mpd"} {
		if _, err := c.PutObject(ctx, s3test.Bucket, k, strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s := newTestS3(t, opts)
	if ts, err := s.Catalog(ctx); err != nil || len(ts) != 0 {
		t.Fatalf("catalog of an unpublished title: %v %v", ts, err)
	}
	if _, err := s.Title(ctx, "half"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Title of an unpublished title: %v", err)
	}
	missing := []ident.Object{{Video: "half", Rendition: "700k", Name: "2.m4s"}, {Video: "none", Name: "x"}}
	for _, o := range missing {
		if _, err := s.Get(ctx, o); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get %s: %v, want ErrNotFound", o, err)
		}
		if _, err := s.GetRange(ctx, o, 0, 1); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetRange %s: %v, want ErrNotFound", o, err)
		}
	}
	if st := s.Stats(); st.NotFound != 4 || st.Reads != 0 {
		t.Fatalf("stats %+v", st)
	}
	if _, err := s.Get(ctx, ident.Object{Video: "..", Name: "x"}); !errors.Is(err, ident.ErrInvalid) {
		t.Fatalf("invalid id: %v", err)
	}
	// A missing bucket is the store's configuration, not a missing object.
	opts.Bucket = "no-such-bucket"
	if _, err := newTestS3(t, opts).Get(ctx, missing[0]); !errors.Is(err, ErrUpstream) || errors.Is(err, ErrNotFound) {
		t.Fatalf("Get from a missing bucket: %v, want ErrUpstream", err)
	}
	if err := newTestS3(t, opts).Check(ctx); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Check of a missing bucket: %v", err)
	}
}

func TestS3Republish(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	root := t.TempDir()
	packagedTitle(t, root, "bbb", 5)
	opts := s3Options(srv, "", nil)
	w := newTestWriter(t, opts)
	dir := filepath.Join(root, "bbb")
	if _, err := w.PutTitle(ctx, dir, "bbb", nil); err != nil {
		t.Fatal(err)
	}
	s := newTestS3(t, opts)
	if tt, err := s.Title(ctx, "bbb"); err != nil || tt.SegmentCount() != 10 || tt.SegmentDuration != 4 {
		t.Fatalf("first upload: %+v %v", tt, err)
	}
	scans := s.cat.scans.Load()
	if _, err := s.Catalog(ctx); err != nil || s.cat.scans.Load() != scans {
		t.Fatalf("an unchanged title was read again (%v)", err)
	}
	// A new version with fewer segments and no metadata: readers never see
	// it half uploaded, and the old segments go.
	for _, r := range []string{"700k", "hd"} {
		for n := 3; n <= 5; n++ {
			os.Remove(filepath.Join(dir, r, fmt.Sprintf("%d.m4s", n)))
		}
	}
	os.Remove(filepath.Join(dir, metaFile))
	reader := newTestS3(t, opts)
	var during []error
	res, err := w.PutTitle(ctx, dir, "bbb", func(p Progress) {
		if p.Files == 1 && len(during) == 0 {
			_, err := reader.Title(ctx, "bbb")
			during = append(during, err)
		}
	})
	if err != nil || res.Removed != 6 {
		t.Fatalf("second upload: %+v %v", res, err)
	}
	if len(during) != 1 || !errors.Is(during[0], ErrNotFound) {
		t.Fatalf("the title while it was uploaded: %v, want ErrNotFound", during)
	}
	tt, err := s.Title(ctx, "bbb")
	if err != nil || tt.SegmentCount() != 4 || tt.SegmentDuration != 10 {
		t.Fatalf("second upload: %+v %v", tt, err)
	}
}

func TestS3MultipartUpload(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	const size = 2*minPartSize + 12345
	path := filepath.Join(t.TempDir(), "big.bin")
	data := sequence(size, 3)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := s3Options(srv, "files", nil)
	opts.PartSize = minPartSize
	var reports []Progress
	err := newTestWriter(t, opts).PutFile(ctx, path, "big/big.bin", func(p Progress) { reports = append(reports, p) })
	if err != nil {
		t.Fatal(err)
	}
	info, err := srv.Client(t).StatObject(ctx, s3test.Bucket, "files/big/big.bin", minio.StatObjectOptions{})
	if err != nil || !strings.HasSuffix(info.ETag, "-3") {
		t.Fatalf("want a 3-part multipart upload, ETag %q (%v)", info.ETag, err)
	}
	last := reports[len(reports)-1]
	if last.Sent < size || last.Total != size || last.Files != 1 || last.TotalFiles != 1 || last.Key != "big/big.bin" {
		t.Fatalf("last progress %+v", last)
	}
	for i := 1; i < len(reports); i++ {
		if reports[i].Sent < reports[i-1].Sent {
			t.Fatalf("progress went back: %+v then %+v", reports[i-1], reports[i])
		}
	}
	s := newTestS3(t, opts)
	obj, err := s.Get(ctx, ident.Object{Video: "big", Name: "big.bin"})
	if err != nil || !bytes.Equal(obj.Data, data) {
		t.Fatalf("read back %d bytes of %d, identical %t (%v)", len(obj.Data), size, bytes.Equal(obj.Data, data), err)
	}
	opts.MaxObjectSize = minPartSize
	if _, err := newTestS3(t, opts).Get(ctx, ident.Object{Video: "big", Name: "big.bin"}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Get over MaxObjectSize: %v", err)
	}
}

// TestS3RetryRestart stops the server, and restarts it from the retry
// hook after the first attempt failed: the read succeeds on a retry.
func TestS3RetryRestart(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	opts := s3Options(srv, "", nil)
	o := ident.Object{Video: "v", Name: "f"}
	if err := newTestWriter(t, opts).PutFile(ctx, writeTemp(t, "hello"), o.Path(), nil); err != nil {
		t.Fatal(err)
	}
	var failures []error
	opts.retryHook = func(attempt int, err error) {
		failures = append(failures, err)
		if attempt == 1 {
			srv.Restart(t)
		}
	}
	s := newTestS3(t, opts)
	srv.Stop()
	obj, err := s.Get(ctx, o)
	if err != nil || string(obj.Data) != "hello" {
		t.Fatalf("Get across a restart: %q %v", obj.Data, err)
	}
	if len(failures) != 1 || !errors.Is(failures[0], ErrUnavailable) {
		t.Fatalf("failed attempts %v, want one ErrUnavailable", failures)
	}
}

func writeTemp(t *testing.T, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestS3Unreachable reads from an address nobody listens on, and from a
// server that accepts connections but never answers: the retries run
// out and the errors say which.
func TestS3Unreachable(t *testing.T) {
	ctx := context.Background()
	o := ident.Object{Video: "v", Name: "f"}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	silent := silentServer(t)
	// A refused connection fails long before its timeout, however loaded
	// the machine; a silent server always reaches it.
	for _, c := range []struct {
		addr    string
		timeout time.Duration
		want    error
	}{{closed, time.Minute, ErrUnavailable}, {silent, 100 * time.Millisecond, ErrTimeout}} {
		attempts := 1
		opts := S3Options{Bucket: "bkt", Endpoint: "http://" + c.addr, PathStyle: true, Region: "us-east-1",
			AccessKey: "AKIDEXAMPLE", SecretKey: "sk", Retries: 2, RetryBase: time.Millisecond,
			RequestTimeout: c.timeout, Logger: slog.New(slog.DiscardHandler),
			retryHook: func(int, error) { attempts++ }}
		s := newTestS3(t, opts)
		_, err := s.Get(ctx, o)
		if !errors.Is(err, c.want) || attempts != 3 {
			t.Errorf("Get from %s: %v after %d attempts, want %v after 3", c.addr, err, attempts, c.want)
		}
		if _, err := s.Catalog(ctx); !errors.Is(err, c.want) {
			t.Errorf("Catalog from %s: %v, want %v", c.addr, err, c.want)
		}
		if st := s.Stats(); st.Errors != 1 {
			t.Errorf("stats %+v", st)
		}
	}
	// A caller that gives up is not the store's failure.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	s := newTestS3(t, S3Options{Bucket: "bkt", Endpoint: "http://" + silent, Logger: slog.New(slog.DiscardHandler)})
	if _, err := s.Get(cctx, o); !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("cancelled Get: %v", err)
	}
}

// silentServer accepts connections and reads requests but never answers,
// until the test ends.
func silentServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(io.Discard, c) })
		}
	})
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return l.Addr().String()
}

// TestS3TruncatedBody puts a proxy between the origin and the server that
// cuts every answer short: the read fails, it never returns a short
// object.
func TestS3TruncatedBody(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	opts := s3Options(srv, "", nil)
	o := ident.Object{Video: "v", Name: "f"}
	if err := newTestWriter(t, opts).PutFile(ctx, writeTemp(t, strings.Repeat("x", 100000)), o.Path(), nil); err != nil {
		t.Fatal(err)
	}
	opts.Endpoint = "http://" + cuttingProxy(t, strings.TrimPrefix(srv.Endpoint, "http://"), 20000)
	attempts := 1
	opts.retryHook = func(int, error) { attempts++ }
	s := newTestS3(t, opts)
	obj, err := s.Get(ctx, o)
	if !errors.Is(err, ErrUpstream) || obj.Data != nil || attempts != 4 {
		t.Fatalf("Get through a cutting proxy: %d bytes, %v after %d attempts; want ErrUpstream after 4", len(obj.Data), err, attempts)
	}
}

// cuttingProxy forwards connections to addr, and closes each after
// passing limit bytes of the answer.
func cuttingProxy(t *testing.T, addr string, limit int64) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { cut(c, addr, limit) })
		}
	})
	t.Cleanup(func() { l.Close(); wg.Wait() })
	return l.Addr().String()
}

func cut(c net.Conn, addr string, limit int64) {
	defer c.Close()
	up, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer up.Close()
	go func() { _, _ = io.Copy(up, c) }()
	_, _ = io.CopyN(c, up, limit)
}

func TestReadBody(t *testing.T) {
	if d, err := readBody(strings.NewReader("abc"), 3); err != nil || string(d) != "abc" {
		t.Fatalf("%q %v", d, err)
	}
	for _, c := range []struct {
		r    io.Reader
		n    int64
		want error
	}{
		{strings.NewReader("ab"), 3, io.ErrUnexpectedEOF},
		{strings.NewReader(""), 3, io.ErrUnexpectedEOF},
		{iotest.TimeoutReader(strings.NewReader("ab")), 3, iotest.ErrTimeout},
		{strings.NewReader("abcd"), 3, ErrUpstream},
		{strings.NewReader("abc"), -1, ErrUpstream},
	} {
		if d, err := readBody(c.r, c.n); !errors.Is(err, c.want) || d != nil {
			t.Errorf("readBody(%d): %q %v, want %v", c.n, d, err, c.want)
		}
	}
}

func TestStatusKind(t *testing.T) {
	for _, c := range []struct {
		status int
		code   string
		want   error
		retry  bool
	}{
		{404, "NoSuchKey", ErrNotFound, false},
		{404, "NoSuchBucket", ErrUpstream, false},
		{403, "AccessDenied", ErrUpstream, false},
		{416, "InvalidRange", ErrInvalidRange, false},
		{429, "", ErrUnavailable, false},
		{500, "InternalError", ErrUpstream, true},
		{502, "", ErrUpstream, true},
		{503, "SlowDown", ErrUnavailable, true},
		{504, "", ErrTimeout, true},
	} {
		err, retry := classify("get x", minio.ErrorResponse{StatusCode: c.status, Code: c.code})
		if !errors.Is(err, c.want) || retry != c.retry {
			t.Errorf("%d %s: %v retry %t, want %v retry %t", c.status, c.code, err, retry, c.want, c.retry)
		}
	}
}

// TestS3Credentials reads with credentials from each source, and with
// wrong ones: the store refuses (ErrUpstream), and neither errors nor
// logs show the credentials.
func TestS3Credentials(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	opts := s3Options(srv, "", nil)
	o := ident.Object{Video: "v", Name: "f"}
	if err := newTestWriter(t, opts).PutFile(ctx, writeTemp(t, "data"), o.Path(), nil); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_ACCESS_KEY", "AWS_SECRET_KEY"} {
		t.Setenv(v, "")
	}
	t.Setenv("HOME", t.TempDir())
	implicit := opts
	implicit.AccessKey, implicit.SecretKey = "", ""
	read := func(what string, opts S3Options) error {
		t.Helper()
		obj, err := newTestS3(t, opts).Get(ctx, o)
		if err == nil && string(obj.Data) != "data" {
			t.Fatalf("%s: read %q", what, obj.Data)
		}
		return err
	}

	if err := read("anonymous", implicit); !errors.Is(err, ErrUpstream) {
		t.Fatalf("anonymous read: %v, want ErrUpstream (access denied)", err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	if err := read("environment", implicit); err != nil {
		t.Fatalf("credentials from the environment: %v", err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	file := filepath.Join(t.TempDir(), "credentials")
	ini := fmt.Sprintf("[default]\naws_access_key_id = nobody\naws_secret_access_key = nothing\n\n"+
		"[strata]\naws_access_key_id = %s\naws_secret_access_key = %s\n", s3test.AccessKey, s3test.SecretKey)
	if err := os.WriteFile(file, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile := implicit
	fromFile.CredentialsFile, fromFile.Profile = file, "strata"
	if err := read("credentials file", fromFile); err != nil {
		t.Fatalf("credentials from a file: %v", err)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", file)
	t.Setenv("AWS_PROFILE", "strata")
	if err := read("AWS_SHARED_CREDENTIALS_FILE", implicit); err != nil {
		t.Fatalf("credentials from AWS_SHARED_CREDENTIALS_FILE: %v", err)
	}

	var logs logBuffer
	wrong := s3Options(srv, "", &logs)
	wrong.AccessKey, wrong.SecretKey, wrong.SessionToken = testAccess, testSecret, testToken
	s := newTestS3(t, wrong)
	s.log.Info("opened", "origin", s)
	_, getErr := s.Get(ctx, o)
	_, catErr := s.Catalog(ctx)
	if !errors.Is(getErr, ErrUpstream) || !errors.Is(catErr, ErrUpstream) {
		t.Fatalf("wrong credentials: %v; %v; want ErrUpstream", getErr, catErr)
	}
	unreachable := wrong
	unreachable.Endpoint, unreachable.Retries, unreachable.RequestTimeout = "http://127.0.0.1:1", 1, 100*time.Millisecond
	_, downErr := newTestS3(t, unreachable).Get(ctx, o)
	out := fmt.Sprint(getErr, catErr, downErr, s) + logs.String()
	for _, secret := range []string{testAccess, testSecret, testToken} {
		if strings.Contains(out, secret) {
			t.Fatalf("credential %q shown in:\n%s", secret, out)
		}
	}
	if !strings.Contains(logs.String(), "retrying") {
		t.Fatalf("want the retry logged:\n%s", logs.String())
	}
}

// TestS3Outage stops the server under a cached catalog: a title already
// known is still described (its reads fail, and say why), the catalog
// fails, and all is well again once the server is back.
func TestS3Outage(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	root := t.TempDir()
	packagedTitle(t, root, "bbb", 1)
	opts := s3Options(srv, "", nil)
	if _, err := newTestWriter(t, opts).PutTitle(ctx, filepath.Join(root, "bbb"), "bbb", nil); err != nil {
		t.Fatal(err)
	}
	opts.Retries = 1
	s := newTestS3(t, opts)
	if ts, err := s.Catalog(ctx); err != nil || len(ts) != 1 {
		t.Fatalf("catalog: %v %v", ts, err)
	}
	srv.Stop()
	if tt, err := s.Title(ctx, "bbb"); err != nil || tt.SegmentCount() != 2 {
		t.Fatalf("Title during the outage: %+v %v, want the cached title", tt, err)
	}
	if _, err := s.Get(ctx, ident.Object{Video: "bbb", Rendition: "hd", Name: "1.m4s"}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Get during the outage: %v, want ErrUnavailable", err)
	}
	if _, err := s.Catalog(ctx); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Catalog during the outage: %v, want ErrUnavailable", err)
	}
	srv.Restart(t)
	if ts, err := s.Catalog(ctx); err != nil || len(ts) != 1 {
		t.Fatalf("catalog after the outage: %v %v", ts, err)
	}
}

// A store that refuses a request sent without credentials (none in the
// options, the environment or the credentials file) makes the start-up
// check say that none were found and where they were looked up, not only
// the store's "Access Denied"; with credentials, a refusal says nothing
// of the kind.
func TestS3NoCredentialsSaysWhere(t *testing.T) {
	srv := s3test.Start(t)
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_ACCESS_KEY", "AWS_SECRET_KEY"} {
		t.Setenv(v, "")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	anon := s3Options(srv, "", nil)
	anon.AccessKey, anon.SecretKey = "", ""
	err := newTestS3(t, anon).Check(context.Background())
	if !errors.Is(err, ErrUpstream) {
		t.Fatalf("anonymous check: %v, want ErrUpstream", err)
	}
	for _, want := range []string{"no S3 credentials were found", "AWS_ACCESS_KEY_ID", filepath.Join(home, ".aws", "credentials"),
		`profile "default"`, filepath.Join(home, ".aws", "config")} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/etc/strata/aws-credentials")
	t.Setenv("AWS_PROFILE", "media")
	if err := newTestS3(t, anon).Check(context.Background()); !strings.Contains(err.Error(), "/etc/strata/aws-credentials") ||
		!strings.Contains(err.Error(), `profile "media"`) {
		t.Errorf("the error does not name the file and profile the environment chose: %v", err)
	}
	w := newTestWriter(t, anon)
	if err := w.PutFile(context.Background(), writeTemp(t, "data"), "files/x", nil); err == nil ||
		!strings.Contains(err.Error(), "no S3 credentials were found") {
		t.Errorf("anonymous upload: %v", err)
	}

	wrong := s3Options(srv, "", nil)
	wrong.AccessKey, wrong.SecretKey = testAccess, testSecret
	if err := newTestS3(t, wrong).Check(context.Background()); err == nil || strings.Contains(err.Error(), "no S3 credentials") {
		t.Errorf("check with wrong credentials: %v", err)
	}
}
