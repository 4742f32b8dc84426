package files

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/storage/s3test"
)

// BenchmarkServeWholeFile reads a 16 MiB file over HTTP from a directory,
// from the bucket through the RAM pool of pieces (warm: every piece in
// RAM), and from the bucket with a RAM pool too small to keep a piece
// (every piece a ranged GET of versitygw on 127.0.0.1). No flash.
//
//	STRATA_VERSITYGW=... go test ./internal/node/files/ -run '^$' -bench ServeWholeFile -count 5
func BenchmarkServeWholeFile(b *testing.B) {
	srv := s3test.Start(b)
	data := content(16<<20, 7)
	bucket := testBucketTB(b, srv)
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"dir", Options{Dir: b.TempDir()}},
		{"bucket-ram", Options{Bucket: bucket, RAMBytes: 64 << 20}},
		{"bucket-noram", Options{Bucket: bucket, RAMBytes: 1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			c.o.BlockSize, c.o.StatTTL, c.o.Logger = 4<<20, time.Hour, slog.New(slog.DiscardHandler)
			c.o.DiskBandwidth = 1 << 40
			tr, err := Open(c.o)
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Close()
			if _, err := tr.Put("bench.bin", bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
			mux := http.NewServeMux()
			mux.HandleFunc("GET /files/{id}", tr.Serve)
			ts := httptest.NewServer(mux)
			defer ts.Close()
			get := func() {
				resp, err := http.Get(ts.URL + "/files/bench.bin")
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || n != int64(len(data)) {
					b.Fatalf("%d bytes: %v", n, err)
				}
			}
			get() // warm the RAM pool, the page cache
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for b.Loop() {
				get()
			}
		})
	}
}
