package media

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/space"
)

// ErrBusy reports an ingest of a title that another ingest is replacing.
var ErrBusy = errors.New("media: title is being ingested")

// stagingPrefix starts the names of ingest directories under the root:
// hidden from the catalog (ident.ValidName refuses a leading '.'), on the
// same file system as the titles, so the finished title is renamed into
// place.
const stagingPrefix = ".ingest-"

// IngestOptions configure an Ingester.
type IngestOptions struct {
	Options
	// Invalidate is called with the video id after a title was replaced,
	// so that cached segments of the old version are dropped (the
	// engine's Invalidate of ident.VideoPrefix). Nil skips it.
	Invalidate func(video string) error
	// Published is called with the video id once a title is in place,
	// new or replaced, so that the catalog lists it at once rather than
	// after the capacity tier's catalog TTL. Nil skips it.
	Published func(video string)
	// MaxConcurrent bounds the ingests that package at once; others
	// wait. Default 2.
	MaxConcurrent int
	// FreeSpace says how much an upload may still write under the root:
	// an upload whose declared length, twice over (the upload and its
	// packaged title), is above it is refused before a byte is stored.
	// Nil: space.Free.
	FreeSpace space.FreeFunc
}

// Ingester packages titles into a capacity-tier directory.
type Ingester struct {
	root string
	opts IngestOptions
	sem  chan struct{} // one token per running packaging

	mu struct {
		sync.Mutex                 // protects busy
		busy       map[string]bool // ids being ingested
	}
}

// NewIngester returns an Ingester writing titles under root.
func NewIngester(root string, opts IngestOptions) *Ingester {
	opts.EnsureDefaults()
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 2
	}
	g := &Ingester{root: root, opts: opts, sem: make(chan struct{}, opts.MaxConcurrent)}
	g.mu.busy = map[string]bool{}
	return g
}

// Staging is a title being ingested: a private directory under the root
// holding uploaded inputs and the title being built. Abort removes it.
type Staging struct {
	// Options are the packaging options of this ingest, the Ingester's
	// unless changed before Commit.
	Options Options

	g    *Ingester
	id   string
	dir  string
	lock *os.File // flock held while the staging directory is in use
	once sync.Once
}

// Begin claims video id and creates its staging directory.
func (g *Ingester) Begin(id string) (*Staging, error) {
	if err := ident.ValidName(id); err != nil {
		return nil, fmt.Errorf("%w: video id: %w", ErrInvalidInput, err)
	}
	if !g.claim(id) {
		return nil, fmt.Errorf("%w: %s", ErrBusy, id)
	}
	s, err := g.newStaging(id)
	if err != nil {
		g.release(id)
		return nil, err
	}
	return s, nil
}

func (g *Ingester) claim(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.busy[id] {
		return false
	}
	g.mu.busy[id] = true
	return true
}

func (g *Ingester) release(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.mu.busy, id)
}

// newStaging creates <root>/.ingest-<id>-<random>/ and locks it, so that
// CleanStale (in this or another process) leaves it alone while it lives.
func (g *Ingester) newStaging(id string) (*Staging, error) {
	var rnd [6]byte
	rand.Read(rnd[:])
	dir := filepath.Join(g.root, stagingPrefix+id+"-"+hex.EncodeToString(rnd[:]))
	if err := os.MkdirAll(filepath.Join(dir, "upload"), 0o755); err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	lock, err := lockDir(dir, false)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Staging{Options: g.opts.Options, g: g, id: id, dir: dir, lock: lock}, nil
}

// lockDir takes an exclusive flock on dir/.lock; with try it fails at
// once if another holds it.
func lockDir(dir string, try bool) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	how := unix.LOCK_EX
	if try {
		how |= unix.LOCK_NB
	}
	if err := unix.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, fmt.Errorf("media: lock %s: %w", dir, err)
	}
	return f, nil
}

// UploadDir is where uploaded input files go.
func (s *Staging) UploadDir() string { return filepath.Join(s.dir, "upload") }

// Abort removes the staging directory and releases the id. It is safe to
// call after Commit and more than once.
func (s *Staging) Abort() {
	s.once.Do(func() {
		os.RemoveAll(s.dir)
		s.lock.Close()
		s.g.release(s.id)
	})
}

// Commit packages inputs, moves the title into place (replacing any
// previous version atomically) and invalidates the replaced version's
// cached objects, under a replacement marker that makes the next start
// invalidate them if the process dies in between. It always removes the
// staging directory.
func (s *Staging) Commit(ctx context.Context, inputs []Input) (*Result, error) {
	defer s.Abort()
	if err := s.g.acquire(ctx); err != nil {
		return nil, err
	}
	defer func() { <-s.g.sem }()
	built := filepath.Join(s.dir, "title")
	res, err := Package(ctx, built, s.id, inputs, s.Options)
	if err != nil {
		return nil, err
	}
	if err := syncDirs(built); err != nil {
		return nil, err
	}
	marked, err := s.g.markReplacing(s.id)
	if err != nil {
		return nil, err
	}
	if res.Replaced, err = s.g.install(built, s.id); err != nil {
		return nil, err
	}
	if res.Replaced && s.g.opts.Invalidate != nil {
		if err := s.g.opts.Invalidate(s.id); err != nil {
			return res, fmt.Errorf("media: %s replaced, but invalidating its cached objects failed: %w", s.id, err)
		}
	}
	if marked {
		if err := s.g.clearReplacing(s.id); err != nil {
			return res, err
		}
	}
	if s.g.opts.Published != nil {
		s.g.opts.Published(s.id)
	}
	return res, nil
}

func (g *Ingester) acquire(ctx context.Context) error {
	select {
	case g.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("media: waiting to ingest: %w", ctx.Err())
	}
}

// Ingest packages inputs as title id: Begin then Commit.
func (g *Ingester) Ingest(ctx context.Context, id string, inputs []Input) (*Result, error) {
	s, err := g.Begin(id)
	if err != nil {
		return nil, err
	}
	return s.Commit(ctx, inputs)
}

// install renames the built title to <root>/<id>. An existing title is
// exchanged with it in one renameat2(RENAME_EXCHANGE), so readers see one
// version or the other; the old one lands in the staging directory, which
// Abort removes. It reports whether a title was replaced.
func (g *Ingester) install(built, id string) (bool, error) {
	dst := filepath.Join(g.root, id)
	err := unix.Renameat2(unix.AT_FDCWD, built, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE)
	replaced := false
	if errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY) {
		replaced = true
		err = unix.Renameat2(unix.AT_FDCWD, built, unix.AT_FDCWD, dst, unix.RENAME_EXCHANGE)
	}
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		replaced, err = renameFallback(built, dst)
	}
	if err != nil {
		return false, fmt.Errorf("media: installing %s: %w", id, err)
	}
	return replaced, syncDir(g.root)
}

// renameFallback is for file systems without renameat2 flags: the old
// title moves aside first, so there is a moment without the title.
func renameFallback(built, dst string) (bool, error) {
	old := built + ".old"
	err := os.Rename(dst, old)
	replaced := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	return replaced, os.Rename(built, dst)
}

// CleanStale removes staging directories left by ingests that died (their
// lock is free), and returns how many it removed.
func (g *Ingester) CleanStale() (int, error) {
	entries, err := os.ReadDir(g.root)
	if err != nil {
		return 0, fmt.Errorf("media: %w", err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), stagingPrefix) {
			continue
		}
		dir := filepath.Join(g.root, e.Name())
		lock, err := lockDir(dir, true)
		if err != nil {
			continue // alive, or unreadable: leave it
		}
		os.RemoveAll(dir)
		lock.Close()
		n++
	}
	return n, nil
}
