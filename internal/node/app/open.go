package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/core/health"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/media/images"
	"github.com/strata-media/strata/internal/node/edge"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/node/files"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/wtrace"
)

// adminToken returns the configured token, or the one in <data>/admin.token,
// generated with 0600 permissions at first start, and where it came from.
func adminToken(cfg *Config) (token, file string, err error) {
	if cfg.AdminToken != "" {
		return cfg.AdminToken, "", nil
	}
	p := filepath.Join(cfg.Data, "admin.token")
	b, err := os.ReadFile(p)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), p, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", "", err
	}
	tok := hex.EncodeToString(raw[:])
	if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("writing the admin token: %w", err)
	}
	return tok, p, nil
}

// capacityOrigin is the origin of the titles' capacity tier: the
// directory, or the bucket of cfg.Origin, checked (bucket present,
// credentials accepted) so that a bad configuration fails the start
// rather than every miss.
type capacityOrigin interface {
	origin.Origin
	// Refresh rescans the catalog now, whatever its TTL says.
	Refresh(ctx context.Context) error
	Close() error
}

func openTitles(ctx context.Context, cfg *Config, log *slog.Logger) (capacityOrigin, CapacityDescription, error) {
	if cfg.Origin == "" {
		dir, err := origin.NewDir(cfg.Capacity, origin.DirOptions{Logger: log})
		return dir, CapacityDescription{Dir: cfg.Capacity}, err
	}
	opts, err := origin.ParseS3URL(cfg.Origin) // checked by Resolve
	if err != nil {
		return nil, CapacityDescription{}, err
	}
	opts.Logger = log.With("component", "s3")
	s3, err := origin.NewS3(opts)
	if err != nil {
		return nil, CapacityDescription{}, err
	}
	d := CapacityDescription{S3: s3.String()}
	cctx, cancel := context.WithTimeout(ctx, cfg.OriginTimeout.Duration)
	defer cancel()
	if err := s3.Check(cctx); err != nil {
		s3.Close()
		return nil, d, fmt.Errorf("app: the capacity tier %s cannot be read: %w", s3, err)
	}
	return s3, d, nil
}

// openCapacity opens the capacity tier: the directory or the bucket, and
// the synthetic library if the data directory has one (seeded by --demo).
// It returns the directory or bucket too, whose catalog uploads refresh.
func openCapacity(ctx context.Context, cfg *Config, log *slog.Logger) (origin.Origin, capacityOrigin, CapacityDescription, error) {
	dir, d, err := openTitles(ctx, cfg, log)
	if err != nil {
		return nil, nil, d, err
	}
	titles, err := dir.Catalog(ctx)
	if err != nil {
		dir.Close()
		return nil, nil, d, err
	}
	d.Titles = len(titles)
	lib, ok, err := readSynthetic(cfg.Data, cfg.Demo)
	if err != nil || !ok {
		if err != nil {
			dir.Close()
			return nil, nil, d, err
		}
		return dir, dir, d, nil
	}
	ds := lib.Dataset()
	syn, err := origin.NewSynthetic(ds, origin.SyntheticOptions{Seed: lib.Seed})
	if err != nil {
		dir.Close()
		return nil, nil, d, err
	}
	d.Synthetic = &SyntheticDescription{Titles: len(ds.Titles), Bytes: ds.TotalBytes(), File: syntheticPath(cfg.Data)}
	return origin.NewMulti(dir, syn), dir, d, nil
}

// openFlash opens the flash cache device and its utilization source.
func openFlash(cfg *Config, log *slog.Logger) (*device.File, device.BusySource, FlashDescription, error) {
	d := FlashDescription{Path: cfg.Flash, Disabled: cfg.NoFlash}
	if cfg.NoFlash {
		return nil, nil, d, nil
	}
	dev, err := device.OpenFile(cfg.Flash, device.FileOptions{Size: int64(cfg.FlashSize), Logger: log,
		PageCache: cfg.FlashPageCache && cfg.FlashSendfile, PageCacheReads: cfg.FlashPageCacheEnds && cfg.FlashSendfile})
	if err != nil {
		return nil, nil, d, err
	}
	d.Size, d.BlockDevice, d.Direct, d.PageCache = dev.Size(), dev.IsBlockDevice(), dev.Direct(), dev.PageCache()
	d.PageCacheEnds = !d.PageCache && dev.PageCacheReads()
	dev.SetLifetime(device.LifetimeMedium)
	d.WriteHint = dev.HintReport()
	busy, err := device.NewDiskStats(cfg.Flash)
	if err != nil {
		log.Warn("no utilization signal for the flash device; admission sees 0%", "err", err)
		d.UtilizationErr = err.Error()
		return dev, nil, d, nil
	}
	d.UtilizationDevice = busy.Name()
	_, d.WriteStreams = device.WriteStreams("", busy.Name())
	return dev, busy, d, nil
}

// openTrace opens the write trace file, if one is configured.
func openTrace(path string) (*wtrace.Writer, func() error, error) {
	if path == "" {
		return nil, func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--trace-writes: %w", err)
	}
	w := wtrace.NewWriter(f, time.Now())
	return w, func() error { return errors.Join(w.Flush(), f.Close()) }, nil
}

// engineOptions are the segment engine's options of cfg.
func engineOptions(cfg *Config, busy device.BusySource, trace *wtrace.Writer, log *slog.Logger) engine.Options {
	policy, _ := tier.ParseBlockPolicy(cfg.Policy) // checked by Resolve
	objective, _ := cfg.FlashObjective()           // checked by Resolve
	sessions := 0                                  // the core's default table
	if !cfg.PolicySessions {
		sessions = -1
	}
	return engine.Options{
		Tier: tier.Options{
			RAMBytes: int64(cfg.RAM), BlockSize: int64(cfg.BlockSize), BlockPolicy: policy, Objective: objective,
			Group:       edge.TierGroup, // edge keys group by their path's directory, like titles
			MonitorRoom: cfg.MonitorRoom, RingBytes: int64(cfg.Ring), Sessions: sessions,
		},
		MonitorPeriod:   cfg.MonitorPeriod.Duration,
		OriginTimeout:   cfg.OriginTimeout.Duration,
		Epoch:           cfg.Epoch.Duration,
		Threshold:       cfg.Threshold,
		Busy:            busy,
		Trace:           trace,
		EnduranceCycles: cfg.Endurance,
		Logger:          log,

		FlashReadDeadline: cfg.FlashReadDeadline.Duration,
		ReadLimit:         health.LimitOptions{Target: cfg.FlashReadTarget.Duration},
		HitMemory:         cfg.HitMemory(),
		NoSendfile:        !cfg.FlashSendfile,
		RAMFiles:          cfg.RAMSendfile,
		RAMHugePages:      cfg.RAMHugePages,
		RAMTmpfs:          cfg.RAMTmpfs,
	}
}

// ImagesOptions are the image store's options of c.
func (c *ImagesConfig) ImagesOptions(log *slog.Logger) images.Options {
	ladder, _ := images.ParseLadder(c.Ladder) // checked by Resolve
	return images.Options{
		FlashDir: c.LSM, CapacityDir: c.VLog,
		SizeThreshold: int64(c.SizeThreshold), SplitThreshold: int64(c.SplitThreshold),
		MaxUploadBytes: int64(c.MaxUpload), MaxPixels: c.MaxPixels, MaxDecodeBytes: int64(c.MaxDecode),
		Ladder: ladder, Quality: c.Quality, Resampler: c.Resampler, NoSync: c.NoSync,
		Logger: log.With("component", "images"),
	}
}

// OpenImages opens the image store of c, nil when it is disabled, for
// strata serve and strata ingest image.
func OpenImages(c *ImagesConfig, log *slog.Logger) (*images.Store, *ImagesDescription, error) {
	return openImagesIn(c, nil, 0, log)
}

// openImagesIn opens the image store of c with its large values in
// bucket, if not nil (openImagesWithOrigin), the source of truth of the
// images of every node sharing it, trusted for ttl ([files] stat_ttl).
func openImagesIn(c *ImagesConfig, bucket *origin.Bucket, ttl time.Duration, log *slog.Logger) (*images.Store, *ImagesDescription, error) {
	if c.Disabled {
		return nil, nil, nil
	}
	for _, d := range []string{c.LSM, c.VLog} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, nil, fmt.Errorf("image store: %w", err)
		}
	}
	o := c.ImagesOptions(log)
	o.Bucket, o.BucketTTL = bucket, ttl
	st, err := images.Open(o)
	if err != nil {
		return nil, nil, lockHint(err)
	}
	o = st.Options()
	d := &ImagesDescription{LSM: o.FlashDir, VLog: o.CapacityDir, SizeThreshold: o.SizeThreshold,
		NoSync: o.NoSync, Ladder: images.FormatLadder(o.Ladder)}
	if bucket != nil {
		d.Bucket = bucket.String()
	}
	return st, d, nil
}

// lockHint explains Badger's directory lock error.
func lockHint(err error) error {
	if strings.Contains(err.Error(), "Cannot acquire directory lock") {
		return fmt.Errorf("%w\n(is strata serve running on this data directory? upload with PUT /images/{id} instead)", err)
	}
	return err
}

// openFiles opens the whole-file tier, in the bucket of an S3 origin if
// there is one, and its flash cache file (lifetime class long: copies
// stay until popularity changes).
func openFiles(ctx context.Context, cfg *Config, busy device.BusySource, trace *wtrace.Writer, log *slog.Logger) (*files.Tier, io.Closer, FilesDescription, error) {
	c := cfg.Files
	d := FilesDescription{Dir: c.Dir, DiskBandwidth: int64(c.DiskBandwidth)}
	mech, err := cfg.FilesMechanism()
	if err != nil {
		return nil, nil, d, err
	}
	o := files.Options{Dir: c.Dir, BlockSize: int64(cfg.BlockSize), FlashBandwidth: int64(c.FlashBandwidth),
		DiskBandwidth: int64(c.DiskBandwidth), DefaultBitrate: int64(c.Bitrate), WriteRate: float64(c.WriteRate),
		RAMBytes: int64(c.RAM), Mechanism: mech, Busy: busy, Threshold: cfg.Threshold, Trace: trace, Logger: log}
	if err := filesInBucket(ctx, cfg, &o, &d, log); err != nil {
		return nil, nil, d, err
	}
	var dev *device.File
	if c.FlashSize > 0 && !cfg.NoFlash {
		var err error
		if dev, err = device.OpenFile(c.Flash, device.FileOptions{Size: int64(c.FlashSize), Logger: log}); err != nil {
			return nil, nil, d, err
		}
		o.Flash = dev
		d.Flash, d.FlashSize, d.FlashBandwidth = c.Flash, dev.Size(), int64(c.FlashBandwidth)
	}
	t, err := files.Open(o)
	if err != nil {
		if dev != nil {
			dev.Close()
		}
		return nil, nil, d, err
	}
	if dev == nil {
		return t, nil, d, nil // not a nil *device.File in a non-nil io.Closer
	}
	return t, dev, d, nil
}

// OpenFileStore opens the whole-file tier of dir without flash copies, as
// strata ingest file stores into it.
func OpenFileStore(dir string, log *slog.Logger) (*files.Tier, error) {
	return files.Open(files.Options{Dir: dir, Logger: log})
}
