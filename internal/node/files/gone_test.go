package files

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/storage/s3test"
)

// slowS3 is a proxy in front of the S3 server at endpoint that holds the
// requests slow picks until their client gives up, and says on held when
// it holds one.
func slowS3(t *testing.T, endpoint string, slow func(*http.Request) bool) (string, chan struct{}) {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u) // the Host field stays: the signature holds
	held := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slow(r) {
			held <- struct{}{}
			<-r.Context().Done()
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, held
}

// A client that half-closes after asking for a range of a file while the
// tier waits on a slow bucket (for the file's version, or for its
// metadata) gets no answer: the connection closes without a status,
// never net/http's implicit empty 200 nor an error written to nobody.
func TestClientGoneGetsNoAnswer(t *testing.T) {
	srv := s3test.Start(t)
	tr, _ := bucketTier(t, testBucket(t, srv), nil)
	if _, err := tr.Put("talk.mp4", strings.NewReader(strings.Repeat("x", 100000))); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		slow func(*http.Request) bool
	}{
		{"stat", func(r *http.Request) bool { return r.Method == http.MethodHead }},
		{"sidecar", func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, ".json") }},
	} {
		endpoint, held := slowS3(t, srv.Endpoint, c.slow)
		slowSrv := *srv
		slowSrv.Endpoint = endpoint
		_, url := bucketTier(t, testBucket(t, &slowSrv), nil) // a new node: nothing remembered
		got := httpapitest.HalfClose(t, url, "GET /files/talk.mp4 HTTP/1.1\r\nHost: strata\r\nRange: bytes=0-99\r\n\r\n",
			func() { <-held })
		if len(got) != 0 {
			t.Errorf("%s: a client gone got %q; want the connection closed without an answer", c.name, got)
		}
	}
}
