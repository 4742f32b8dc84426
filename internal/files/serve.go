package files

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/vod"
)

// counters are the tier's own counters.
type counters struct {
	installed, evicted, blocksWritten atomic.Uint64
	flashReads, flashFallbacks        atomic.Uint64
	uploads                           atomic.Uint64
}

// RetryAfter is the Retry-After, in seconds, of a refused stream.
const RetryAfter = 5

// Serve handles GET and HEAD /files/{id}: the whole file or byte ranges,
// from flash when it is there and flash has bandwidth for the stream, else
// from the disk; a stream neither device can carry is refused with 503 and
// Retry-After, before any byte is sent (VoD paper Algorithm 2: never a
// stream that starts and then stalls).
func (t *Tier) Serve(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := ident.ValidName(id); err != nil || isSidecar(id) {
		http.Error(w, "bad file id", http.StatusBadRequest)
		return
	}
	m, err := t.readMeta(id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", m.ContentType)
	h.Set("ETag", fmt.Sprintf(`"%x-%x"`, m.Size, m.Modified.UnixNano()))
	h.Set("Cache-Control", "public, max-age=86400")
	if r.Method == http.MethodHead {
		http.ServeContent(w, r, "", m.Modified, io.NewSectionReader(zeroReader{}, 0, m.Size))
		return
	}
	s, err := t.admit(id, m)
	if err != nil {
		h.Set("Retry-After", strconv.Itoa(RetryAfter))
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer s.close()
	h.Set("X-Strata-Tier", s.source.String())
	http.ServeContent(w, r, "", m.Modified, io.NewSectionReader(s, 0, m.Size))
}

// zeroReader stands in for the body of a HEAD response, never read.
type zeroReader struct{}

func (zeroReader) ReadAt(p []byte, off int64) (int, error) { return 0, io.EOF }

// admit counts the request for the LFU and reserves the stream's bitrate
// on flash (if the file is there) or the disk.
func (t *Tier) admit(id string, m Meta) (*stream, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	onFlash := false
	if t.mu.lfu != nil {
		t.mu.lfu.Request(t.now(), id, t.footprint(id, m))
		onFlash = t.mu.lfu.Acquire(id)
	}
	src := t.mu.adm.Admit(onFlash, m.Bitrate)
	if onFlash && src != vod.FromFlash {
		t.releasePinLocked(id)
	}
	if src == vod.Rejected {
		return nil, fmt.Errorf("%w: %d B/s needed", ErrOverloaded, m.Bitrate)
	}
	t.wake()
	return &stream{t: t, id: id, meta: m, admitted: src, source: src, piece: -1}, nil
}

// releasePinLocked ends a flash reader of id, deleting the copy when it
// was draining and this was its last reader.
func (t *Tier) releasePinLocked(id string) {
	if freed, err := t.mu.lfu.Release(id); err == nil && freed {
		t.dropLocked(id)
	}
}

// stream is one admitted stream: it reads the file from its source.
type stream struct {
	t    *Tier
	id   string
	meta Meta
	// admitted is where the stream's bandwidth is reserved; source is
	// where it reads now (the disk, if the flash copy failed it).
	admitted, source vod.Source

	mu    sync.Mutex // protects the fields below; http reads serially, but be safe
	file  *os.File
	piece int    // index of the cached piece, -1 for none
	data  []byte // its bytes
	once  sync.Once
}

// ReadAt reads from the flash copy, piece by piece, falling back to the
// disk for good if a piece is missing or does not verify.
func (s *stream) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if off >= s.meta.Size {
		return 0, io.EOF
	}
	if s.source == vod.FromFlash {
		if n, ok := s.readFlash(p, off); ok {
			return n, nil
		}
	}
	return s.readDisk(p, off)
}

func (s *stream) readFlash(p []byte, off int64) (int, bool) {
	ps := s.t.pieceSize(s.id)
	k := int(off / ps)
	if k != s.piece && !s.loadPiece(k) {
		s.t.stats.flashFallbacks.Add(1)
		return 0, false
	}
	n := copy(p, s.data[off-int64(k)*ps:])
	return n, true
}

// loadPiece reads and verifies piece k from flash.
func (s *stream) loadPiece(k int) bool {
	t := s.t
	key := pieceKey(s.id, s.meta, k)
	t.mu.Lock()
	seg, ok := t.mu.core.FlashSegment(key)
	if ok {
		t.mu.core.Touch(key)
		t.readsWaiting++
	}
	t.mu.Unlock()
	if !ok {
		s.source = vod.FromDisk // the copy is gone: the disk serves the rest
		return false
	}
	data, err := t.flash.ReadSegment(seg)
	t.mu.Lock()
	t.readsWaiting--
	if err != nil {
		t.mu.core.Drop(seg)
	}
	t.mu.Unlock()
	if err != nil {
		s.source = vod.FromDisk
		return false
	}
	t.stats.flashReads.Add(1)
	s.piece, s.data = k, data
	return true
}

func (s *stream) readDisk(p []byte, off int64) (int, error) {
	if s.file == nil {
		f, err := os.Open(s.t.filePath(s.id))
		if err != nil {
			return 0, err
		}
		s.file = f
	}
	n, err := s.file.ReadAt(p, off)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// close releases the stream's bandwidth and flash pin.
func (s *stream) close() {
	s.once.Do(func() {
		t := s.t
		t.mu.Lock()
		t.mu.adm.Release(s.admitted, s.meta.Bitrate)
		if s.admitted == vod.FromFlash {
			t.releasePinLocked(s.id)
		}
		t.mu.Unlock()
		if s.file != nil {
			s.file.Close()
		}
	})
}

// Put stores the file id from r, replacing any earlier version: the bytes
// go to a temporary file renamed into place once complete, so an
// interrupted upload leaves nothing behind; any flash copy of the old
// version is dropped.
func (t *Tier) Put(id string, r io.Reader) (Meta, error) {
	if err := ident.ValidName(id); err != nil || isSidecar(id) {
		return Meta{}, fmt.Errorf("%w: bad file id %q", ident.ErrInvalid, id)
	}
	tmp, err := os.CreateTemp(t.opts.Dir, ".upload-*")
	if err != nil {
		return Meta{}, err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, r)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Meta{}, fmt.Errorf("files: upload of %s: %w", id, err)
	}
	if n == 0 {
		return Meta{}, fmt.Errorf("%w: empty file", ident.ErrInvalid)
	}
	return t.install(id, tmp.Name())
}

// install renames a complete upload into place with its sidecar.
func (t *Tier) install(id, tmp string) (Meta, error) {
	t.forget(id)
	if err := os.Rename(tmp, t.filePath(id)); err != nil {
		return Meta{}, err
	}
	st, err := os.Stat(t.filePath(id))
	if err != nil {
		return Meta{}, err
	}
	m := t.probeMeta(t.filePath(id), st.Size(), st.ModTime())
	t.stats.uploads.Add(1)
	return m, writeMeta(t.metaPath(id), m)
}

// forget drops the flash copy of id before its file is replaced.
func (t *Tier) forget(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.lfu == nil {
		return
	}
	switch t.mu.lfu.State(id) {
	case vod.Resident:
		if freed, err := t.mu.lfu.Drop(id); err == nil && freed {
			t.dropLocked(id)
		}
	case vod.Waiting, vod.Copying:
		t.mu.lfu.Abort(id)
		delete(t.mu.copying, id)
		t.dropLocked(id)
	}
	os.Remove(t.metaPath(id))
}

// IsNotFound reports whether err means a file is missing.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
