package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/strata-media/strata/internal/media/images"
	"github.com/strata-media/strata/internal/node/files"

	"github.com/strata-media/strata/internal/storage/origin"
)

// openBucket returns the bucket of cfg.Origin for the whole files and the
// image store's large values, checked (bucket present, credentials
// accepted); nil without an S3 origin.
func openBucket(ctx context.Context, originURL string, log *slog.Logger) (*origin.Bucket, error) {
	if originURL == "" {
		return nil, nil
	}
	opts, err := origin.ParseS3URL(originURL)
	if err != nil {
		return nil, err
	}
	opts.Logger = log.With("component", "s3")
	b, err := origin.NewBucket(opts)
	if err != nil {
		return nil, err
	}
	if err := b.Check(ctx); err != nil {
		return nil, fmt.Errorf("app: the bucket %s cannot be read: %w", b, err)
	}
	return b, nil
}

// filesInBucket puts the whole files in the bucket of cfg.Origin, if
// any, instead of the files directory.
func filesInBucket(ctx context.Context, cfg *Config, o *files.Options, d *FilesDescription, log *slog.Logger) error {
	cctx, cancel := context.WithTimeout(ctx, cfg.OriginTimeout.Duration)
	defer cancel()
	b, err := openBucket(cctx, cfg.Origin, log)
	if err != nil || b == nil {
		return err
	}
	o.Bucket, o.Dir = b, ""
	o.RAMBytes, o.StatTTL = int64(cfg.Files.RAM), cfg.Files.StatTTL.Duration
	d.Dir = b.String() + " (.files/)"
	return nil
}

// OpenBucketFileStore opens the whole-file tier in the bucket of an S3
// origin URL without flash copies, as strata ingest file --origin stores
// into it.
func OpenBucketFileStore(ctx context.Context, originURL string, log *slog.Logger) (*files.Tier, string, error) {
	b, err := openBucket(ctx, originURL, log)
	if err != nil {
		return nil, "", err
	}
	t, err := files.Open(files.Options{Bucket: b, Logger: log})
	return t, b.String(), err
}

// OpenIngestFileStore opens the file store strata ingest file writes to:
// the bucket of originURL if set, else the files directory dir (default
// <data>/files). It returns where that is, for messages.
func OpenIngestFileStore(ctx context.Context, originURL, data, dir string, log *slog.Logger) (*files.Tier, string, error) {
	if originURL != "" {
		return OpenBucketFileStore(ctx, originURL, log)
	}
	c := FilesConfig{Dir: dir}
	c.Resolve(data)
	t, err := OpenFileStore(c.Dir, log)
	return t, c.Dir, err
}

// OpenImagesWithOrigin opens the image store of cfg, nil when cfg opens
// none (ImagesOff), with its large values in the bucket of cfg.Origin if set
// (MRIS's split: small values in the LSM on flash, large ones objects).
func OpenImagesWithOrigin(ctx context.Context, cfg *Config, log *slog.Logger) (*images.Store, *ImagesDescription, error) {
	if cfg.ImagesOff() != "" {
		return nil, nil, nil
	}
	if cfg.Origin == "" {
		return OpenImages(&cfg.Images, log)
	}
	cctx, cancel := context.WithTimeout(ctx, cfg.OriginTimeout.Duration)
	defer cancel()
	b, err := openBucket(cctx, cfg.Origin, log)
	if err != nil {
		return nil, nil, err
	}
	return openImagesIn(&cfg.Images, b, cfg.Files.StatTTL.Duration, log)
}
