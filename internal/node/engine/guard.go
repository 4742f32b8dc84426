package engine

import (
	"io"
	"sync"
)

// A GuardedReader reads R for http.ServeContent until Close, then nothing
// (io.ErrClosedPipe): a multipart answer is read by a goroutine of
// ServeContent's that can outlive the handler (a client that went away),
// and must not read a held hit buffer (Result.Release) after it went back
// to the pool. Close runs OnClose, if set, under the same lock, so that no
// read is running while it does.
type GuardedReader struct {
	R       io.ReadSeeker
	OnClose func()

	mu     sync.Mutex
	closed bool
}

func (g *GuardedReader) Read(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return 0, io.ErrClosedPipe
	}
	return g.R.Read(p)
}

func (g *GuardedReader) Seek(offset int64, whence int) (int64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return 0, io.ErrClosedPipe
	}
	return g.R.Seek(offset, whence)
}

// Close ends the reads; later ones fail with io.ErrClosedPipe.
func (g *GuardedReader) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	if g.OnClose != nil {
		g.OnClose()
	}
}
