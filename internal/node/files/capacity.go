package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/strata-media/strata/internal/ident"
)

// errEmpty reports an upload of no bytes: nothing is stored.
var errEmpty = fmt.Errorf("%w: empty file", ident.ErrInvalid)

// A version names one stored version of a file: its size and
// modification time, and for a bucket the object's ETag, which changes
// on every write even within a second.
type version struct {
	size int64
	mod  time.Time
	tag  string
}

// A capacity holds the whole files and their sidecars: a directory
// (dirCapacity) or a bucket (bucketCapacity).
type capacity interface {
	// open opens the current version of file id; ErrNotFound if none.
	open(ctx context.Context, id string) (handle, error)
	// sidecar returns id's sidecar, of at most maxSidecar bytes.
	sidecar(ctx context.Context, id string) ([]byte, error)
	// writeSidecar stores id's sidecar durably.
	writeSidecar(ctx context.Context, id string, b []byte) error
	// put stores what r holds as file id, durably, in place of any
	// earlier version: the new version is visible complete or not at
	// all, and its sidecar, if any, is gone. An empty r is errEmpty.
	put(ctx context.Context, id string, r io.Reader) error
	// remote says whether reads are requests to a store (a bucket), to
	// be made in whole pieces through the RAM pool, rather than reads of
	// a local file through the page cache.
	remote() bool
}

// A handle reads one version of a file, whatever replaces it meanwhile.
type handle interface {
	io.ReaderAt
	version() version
	Close() error
}

// dirCapacity keeps the files in a directory, each sidecar beside its
// file as <id>.json.
type dirCapacity struct {
	dir string
	log *slog.Logger
}

// openDir creates dir if needed and removes the temporary files of
// uploads a crash interrupted.
func openDir(dir string, log *slog.Logger) (*dirCapacity, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	sweepUploads(dir, log)
	return &dirCapacity{dir: dir, log: log}, nil
}

func (d *dirCapacity) path(id string) string        { return filepath.Join(d.dir, id) }
func (d *dirCapacity) sidecarPath(id string) string { return filepath.Join(d.dir, id+".json") }
func (d *dirCapacity) remote() bool                 { return false }

// fileHandle is a file of the directory, open: a replacement renamed in
// meanwhile does not mix its bytes with these.
type fileHandle struct {
	*os.File
	v version
}

func (h fileHandle) version() version { return h.v }

func (d *dirCapacity) open(_ context.Context, id string) (handle, error) {
	f, err := os.Open(d.path(id))
	if err != nil {
		return nil, fmt.Errorf("%w: file %s", ErrNotFound, id)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: file %s", ErrNotFound, id)
	}
	return fileHandle{f, version{size: st.Size(), mod: st.ModTime()}}, nil
}

func (d *dirCapacity) sidecar(_ context.Context, id string) ([]byte, error) {
	f, err := os.Open(d.sidecarPath(id))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxSidecar))
}

func (d *dirCapacity) writeSidecar(_ context.Context, id string, b []byte) error {
	if err := writeFileAtomic(d.dir, d.sidecarPath(id), b); err != nil {
		return err
	}
	return syncDir(d.dir)
}

// put writes r to a temporary file renamed into place once complete and
// synced, so an interrupted upload leaves nothing behind.
func (d *dirCapacity) put(_ context.Context, id string, r io.Reader) error {
	tmp, err := os.CreateTemp(d.dir, ".upload-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, r)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return err
	case n == 0:
		return errEmpty
	}
	if err := os.Remove(d.sidecarPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp.Name(), d.path(id)); err != nil {
		return err
	}
	return syncDir(d.dir)
}
