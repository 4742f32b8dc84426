package loadgen

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A files run plays whole files at the bitrate: file a is served, file b
// refused with 503 (no bandwidth); every arrival of the window is counted
// once, as admitted, rejected or an error, and admitted viewers play to the
// end.
func TestRunFilesCountsViewers(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 50_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/files/a":
			w.Write(body)
		case "/files/b":
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	rep, err := RunFiles(context.Background(), FilesConfig{URL: srv.URL, Files: []string{"a", "b"}, Rate: 40,
		Bitrate: 500_000, Duration: time.Second, Warmup: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Arrivals == 0 || rep.Admitted+rep.Rejected+rep.Errors != rep.Arrivals || rep.Admitted == 0 || rep.Rejected == 0 {
		t.Fatalf("viewers: %+v", rep)
	}
	if rep.Errors != 0 || rep.Completed == 0 || rep.RejectRatio <= 0 || rep.RejectRatio >= 1 || rep.PeakPlaying == 0 {
		t.Fatalf("report %+v", rep)
	}
	var out strings.Builder
	rep.WriteText(&out)
	if !strings.Contains(out.String(), "rejected (") {
		t.Fatalf("text: %s", out.String())
	}
}

func TestRunFilesRejectsBadConfig(t *testing.T) {
	for _, c := range []FilesConfig{
		{URL: "http://x"},
		{URL: "http://x", Files: []string{"../a"}},
		{URL: "http://x", Files: []string{"a"}, Rate: -1},
		{URL: "x", Files: []string{"a"}},
	} {
		if _, err := RunFiles(context.Background(), c); !errors.Is(err, ErrConfig) && !errors.Is(err, ErrBadURL) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}
