package httpapi

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// playlist is an HLS media playlist of 66 segments, 1.6 KB: the size of
// the synthetic library's.
var playlist = func() string {
	var b strings.Builder
	b.WriteString("#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:10\n#EXT-X-MAP:URI=\"init.mp4\"\n")
	for i := 1; i <= 66; i++ {
		fmt.Fprintf(&b, "#EXTINF:10.0,\n%d.m4s\n", i)
	}
	return b.String() + "#EXT-X-ENDLIST\n"
}()

// BenchmarkRootHandler compares, side by side, the handler of a playlist
// alone, behind the access log (to a file), behind Compress (the client
// takes gzip; at the default level 1, and at 6), and behind both as a
// node runs them.
func BenchmarkRootHandler(b *testing.B) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.apple.mpegurl")
		w.Header().Set("ETag", `"0123456789abcdef-657"`)
		w.Header().Set("Content-Length", fmt.Sprint(len(playlist)))
		io.WriteString(w, playlist)
	})
	l, err := OpenAccessLog(filepath.Join(b.TempDir(), "access.log"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"plain", h},
		{"accesslog", l.Handler(h)},
		{"gzip", Compress(h, CompressOptions{})},
		{"gzip-level6", Compress(h, CompressOptions{Level: 6})},
		{"accesslog+gzip", l.Handler(Compress(h, CompressOptions{}))},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/videos/t1/700k/playlist.m3u8", nil)
			r.Header.Set("Accept-Encoding", "gzip")
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				c.h.ServeHTTP(w, r)
				b.SetBytes(int64(w.Body.Len()))
			}
		})
	}
}
