package origin

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/minio/minio-go/v7"
	"golang.org/x/sync/errgroup"

	"github.com/strata-media/strata/internal/ident"
)

// S3Writer uploads titles and files to the bucket and prefix an S3 origin
// over the same options reads. It is safe for concurrent use, but two
// uploads of one title at once leave it in either's state.
type S3Writer struct {
	opts   S3Options
	log    *slog.Logger
	client *minio.Client
}

// NewS3Writer returns a writer to the bucket and prefix of opts.
// minio-go's own retries (Retries+1 attempts of each request or part,
// its backoff) cover uploads, whose bodies it can rewind; RequestTimeout
// does not apply to them (a part of a slow link may take longer): the
// caller's context bounds an upload.
func NewS3Writer(opts S3Options) (*S3Writer, error) {
	opts.EnsureDefaults()
	client, err := newMinio(&opts, max(opts.Retries, 0)+1, nil)
	if err != nil {
		return nil, err
	}
	return &S3Writer{opts: opts, log: opts.Logger, client: client}, nil
}

// String describes the writer's destination without its credentials.
func (w *S3Writer) String() string { return w.opts.String() }

// Progress is the advance of an upload, reported as it goes.
type Progress struct {
	// Key is the object being sent, relative to the prefix.
	Key string
	// Sent and Total are the bytes sent so far and the bytes to send,
	// of the whole upload. Sent counts again what a retry sends again.
	Sent, Total int64
	// Files and TotalFiles are the files uploaded so far and to upload.
	Files, TotalFiles int
}

// A ProgressFunc receives an upload's progress. Calls are serialized.
type ProgressFunc func(Progress)

// UploadResult says what an upload did.
type UploadResult struct {
	// Files and Bytes are the objects written and their bytes.
	Files int
	Bytes int64
	// Removed is the number of objects of an earlier upload of the title
	// that the new one does not have, deleted.
	Removed int
}

// PutFile uploads the local file at path as the object at key, a path
// relative to the prefix ("files/report.pdf"), in parts of PartSize
// bytes if it is larger.
func (w *S3Writer) PutFile(ctx context.Context, path, key string, progress ProgressFunc) error {
	if err := checkKey(key); err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("origin: upload: %w", err)
	}
	files := []localFile{{path: path, key: key, size: st.Size()}}
	_, err = w.newUpload(files, progress).put(ctx, files[0])
	return w.opts.explainRefusal(err)
}

// PutTitle uploads the local title directory dir as title id: every
// regular file under it (the frame store's ".frames/" included), keys as
// their paths under "<prefix>/<id>/". The title is published last: its
// strata.json is removed first if the bucket has one, so that readers do
// not take the title for complete while its objects change (the catalog
// leaves it out meanwhile); then the files are sent, the objects of an
// earlier upload that this one does not have are deleted, and strata.json
// is written, from dir if it has one, else "{}" (the defaults). An upload
// that fails leaves the title unpublished; running it again completes it.
func (w *S3Writer) PutTitle(ctx context.Context, dir, id string, progress ProgressFunc) (UploadResult, error) {
	res, err := w.putTitle(ctx, dir, id, progress)
	return res, w.opts.explainRefusal(err)
}

func (w *S3Writer) putTitle(ctx context.Context, dir, id string, progress ProgressFunc) (UploadResult, error) {
	if err := ident.ValidName(id); err != nil {
		return UploadResult{}, fmt.Errorf("origin: %w", err)
	}
	files, meta, err := titleFiles(dir, id)
	if err != nil {
		return UploadResult{}, err
	}
	old, err := w.unpublish(ctx, id)
	if err != nil {
		return UploadResult{}, err
	}
	up := w.newUpload(append(files, meta), progress)
	if err := up.putAll(ctx, files); err != nil {
		return UploadResult{}, err
	}
	removed, err := w.removeStale(ctx, old, files)
	if err != nil {
		return UploadResult{}, err
	}
	if _, err := up.put(ctx, meta); err != nil {
		return UploadResult{}, err
	}
	return UploadResult{Files: len(files) + 1, Bytes: up.total, Removed: removed}, nil
}

// A localFile is a file to upload: its path (or, for a generated
// strata.json, none and its data), its key under the prefix and its size.
type localFile struct {
	path string
	data []byte
	key  string
	size int64
}

// titleFiles lists the regular files under dir as files of title id, and
// its strata.json apart (generated if dir has none).
func titleFiles(dir, id string) (files []localFile, meta localFile, err error) {
	meta = localFile{data: []byte("{}\n"), key: id + "/" + metaFile, size: 3}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := os.Stat(path) // follows symlinks
		if err != nil || !st.Mode().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		f := localFile{path: path, key: id + "/" + filepath.ToSlash(rel), size: st.Size()}
		if err := checkKey(f.key); err != nil {
			return err
		}
		if rel == metaFile {
			meta = f
		} else {
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		return nil, localFile{}, fmt.Errorf("origin: upload %s: %w", dir, err)
	}
	return files, meta, nil
}

// checkKey accepts a key relative to the prefix made of components that
// are valid names, or names with a leading '.' (".frames"), never "." or
// "..".
func checkKey(key string) error {
	for c := range strings.SplitSeq(key, "/") {
		if err := ident.ValidName(strings.TrimPrefix(c, ".")); err != nil || strings.HasPrefix(c, "..") {
			return fmt.Errorf("origin: object key %q: component %q: want letters, digits, '.', '_', '-'", key, c)
		}
	}
	return nil
}

// unpublish removes title id's strata.json and returns the keys the title
// had, relative to the prefix.
func (w *S3Writer) unpublish(ctx context.Context, id string) (map[string]bool, error) {
	base := prefixed(w.opts.Prefix, "")
	old := make(map[string]bool)
	opts := minio.ListObjectsOptions{Prefix: prefixed(w.opts.Prefix, id+"/"), Recursive: true}
	for obj := range w.client.ListObjects(ctx, w.opts.Bucket, opts) {
		if obj.Err != nil {
			return nil, w.fail("list", id, obj.Err)
		}
		old[strings.TrimPrefix(obj.Key, base)] = true
	}
	key := id + "/" + metaFile
	if old[key] {
		if err := w.client.RemoveObject(ctx, w.opts.Bucket, prefixed(w.opts.Prefix, key), minio.RemoveObjectOptions{}); err != nil {
			return nil, w.fail("unpublish", key, err)
		}
	}
	return old, nil
}

// removeStale deletes the keys of old that files do not have, but
// strata.json, which the caller rewrites.
func (w *S3Writer) removeStale(ctx context.Context, old map[string]bool, files []localFile) (int, error) {
	for _, f := range files {
		delete(old, f.key)
	}
	n := 0
	for key := range old {
		if strings.HasSuffix(key, "/"+metaFile) && strings.Count(key, "/") == 1 {
			continue
		}
		if err := w.client.RemoveObject(ctx, w.opts.Bucket, prefixed(w.opts.Prefix, key), minio.RemoveObjectOptions{}); err != nil {
			return n, w.fail("remove", key, err)
		}
		n++
	}
	return n, nil
}

// fail classifies an upload's error as reads' are.
func (w *S3Writer) fail(op, key string, err error) error {
	err, _ = classify(op+" "+key, err)
	return err
}

// upload is one PutTitle or PutFile: the files to send and the progress
// of all of them.
type upload struct {
	w        *S3Writer
	total    int64
	progress ProgressFunc

	mu struct {
		sync.Mutex // protects the fields below and serializes progress calls
		sent       int64
		files      int
		count      int // of all files
	}
}

func (w *S3Writer) newUpload(files []localFile, progress ProgressFunc) *upload {
	u := &upload{w: w, progress: progress}
	for _, f := range files {
		u.total += f.size
	}
	u.mu.count = len(files)
	return u
}

// putAll sends files, UploadConcurrency at a time.
func (u *upload) putAll(ctx context.Context, files []localFile) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(u.w.opts.UploadConcurrency)
	for _, f := range files {
		g.Go(func() error {
			_, err := u.put(gctx, f)
			return err
		})
	}
	return g.Wait()
}

// put sends one file, in parts of PartSize bytes if it is larger.
func (u *upload) put(ctx context.Context, f localFile) (minio.UploadInfo, error) {
	w := u.w
	opts := minio.PutObjectOptions{
		PartSize:   uint64(w.opts.PartSize),
		NumThreads: uint(w.opts.UploadConcurrency),
		Progress:   progressReader{u, f.key},
	}
	key := prefixed(w.opts.Prefix, f.key)
	var info minio.UploadInfo
	var err error
	if f.path == "" {
		info, err = w.client.PutObject(ctx, w.opts.Bucket, key, strings.NewReader(string(f.data)), f.size, opts)
	} else {
		info, err = w.client.FPutObject(ctx, w.opts.Bucket, key, f.path, opts)
	}
	if err == nil && info.Size != f.size {
		err = fmt.Errorf("%w: stored %d bytes of %d", ErrUpstream, info.Size, f.size)
	}
	if err != nil {
		return info, w.fail("put", f.key, err)
	}
	u.fileDone(f.key)
	return info, nil
}

// progressReader is minio-go's progress hook: it reads from it as many
// bytes as it has sent.
type progressReader struct {
	u   *upload
	key string
}

func (p progressReader) Read(b []byte) (int, error) {
	p.u.advance(p.key, int64(len(b)), 0)
	return len(b), nil
}

func (u *upload) fileDone(key string) { u.advance(key, 0, 1) }

// advance counts n more bytes and files more files sent, and reports it.
func (u *upload) advance(key string, n int64, files int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.mu.sent += n
	u.mu.files += files
	if u.progress != nil {
		u.progress(Progress{Key: key, Sent: u.mu.sent, Total: u.total, Files: u.mu.files, TotalFiles: u.mu.count})
	}
}
