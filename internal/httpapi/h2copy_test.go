package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestCopyHTTP2Writes: an HTTP/2 request's writes reach the writer under
// as a copy (the handler's bytes may be released once Write returns);
// an HTTP/1.1 request's go as they are.
func TestCopyHTTP2Writes(t *testing.T) {
	body := []byte("mapped bytes")
	var got []byte
	h := CopyHTTP2Writes(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "")                 //nolint:errcheck
		w.Write(body)                         //nolint:errcheck
		http.NewResponseController(w).Flush() //nolint:errcheck
	}))
	for _, proto := range []int{1, 2} {
		rec := &recordingWriter{ResponseRecorder: httptest.NewRecorder()}
		r := httptest.NewRequest("GET", "/x", nil)
		r.ProtoMajor = proto
		h.ServeHTTP(rec, r)
		got = rec.last
		same := len(got) > 0 && &got[0] == &body[0]
		if rec.Body.String() != string(body) || same != (proto == 1) || !rec.Flushed {
			t.Errorf("HTTP/%d: body %q, the handler's own bytes %v, flushed %v", proto, rec.Body.String(), same, rec.Flushed)
		}
	}
}

// recordingWriter remembers the last slice written.
type recordingWriter struct {
	*httptest.ResponseRecorder
	last []byte
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.last = p
	return w.ResponseRecorder.Write(p)
}
