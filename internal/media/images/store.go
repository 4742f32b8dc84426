package images

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// Store is the image store. It is safe for concurrent use.
type Store struct {
	opts     Options
	log      *slog.Logger
	db       *badger.DB
	pipeline *Pipeline

	// beforeCommit, if set, runs before an upload's transaction commits;
	// an error stands for a crash there (tests).
	beforeCommit func() error

	// owner names this store's upload folders in the bucket (sweep.go).
	owner          string
	orphansRemoved atomic.Uint64

	// With a bucket (share.go): when each id was last checked against
	// it, and the locks serializing an id's commits and revalidations.
	checkMu sync.Mutex
	checked map[string]time.Time
	idLocks [64]sync.Mutex

	stop chan struct{}
	wg   sync.WaitGroup // the GC and sweep loops
	once sync.Once
}

// Open opens (creating if needed) the store in opts.FlashDir and
// opts.CapacityDir and starts its value log GC loop; Close stops it.
// Badger locks both directories: a second process fails here.
func Open(opts Options) (*Store, error) {
	opts.EnsureDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	p, err := NewPipeline(opts)
	if err != nil {
		return nil, err
	}
	db, err := badger.Open(BadgerOptions(opts))
	if err != nil {
		return nil, fmt.Errorf("images: opening the store in %s and %s: %w", opts.FlashDir, opts.CapacityDir, err)
	}
	s := &Store{opts: opts, log: opts.Logger, db: db, pipeline: p, stop: make(chan struct{})}
	if s.owner, err = loadOwner(db); err != nil {
		db.Close()
		return nil, err
	}
	if opts.Bucket != nil {
		s.wg.Add(1)
		go s.migrateAll()
	}
	if opts.Bucket != nil && opts.BucketSweepInterval > 0 {
		s.wg.Add(1)
		go s.every(opts.BucketSweepInterval, s.sweepOnce)
	}
	if opts.GCInterval > 0 {
		s.wg.Add(1)
		go s.every(opts.GCInterval, s.gcOnce)
	}
	return s, nil
}

// BadgerOptions maps Options (defaults filled in) onto Badger's: the
// store's exact configuration, for benchmarks that drive Badger directly.
func BadgerOptions(o Options) badger.Options {
	return badger.DefaultOptions(o.FlashDir).
		WithValueDir(o.CapacityDir).
		WithValueThreshold(o.SizeThreshold).
		WithValueLogFileSize(o.SplitThreshold).
		WithSyncWrites(!o.NoSync).
		WithCompression(options.None). // variants are compressed already (MRIS §4.3 disabled it too)
		WithMemTableSize(o.MemTableSize).
		WithBlockCacheSize(o.BlockCacheSize).
		WithNumCompactors(2).
		WithMetricsEnabled(false).
		WithLogger(badgerLogger{o.Logger.With("component", "badger")})
}

// Options returns the store's options, defaults filled in.
func (s *Store) Options() Options { return s.opts }

// Pipeline returns the upload pipeline of the store's options.
func (s *Store) Pipeline() *Pipeline { return s.pipeline }

// Close stops the GC loop and closes the database. It is safe to call on a
// nil Store (images disabled) and more than once.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	var err error
	s.once.Do(func() {
		close(s.stop)
		s.wg.Wait()
		if err = s.db.Close(); err != nil {
			err = fmt.Errorf("images: closing the store: %w", err)
		}
	})
	return err
}

// every runs fn every d until Close: the store's background loops (value
// log GC, the bucket sweep). Open adds each to wg.
func (s *Store) every(d time.Duration, fn func()) {
	defer s.wg.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		fn()
	}
}

// gcOnce runs value log GC once, for the GC loop.
func (s *Store) gcOnce() {
	if n, err := s.RunGC(); err != nil {
		s.log.Warn("images: value log GC", "err", err)
	} else if n > 0 {
		s.log.Info("images: value log GC rewrote files", "files", n)
	}
}

// RunGC rewrites value log files with at least GCDiscardRatio stale bytes
// until none is left, and returns how many it rewrote.
func (s *Store) RunGC() (int, error) {
	for n := 0; ; n++ {
		select {
		case <-s.stop:
			return n, nil
		default:
		}
		err := s.db.RunValueLogGC(s.opts.GCDiscardRatio)
		switch {
		case errors.Is(err, badger.ErrNoRewrite), errors.Is(err, badger.ErrRejected):
			return n, nil
		case err != nil:
			return n, fmt.Errorf("images: value log GC: %w", err)
		}
	}
}

// badgerLogger sends Badger's messages to slog; its chatty Info goes to
// Debug.
type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) Errorf(f string, a ...any)   { b.l.Error(msg(f, a)) }
func (b badgerLogger) Warningf(f string, a ...any) { b.l.Warn(msg(f, a)) }
func (b badgerLogger) Infof(f string, a ...any)    { b.l.Debug(msg(f, a)) }
func (b badgerLogger) Debugf(f string, a ...any)   { b.l.Debug(msg(f, a)) }

func msg(f string, a []any) string { return strings.TrimSpace(fmt.Sprintf(f, a...)) }
