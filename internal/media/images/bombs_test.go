package images

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestProbeCountsBytesPerPixel: a 16-bit 10000x10000 PNG is within the
// pixel limit but not within the decode's RAM (it cost 1.6 GB), while an
// 8-bit one of the same size is accepted.
func TestProbeCountsBytesPerPixel(t *testing.T) {
	lim := Limits{MaxPixels: DefaultMaxPixels, MaxDecodeBytes: DefaultMaxDecodeBytes}
	if _, err := Probe(pngBomb16(t, 10000, 10000), lim); !errors.Is(err, ErrTooManyPixels) {
		t.Errorf("16-bit 10000x10000: %v, want ErrTooManyPixels", err)
	}
	if _, err := Probe(pngBomb(t, 10000, 10000), lim); err != nil {
		t.Errorf("8-bit gray 10000x10000: %v", err)
	}
	ts, _ := newTestServer(t, nil)
	if resp, b := put(t, ts.URL+"/images/deep", pngBomb16(t, 10000, 10000)); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("upload of the 16-bit bomb: %d %s", resp.StatusCode, b)
	}
}

// blockingBody signals its first read, then blocks until released.
type blockingBody struct {
	started, release chan struct{}
}

func (b *blockingBody) Read(p []byte) (int, error) {
	close(b.started)
	<-b.release
	return 0, io.ErrUnexpectedEOF
}

// countingBody counts the bytes read from it.
type countingBody struct {
	n    atomic.Int64
	left int
}

func (c *countingBody) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), c.left)
	c.left -= n
	c.n.Add(int64(n))
	return n, nil
}

// TestUploadSlotBeforeBody: with every upload slot taken, an upload
// waits with its body unread (bodies were buffered before the limit
// applied, so any number of them sat in RAM): cancelled while it waits,
// it has read nothing.
func TestUploadSlotBeforeBody(t *testing.T) {
	st := openTestStore(t, func(o *Options) { o.MaxConcurrent = 1 })
	h := NewHandler(st, nil, HandlerOptions{})
	holder := &blockingBody{started: make(chan struct{}), release: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		req := httptest.NewRequest("PUT", "/images/a", holder)
		req.SetPathValue("id", "a")
		h.upload(httptest.NewRecorder(), req)
	}()
	<-holder.started // a holds the only slot and reads its body

	waiting := &countingBody{left: 1 << 20}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, "PUT", "/images/b", waiting)
	req.SetPathValue("id", "b")
	func() {
		defer func() { // its client gone, the answer is aborted
			if p := recover(); p != http.ErrAbortHandler {
				t.Errorf("an upload whose client left: panic %v, want http.ErrAbortHandler", p)
			}
		}()
		h.upload(httptest.NewRecorder(), req)
	}()
	if n := waiting.n.Load(); n != 0 {
		t.Errorf("an upload waiting for a slot read %d bytes of its body", n)
	}
	close(holder.release)
	<-done
}

// TestUploadNoRoom: an upload the store's file system has no room for is
// 507 before its body is read, and nothing is stored.
func TestUploadNoRoom(t *testing.T) {
	st := openTestStore(t, nil)
	h := NewHandler(st, nil, HandlerOptions{FreeSpace: func(string) (int64, error) { return 1000, nil }})
	body := &countingBody{left: 4000}
	req := httptest.NewRequest("PUT", "/images/full", body)
	req.ContentLength = 4000
	req.SetPathValue("id", "full")
	rec := httptest.NewRecorder()
	h.upload(rec, req)
	if rec.Code != http.StatusInsufficientStorage || body.n.Load() != 0 {
		t.Errorf("no room: %d after reading %d bytes, want 507 before any", rec.Code, body.n.Load())
	}
	if _, err := st.Meta("full"); !errors.Is(err, ErrNotFound) {
		t.Errorf("stored anyway: %v", err)
	}
}
