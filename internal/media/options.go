package media

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/strata-media/strata/internal/core/framegroup"
	"github.com/strata-media/strata/internal/media/framestore"
	"github.com/strata-media/strata/internal/media/source"
)

// Errors of packaging, wrapped with details; errors.Is classifies them,
// and the HTTP handler maps them to status codes.
var (
	// ErrInvalidInput reports input that is not a usable MP4 (not MP4,
	// damaged, truncated, no video track, mismatched durations).
	ErrInvalidInput = errors.New("media: invalid input")
	// ErrUnsupported reports valid input Strata does not package (codecs
	// other than H.264 and AAC, fragmented MP4).
	ErrUnsupported = errors.New("media: unsupported input")
)

// classify maps the source package's errors onto the media ones.
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, source.ErrUnsupported):
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	case errors.Is(err, source.ErrNotMP4), errors.Is(err, source.ErrInvalid):
		return fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	return err
}

// Options configure packaging.
type Options struct {
	// SegmentDuration is the target media segment duration; segments are
	// cut at the sync sample nearest each multiple of it. Default 10 s
	// (FlashStream Table 4).
	SegmentDuration time.Duration
	// BlockSize is S, the frame-grouped store's block size in bytes, a
	// multiple of 4 KiB: the flash device's optimal request size, which
	// `strata probe` measures. Default 128 KiB (the paper's SSD1).
	BlockSize int
	// Levels are the play levels built besides L1 (the normal
	// renditions). Default L2 to L5; an empty non-nil slice builds none.
	Levels []framegroup.Level
	// DurationTolerance is how much renditions' video durations may
	// differ. Default 1 s.
	DurationTolerance time.Duration
	// Progress, if set, receives one line per step.
	Progress func(msg string)
	// Store configures the frame-grouped store's files; its BlockSize is
	// taken from BlockSize.
	Store framestore.Options
	// Logger receives warnings; nil: slog.Default().
	Logger *slog.Logger
}

// EnsureDefaults fills in zero fields.
func (o *Options) EnsureDefaults() {
	if o.SegmentDuration <= 0 {
		o.SegmentDuration = 10 * time.Second
	}
	if o.BlockSize == 0 {
		o.BlockSize = framestore.DefaultBlockSize
	}
	if o.Levels == nil {
		o.Levels = []framegroup.Level{framegroup.L2, framegroup.L3, framegroup.L4, framegroup.L5}
	}
	if o.DurationTolerance <= 0 {
		o.DurationTolerance = time.Second
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Store.BlockSize = o.BlockSize
	if o.Store.Logger == nil {
		o.Store.Logger = o.Logger
	}
}

func (o *Options) progress(format string, args ...any) { o.Progress(fmt.Sprintf(format, args...)) }
