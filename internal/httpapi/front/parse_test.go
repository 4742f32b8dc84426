package front

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"reflect"
	"testing"
)

// parseFront runs the Front's parser over b as a connection would.
func parseFront(b []byte) (*http.Request, bool) {
	fc := &frontConn{hdr: http.Header{}, req: new(http.Request), remote: "192.0.2.1:1234"}
	fc.tmpl = (&http.Request{}).WithContext(context.Background())
	end := headerEnd(b)
	if end <= 0 {
		return nil, false
	}
	if !fc.parse(b[:end]) {
		return nil, false
	}
	return fc.req, true
}

// FuzzFrontParse: whatever request the Front's parser takes, net/http's
// own parser (http.ReadRequest) reads the same method, path, host and
// header fields from it, with no body; and the parser never panics. The
// seeds run with every go test; `go test -fuzz FuzzFrontParse
// ./internal/httpapi/front` searches further.
func FuzzFrontParse(f *testing.F) {
	for _, s := range []string{
		"GET /videos/t/700k/1.m4s HTTP/1.1\r\nHost: a\r\n\r\n",
		"HEAD /videos/t/init.mp4 HTTP/1.1\r\nhost: a:80\r\nOrigin: https://x\r\nAccept: */*\r\n\r\n",
		"GET /videos/t/1.m4s HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\nPragma: no-cache\r\nX-A:  b \t\r\n\r\n",
		"GET /videos/t/1.m4s HTTP/1.1\r\nHost: a\r\nX-A: b\r\nx-a: c\r\n\r\n",
		"GET /videos/t/1.m4s HTTP/1.1\r\nHost: [::1]:80\r\nUser-Agent: caf\xe9\r\n\r\n",
		"GET /videos/t/1.m4s HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
		"GET /videos/t/1.m4s HTTP/1.1\r\nHost: a\r\n X-A: b\r\n\r\n",
		"GET /videos/t/1.m4s?x HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /videos/t/%31.m4s HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /videos/t/1.m4s HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
		"GET /a HTTP/1.1\r\nHost: a\r\nCookie: " + string(bytes.Repeat([]byte("k=v; "), 50)) + "\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := parseFront(b)
		if !ok {
			return
		}
		want, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b)))
		if err != nil {
			t.Fatalf("the Front takes %q, net/http refuses it: %v", b, err)
		}
		if got.Method != want.Method || got.URL.Path != want.URL.Path || got.URL.RawPath != want.URL.RawPath ||
			got.URL.RawQuery != want.URL.RawQuery || got.RequestURI != want.RequestURI || got.Host != want.Host ||
			got.Proto != want.Proto || got.Close != want.Close {
			t.Fatalf("%q: the Front read %s %q (%q) host %q close %v, net/http %s %q (%q) host %q close %v", b,
				got.Method, got.URL.Path, got.RequestURI, got.Host, got.Close, want.Method, want.URL.Path, want.RequestURI, want.Host, want.Close)
		}
		delete(want.Header, "Host") // the server's readRequest moves it to Host
		if len(got.Header) != len(want.Header) || len(want.Header) > 0 && !reflect.DeepEqual(got.Header, want.Header) {
			t.Fatalf("%q: the Front read fields %v, net/http %v", b, got.Header, want.Header)
		}
		if want.ContentLength != 0 || len(want.TransferEncoding) > 0 {
			t.Fatalf("%q: the Front takes a request with a body", b)
		}
	})
}

// TestAppendFieldValue: a field value goes out as net/http writes it
// (http.Header.Write): CR and LF within it replaced by spaces, white
// space around it trimmed; a plain value as it is.
func TestAppendFieldValue(t *testing.T) {
	for _, v := range []string{
		"", " ", "video/iso.segment", "  max-age=3600 ", "a\rb", "a\nb", "a\r\nb", " \r\n a \t", "\ta\tb\t",
		"x\r", "\ny", `"etag"`, "Mon, 23 Nov 2026 10:00:00 GMT",
	} {
		var want bytes.Buffer
		if err := (http.Header{"X": {v}}).Write(&want); err != nil {
			t.Fatal(err)
		}
		got := "X: " + string(appendFieldValue([]byte(nil), v)) + "\r\n"
		if got != want.String() {
			t.Errorf("%q: %q, net/http %q", v, got, want.String())
		}
	}
}
