package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-media/strata/internal/core/health"
	"github.com/strata-media/strata/internal/core/vod"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/origin"
)

// counters are the tier's own counters.
type counters struct {
	installed, evicted, blocksWritten atomic.Uint64
	flashReads, flashFallbacks        atomic.Uint64
	uploads                           atomic.Uint64
	probes                            atomic.Uint64 // files probed for their metadata
	ramHits, bucketReads              atomic.Uint64 // pieces of files in a bucket read from RAM, ranged GETs
	// bytes of file bodies served, by where they were read
	servedRAM, servedFlash, servedDisk atomic.Uint64
}

// Serve handles GET and HEAD /files/{id}: the whole file or byte ranges,
// from flash when it is there and flash has bandwidth for the stream, else
// from the disk; a stream neither device can carry is refused with 503 and
// Retry-After, before any byte is sent (VoD paper Algorithm 2: never a
// stream that starts and then stalls).
func (t *Tier) Serve(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := ident.ValidName(id); err != nil || isSidecar(id) {
		httpapi.Error(w, http.StatusBadRequest, fmt.Sprintf("bad file id %q", httpapi.ClipID(id)))
		return
	}
	// One handle for the whole response: a replacement renamed (or
	// uploaded) meanwhile does not mix its bytes with these.
	f, m, err := t.open(r.Context(), id)
	if err != nil {
		t.openFailed(w, r, id, err)
		return
	}
	if httpapi.ClientGone(r) { // while the bucket was asked
		f.Close()
		httpapi.AbortIfGone(r)
	}
	h := w.Header()
	h.Set("Content-Type", m.ContentType)
	h.Set("ETag", m.etag())
	h.Set("Cache-Control", "public, max-age=86400")
	if !httpapi.CheckRange(w, r, m.Size) {
		f.Close()
		return
	}
	if r.Method == http.MethodHead {
		f.Close()
		http.ServeContent(w, r, "", m.Modified, io.NewSectionReader(zeroReader{}, 0, m.Size))
		return
	}
	sess, ok := sessionOf(r)
	if !ok {
		f.Close()
		httpapi.Error(w, http.StatusBadRequest, "bad session id: 1 to 128 letters, digits and . _ ~ -")
		return
	}
	s, err := t.admit(id, m, f, sess, rangeStart(r))
	if err != nil {
		f.Close()
		httpapi.Error(w, http.StatusServiceUnavailable, err.Error()) // with Retry-After
		return
	}
	defer s.close()
	s.rc = http.NewResponseController(w)
	s.progress()
	h.Set("X-Strata-Tier", t.tierName(s.source))
	http.ServeContent(w, r, "", m.Modified, io.NewSectionReader(s, 0, m.Size))
}

// open opens file id and describes the version it opened.
func (t *Tier) open(ctx context.Context, id string) (handle, Meta, error) {
	h, err := t.cap.open(ctx, id)
	if err != nil {
		return nil, Meta{}, err
	}
	return h, t.metaOf(ctx, id, h), nil
}

// openFailed answers a file that could not be opened: 404 if it is not
// there; for a bucket that fails, the status origin.HTTPStatus gives it
// (503 with Retry-After, 504, ...), 502 for anything else, never cached;
// nothing, the connection closed, when the client has gone.
func (t *Tier) openFailed(w http.ResponseWriter, r *http.Request, id string, err error) {
	httpapi.AbortIfGone(r)
	if errors.Is(err, ErrNotFound) {
		httpapi.Error(w, http.StatusNotFound, fmt.Sprintf("file %s not found", httpapi.ClipID(id)))
		return
	}
	status, ok := origin.HTTPStatus(err)
	if !ok {
		status = http.StatusBadGateway
	}
	t.log.Warn("files: the bucket failed a read", "id", httpapi.ClipID(id), "err", err)
	w.Header().Set("Cache-Control", "no-store")
	httpapi.Error(w, status, fmt.Sprintf("file %s: the capacity tier failed: %s", httpapi.ClipID(id), http.StatusText(status)))
}

// tierName is the X-Strata-Tier of a stream from src: flash, disk, or
// bucket for the capacity tier of an S3 origin.
func (t *Tier) tierName(src vod.Source) string {
	if src == vod.FromDisk && t.cap.remote() {
		return "bucket"
	}
	return src.String()
}

// zeroReader stands in for the body of a HEAD response, never read.
type zeroReader struct{}

func (zeroReader) ReadAt(p []byte, off int64) (int, error) { return 0, io.EOF }

// admit counts the request for the LFU and reserves the stream's bitrate
// on flash (if this version of the file is there) or the disk; a stream
// on the disk that reads from the first byte joins interval caching.
func (t *Tier) admit(id string, m Meta, f handle, session string, start int64) (*stream, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	onFlash := false
	if t.mu.lfu != nil {
		t.mu.lfu.Request(t.now(), id, t.footprint(id, m))
		onFlash = t.mu.lfu.Acquire(id)
		if c, ok := t.mu.onFlash[id]; onFlash && (!ok || !sameVersion(c, m)) {
			t.releasePinLocked(id) // the copy is of another version
			onFlash = false
		}
	}
	src := t.mu.adm.Admit(onFlash, m.ByteRate)
	if onFlash && src != vod.FromFlash {
		t.releasePinLocked(id)
	}
	if src == vod.Rejected {
		return nil, fmt.Errorf("%w: %d B/s needed", ErrOverloaded, m.ByteRate)
	}
	t.wake()
	s := &stream{t: t, id: id, meta: m, admitted: src, source: src, piece: -1, file: f}
	if t.mu.iv != nil && src == vod.FromDisk && start >= 0 {
		t.arriveLocked(s, session, start)
	}
	return s, nil
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
	file  handle     // the version being served, opened by Serve
	piece int        // index of the cached piece, -1 for none
	data  []byte     // its bytes
	disk  bool       // a fallback from flash reserved disk bandwidth
	rc    *http.ResponseController
	once  sync.Once
	end   bool // the last byte of the file was read

	pos int64 // the end of the last read

	// Interval caching (interval.go); iv nil: not registered. ivAt and
	// fromRAM are guarded by mu, the rest by t.mu.
	iv      *ivStream
	ivAt    int  // the piece being read, -1 before the first
	fromRAM bool // data came from the buffer
	onRAM   bool // reads from RAM: its disk bandwidth is released
	noDisk  bool // sent back to the disk, which had no bandwidth left
}

// stallTimeout is how long a client may take no bytes before its stream
// ends and its reservation is released.
const stallTimeout = time.Minute

// progress moves the response's write deadline on: a stream lasts as long
// as its client keeps reading, however long the file plays, but a client
// that stops reading does not hold its bandwidth forever.
func (s *stream) progress() {
	if s.rc != nil {
		s.rc.SetWriteDeadline(time.Now().Add(stallTimeout))
	}
}

// ReadAt reads from the flash copy, piece by piece, falling back to the
// disk for good if a piece is missing or does not verify.
func (s *stream) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if off >= s.meta.Size {
		return 0, io.EOF
	}
	s.progress()
	n, err := s.read(p, off)
	s.pos = off + int64(n)
	if s.pos >= s.meta.Size {
		s.end = true
	}
	return n, err
}

func (s *stream) read(p []byte, off int64) (int, error) {
	if s.source == vod.FromFlash {
		if n, ok := s.readFlash(p, off); ok {
			s.t.stats.servedFlash.Add(uint64(n))
			return n, nil
		}
	}
	if s.iv != nil {
		return s.readInterval(p, off)
	}
	n, err := s.readDisk(p, off)
	s.t.stats.servedDisk.Add(uint64(n))
	return n, err
}

func (s *stream) readFlash(p []byte, off int64) (int, bool) {
	ps := s.t.pieceSize(s.id)
	k := int(off / ps)
	if k != s.piece && !s.loadPiece(k) {
		s.t.stats.flashFallbacks.Add(1)
		s.fallBack()
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
	// A degraded device is not read (but for a probe once per backoff):
	// the disk serves, and the copy stays for when the device recovers.
	ok, probe := t.health.Admit(health.Read)
	var data []byte
	var err error
	if ok {
		data, err = t.flash.ReadSegment(seg)
		t.health.Done(health.Read, probe, err)
	}
	t.mu.Lock()
	t.readsWaiting--
	if err != nil {
		t.mu.core.Drop(seg)
	}
	t.mu.Unlock()
	if !ok || err != nil {
		s.source = vod.FromDisk
		return false
	}
	t.stats.flashReads.Add(1)
	s.piece, s.data = k, data
	return true
}

// fallBack moves a flash stream to the disk for good, reserving disk
// bandwidth for it if there is any left (the stream has started: it is
// served either way, and the fallback is counted).
func (s *stream) fallBack() {
	t := s.t
	t.mu.Lock()
	defer t.mu.Unlock()
	s.disk = t.mu.adm.Disk.Reserve(s.meta.ByteRate)
}

// readDisk reads from the capacity tier: a local file directly, a
// bucket's in whole pieces through the RAM pool.
func (s *stream) readDisk(p []byte, off int64) (int, error) {
	if s.t.ram != nil {
		ps := s.t.pieceSize(s.id)
		k := int(off / ps)
		if k != s.piece {
			data, err := s.t.piece(s.file, s.id, s.meta, k)
			if err != nil {
				return 0, err
			}
			s.piece, s.data = k, data
		}
		return copy(p, s.data[off-int64(k)*ps:]), nil
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
		s.mu.Lock()
		whole, pos := s.end, s.pos
		s.mu.Unlock()
		t.mu.Lock()
		if s.admitted != vod.FromDisk || (!s.onRAM && !s.noDisk) {
			t.mu.adm.Release(s.admitted, s.meta.ByteRate)
		}
		if s.iv != nil {
			t.requestEndedLocked(s, whole, pos)
		}
		if s.disk {
			t.mu.adm.Disk.Release(s.meta.ByteRate)
		}
		if s.admitted == vod.FromFlash {
			t.releasePinLocked(s.id)
		}
		t.mu.Unlock()
		s.file.Close()
	})
}

// Put stores the file id from r, replacing any earlier version: the
// capacity tier makes it visible complete or not at all (a directory by a
// rename, a bucket by a PUT or a multipart upload completed last), so a
// refused or interrupted upload leaves nothing behind; then the flash
// copy of the old version is dropped and the new one's sidecar written.
// Its content type is the id's extension's (httpapi.ContentType).
func (t *Tier) Put(id string, r io.Reader) (Meta, error) {
	return t.PutTyped(id, "", r)
}

// PutTyped is Put storing content type ct, the declared type of the
// upload (a PUT's Content-Type), which GET answers with; "" or a type that
// says nothing of the file's kind (uploadType) leaves it to the id's
// extension. A ct that is not a media type is refused, an error wrapping
// ident.ErrInvalid, before a byte is read.
func (t *Tier) PutTyped(id, ct string, r io.Reader) (Meta, error) {
	if err := ident.ValidName(id); err != nil || isSidecar(id) {
		return Meta{}, fmt.Errorf("%w: bad file id %q", ident.ErrInvalid, httpapi.ClipID(id))
	}
	ct, err := uploadType(ct)
	if err != nil {
		return Meta{}, err
	}
	ctx := context.Background()
	if err := t.cap.put(ctx, id, r); err != nil {
		if errors.Is(err, errEmpty) {
			return Meta{}, err
		}
		return Meta{}, fmt.Errorf("files: upload of %s: %w", id, err)
	}
	t.forget(id)
	h, err := t.cap.open(ctx, id)
	if err != nil {
		return Meta{}, err
	}
	defer h.Close()
	m := t.probeMeta(id, h)
	if ct != "" {
		m.ContentType = ct
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Meta{}, err
	}
	if err := t.cap.writeSidecar(ctx, id, append(b, '\n')); err != nil {
		return Meta{}, err
	}
	v := h.version()
	t.probes.put(probeKey{id: id, size: v.size, mod: v.mod.UnixNano(), tag: v.tag}, m)
	t.stats.uploads.Add(1)
	return m, nil
}

// syncDir makes the renames in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// sweepUploads removes the temporary files of uploads a crash interrupted.
func sweepUploads(dir string, log *slog.Logger) {
	tmps, _ := filepath.Glob(filepath.Join(dir, ".upload-*"))
	for _, p := range tmps {
		if os.Remove(p) == nil {
			log.Info("removed an interrupted upload", "file", p)
		}
	}
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
}

// IsNotFound reports whether err means a file is missing.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
