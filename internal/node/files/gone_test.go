package files

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/storage/origin"
)

// A client that half-closes after asking for a range of a file in a
// bucket that is slow to answer gets no answer: the connection closes
// without a status (never net/http's implicit empty 200, nor an error
// written to nobody).
func TestClientGoneGetsNoAnswer(t *testing.T) {
	asked, release := make(chan struct{}, 1), make(chan struct{})
	s3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		select { // a store that has not answered yet
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, "slow", http.StatusServiceUnavailable)
	}))
	t.Cleanup(s3.Close)
	t.Cleanup(func() { close(release) })
	b, err := origin.NewBucket(origin.S3Options{Bucket: "media", Endpoint: s3.URL, Region: "us-east-1", PathStyle: true,
		AccessKey: "k", SecretKey: "s", RequestTimeout: time.Minute, Retries: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	_, url := bucketTier(t, b, nil)

	got := httpapitest.HalfClose(t, url, "GET /files/talk.mp4 HTTP/1.1\r\nHost: strata\r\nRange: bytes=0-99\r\n\r\n",
		func() { <-asked }) // the tier waits on the bucket
	if len(got) != 0 {
		t.Fatalf("a client gone got %q; want the connection closed without an answer", got)
	}
}
