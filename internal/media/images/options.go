package images

import (
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/strata-media/strata/internal/storage/origin"
)

// Defaults of Options. SizeThreshold and SplitThreshold are MRIS's
// (§3, §4.3): values of 128 KiB and more go to the LargeSpace, which is
// split into files of 64 MiB.
const (
	DefaultSizeThreshold  = 128 << 10
	DefaultSplitThreshold = 64 << 20
	DefaultMaxPixels      = 100_000_000
	DefaultMaxDecodeBytes = 1 << 30
	DefaultMaxUploadBytes = 48 << 20
	DefaultQuality        = 85
	DefaultGCInterval     = 10 * time.Minute
	DefaultGCDiscardRatio = 0.5
	// DefaultBucketSweepInterval and DefaultBucketSweepGrace are
	// Options.BucketSweepInterval's and BucketSweepGrace's defaults.
	DefaultBucketSweepInterval = time.Hour
	DefaultBucketSweepGrace    = time.Hour
	// DefaultBucketTTL is Options.BucketTTL's default.
	DefaultBucketTTL      = 5 * time.Second
	DefaultMemTableSize   = 64 << 20
	DefaultBlockCacheSize = 64 << 20
	// DefaultMaxAge is HandlerOptions.MaxAge's default.
	DefaultMaxAge = time.Hour
)

// Options configure a Store. Zero fields take the defaults of
// EnsureDefaults.
type Options struct {
	// FlashDir holds the LSM tree: keys, metadata, small variants and the
	// write-ahead log (MRIS: the SSTables on flash). Required.
	FlashDir string
	// CapacityDir holds the value log, the variants of SizeThreshold bytes
	// and more (MRIS: the LargeSpace on the capacity tier). Required; may
	// equal FlashDir (the paper's single-device setups).
	CapacityDir string
	// SizeThreshold is the variant size, in bytes, from which a value is
	// stored in the value log (or Bucket) instead of the LSM tree.
	// Default 128 KiB (MRIS SizeThreshold).
	SizeThreshold int64
	// Bucket, when set, holds the values of SizeThreshold bytes and more
	// as objects under ".images/" instead of the value log; the LSM tree
	// holds a pointer to each (bucket.go). Values already in the value
	// log stay readable there.
	Bucket *origin.Bucket
	// SplitThreshold is the size, in bytes, of one value log file (MRIS
	// LargeBlock SplitThreshold). Default 64 MiB. Unlike MRIS's
	// LargeBlocks, a Badger value log file never exceeds it, so no value
	// may be larger: MaxUploadBytes is capped below it.
	SplitThreshold int64
	// MemTableSize is the LSM's write buffer in bytes. Default 64 MiB.
	MemTableSize int64
	// BlockCacheSize is the RAM cache of LSM blocks in bytes. Default
	// 64 MiB.
	BlockCacheSize int64
	// NoSync acknowledges writes before they are durable. By default every
	// Put is fsynced (value log and write-ahead log) before it returns.
	NoSync bool
	// GCInterval is how often the background loop runs value log garbage
	// collection. Default 10 min; negative disables the loop.
	GCInterval time.Duration
	// GCDiscardRatio is the fraction of a value log file that must be
	// stale for GC to rewrite it. Default 0.5 (Badger's recommendation).
	GCDiscardRatio float64
	// BucketSweepInterval is how often, with a Bucket, the objects of
	// this store that no pointer names (left by a crash mid-upload) are
	// deleted; BucketSweepGrace how old such an object must be, so that
	// an upload in progress is never swept (sweep.go). Defaults 1 h and
	// 1 h; a negative interval disables the sweep.
	BucketSweepInterval, BucketSweepGrace time.Duration
	// BucketTTL is, with a Bucket, how long this store trusts its copy
	// of an image (or of its absence) before it asks the bucket again
	// whether the image's "current" object changed (share.go): the bound
	// on how long another node's re-upload or delete takes to be seen
	// here. Default 5 s, as [files] stat_ttl.
	BucketTTL time.Duration
	// clock, if set, stands for time.Now in the revalidation decisions
	// (tests).
	clock func() time.Time

	// Ladder is the variants generated at upload. Default DefaultLadder.
	Ladder []Spec
	// MaxPixels bounds an original's width x height, checked from its
	// header before it is decoded (image bombs). Default 100 million.
	MaxPixels int64
	// MaxDecodeBytes bounds the RAM, in bytes, that decoding an original
	// and rendering its variants take (DecodeCost: bytes per pixel
	// count, so a 16-bit PNG has half the pixels of an 8-bit one),
	// checked from its header before it is decoded. Default 1 GiB: a
	// 100-megapixel 8-bit JPEG, not a 16-bit PNG of that size.
	MaxDecodeBytes int64
	// MaxUploadBytes bounds an original's encoded size. Default 48 MiB,
	// and at most SplitThreshold - 1 MiB.
	MaxUploadBytes int64
	// Quality is the JPEG quality of generated variants, 1-100. Default 85.
	Quality int
	// Resampler names the pure-Go resampling filter: "catmullrom",
	// "bilinear" or "approx-bilinear". Default DefaultResampler.
	Resampler string
	// MaxConcurrent bounds the uploads read and decoded at once (each
	// may hold MaxUploadBytes and MaxDecodeBytes of RAM). Default
	// min(2, GOMAXPROCS).
	MaxConcurrent int
	// Logger receives the store's messages. Nil: slog.Default().
	Logger *slog.Logger
}

// EnsureDefaults fills zero fields with defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.CapacityDir == "" {
		o.CapacityDir = o.FlashDir
	}
	o.ensureStoreDefaults()
	o.ensurePipelineDefaults()
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

func (o *Options) ensureStoreDefaults() {
	setDefault(&o.SizeThreshold, DefaultSizeThreshold)
	setDefault(&o.SplitThreshold, DefaultSplitThreshold)
	setDefault(&o.MemTableSize, DefaultMemTableSize)
	setDefault(&o.BlockCacheSize, DefaultBlockCacheSize)
	setDefault(&o.GCInterval, DefaultGCInterval)
	setDefault(&o.GCDiscardRatio, DefaultGCDiscardRatio)
	setDefault(&o.BucketSweepInterval, DefaultBucketSweepInterval)
	setDefault(&o.BucketSweepGrace, DefaultBucketSweepGrace)
	setDefault(&o.BucketTTL, DefaultBucketTTL)
}

func (o *Options) ensurePipelineDefaults() {
	if o.Ladder == nil {
		o.Ladder = DefaultLadder()
	}
	setDefault(&o.MaxPixels, DefaultMaxPixels)
	setDefault(&o.MaxDecodeBytes, DefaultMaxDecodeBytes)
	setDefault(&o.MaxUploadBytes, DefaultMaxUploadBytes)
	o.MaxUploadBytes = min(o.MaxUploadBytes, o.SplitThreshold-1<<20)
	setDefault(&o.Quality, DefaultQuality)
	setDefault(&o.Resampler, DefaultResampler)
	setDefault(&o.MaxConcurrent, min(2, runtime.GOMAXPROCS(0)))
}

// Limits are the limits Probe checks an upload against.
func (o Options) Limits() Limits {
	return Limits{MaxPixels: o.MaxPixels, MaxDecodeBytes: o.MaxDecodeBytes}
}

// setDefault sets *p to def when it is the zero value.
func setDefault[T comparable](p *T, def T) {
	var zero T
	if *p == zero {
		*p = def
	}
}

// validate checks options after EnsureDefaults.
func (o *Options) validate() error {
	switch {
	case o.FlashDir == "":
		return fmt.Errorf("%w: no flash directory", ErrOptions)
	case o.SizeThreshold < 1 || o.SizeThreshold > o.MemTableSize*15/100:
		return fmt.Errorf("%w: size threshold %d must be in [1, 15%% of the memtable size %d]", ErrOptions, o.SizeThreshold, o.MemTableSize)
	case o.SplitThreshold < 2<<20 || o.SplitThreshold >= 2<<30:
		return fmt.Errorf("%w: split threshold %d must be in [2 MiB, 2 GiB)", ErrOptions, o.SplitThreshold)
	case o.Quality < 1 || o.Quality > 100:
		return fmt.Errorf("%w: JPEG quality %d must be in [1, 100]", ErrOptions, o.Quality)
	case o.MaxPixels < 1 || o.MaxDecodeBytes < 1 || o.MaxUploadBytes < 1 || o.MaxConcurrent < 1:
		return fmt.Errorf("%w: limits must be positive", ErrOptions)
	}
	if _, err := resamplerNamed(o.Resampler); err != nil {
		return err
	}
	return validateLadder(o.Ladder)
}
