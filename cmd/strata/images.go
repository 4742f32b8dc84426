package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/media/images"
	"github.com/strata-media/strata/internal/node/app"
)

// imagesFlags registers the --images-* flags on fs, shared by strata
// serve and strata ingest image.
func imagesFlags(fs *flag.FlagSet, c *app.ImagesConfig) {
	fs.BoolVar(&c.Disabled, "no-images", c.Disabled, "run without the image store")
	fs.BoolVar(&c.Enabled, "images-enabled", c.Enabled, "open the image store on an edge node (upstreams, no --origin), which has none otherwise; --no-images wins")
	fs.StringVar(&c.LSM, "images-lsm", c.LSM, "image store LSM directory, on flash: keys, metadata, small variants, WAL (default <data>/images-lsm)")
	fs.StringVar(&c.VLog, "images-vlog", c.VLog, "image store value log directory, on capacity storage: large variants (default <capacity>/.images-vlog)")
	fs.Var(&c.SizeThreshold, "images-size-threshold", "variants of this size and more go to the value log (MRIS SizeThreshold)")
	fs.Var(&c.SplitThreshold, "images-split-threshold", "value log file size (MRIS LargeSpace SplitThreshold)")
	fs.Var(&c.MaxUpload, "images-max-upload", "largest accepted upload")
	fs.Int64Var(&c.MaxPixels, "images-max-pixels", c.MaxPixels, "largest accepted width x height, checked before decoding")
	fs.Var(&c.MaxDecode, "images-max-decode", "largest RAM an upload's decode may take (bytes per pixel count), checked before decoding")
	fs.StringVar(&c.Ladder, "images-ladder", c.Ladder, "variants generated at upload: name=WxH (fit inside) or name=N (longest side), comma-separated")
	fs.IntVar(&c.Quality, "images-quality", c.Quality, "JPEG quality of the variants (1-100)")
	fs.StringVar(&c.Resampler, "images-resampler", c.Resampler, "catmullrom, catmullrom-direct, bilinear, approx-bilinear (libvips with -tags vips)")
	fs.BoolVar(&c.NoSync, "images-no-sync", c.NoSync, "acknowledge uploads before they are fsynced (unsafe)")
	fs.DurationVar(&c.MaxAge.Duration, "images-max-age", c.MaxAge.Duration, "Cache-Control max-age of variants and IIIF info.json")
	fs.StringVar(&c.BaseURL, "images-base-url", c.BaseURL, "public URL prefix of IIIF ids (default: from the request's Host)")
	fs.BoolVar(&c.TrustForwarded, "images-trust-forwarded", c.TrustForwarded, "take IIIF ids' scheme and host from X-Forwarded-Proto/-Host (only behind a proxy that sets them)")
	fs.Int64Var(&c.IIIFMaxArea, "images-iiif-max-area", c.IIIFMaxArea, "largest IIIF response in pixels, info.json's maxArea (0: 16 Mi)")
	fs.Int64Var(&c.IIIFMaxDecodePixels, "images-iiif-max-decode-pixels", c.IIIFMaxDecodePixels, "largest stored variant an IIIF response may decode, pixels; 413 beyond (0: 64 Mi)")
	fs.IntVar(&c.IIIFConcurrency, "images-iiif-concurrency", c.IIIFConcurrency, "IIIF derivations at once; others wait (0: GOMAXPROCS)")
}

// runIngestImage stores an image file with its variants, as PUT
// /images/{id} does, into the store of a data directory that no running
// strata serve holds.
func runIngestImage(args []string, stdout, stderr io.Writer) error {
	cfg, id, file, err := loadIngestConfig(args, stderr)
	if err != nil {
		return err
	}
	body, err := readImageFile(file, int64(cfg.Images.MaxUpload))
	if err != nil {
		return err
	}
	st, _, err := app.OpenImagesWithOrigin(context.Background(), &cfg, warnLogger(stderr))
	if err != nil {
		return err
	}
	if st == nil {
		return fmt.Errorf("%w: this configuration opens no image store (%s)", errUsage, cfg.ImagesOff())
	}
	defer st.Close()
	return ingestOne(st, id, file, body, stdout)
}

// loadIngestConfig reads what strata ingest image needs of strata serve's
// config file: the paths and the [images] table; other keys are ignored.
func loadIngestConfig(args []string, stderr io.Writer) (app.Config, string, string, error) {
	cfg := app.DefaultConfig()
	if p := configPath(args); p != "" {
		if _, err := toml.DecodeFile(p, &cfg); err != nil {
			return cfg, "", "", fmt.Errorf("%w: config %s: %v", errUsage, p, err)
		}
	}
	fs := newFlags("ingest image", "--id ID [flags] FILE", stderr)
	fs.String("config", "", "strata serve's TOML config file (paths and [images]); flags override it")
	id := fs.String("id", "", "image id: 1-128 of A-Z a-z 0-9 . _ -, not starting with '.' (required)")
	fs.StringVar(&cfg.Data, "data", cfg.Data, "data directory, as for strata serve")
	fs.StringVar(&cfg.Flash, "flash", cfg.Flash, "flash cache file, as for strata serve (places the LSM beside it)")
	fs.StringVar(&cfg.Capacity, "capacity", cfg.Capacity, "capacity directory, as for strata serve (default <data>/videos)")
	fs.StringVar(&cfg.Origin, "origin", cfg.Origin, "S3 bucket of strata serve --origin: the large variants go there (s3://BUCKET/PREFIX[?endpoint=URL&region=R&path_style=true])")
	imagesFlags(fs, &cfg.Images)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, "", "", err
		}
		return cfg, "", "", fmt.Errorf("%w: %v", errUsage, err)
	}
	if *id == "" || fs.NArg() != 1 {
		return cfg, "", "", fmt.Errorf("%w: want --id ID and one FILE", errUsage)
	}
	cfg.ResolvePaths()
	return cfg, *id, fs.Arg(0), usageError(cfg.Images.Check())
}

func readImageFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %w: %s, limit %s", path, images.ErrTooLarge, bytesize.Format(fi.Size()), bytesize.Format(limit))
	}
	return os.ReadFile(path)
}

// ingestOne checks, renders and stores one image, printing each step.
func ingestOne(st *images.Store, id, file string, body []byte, w io.Writer) error {
	src, err := images.Probe(body, st.Options().Limits())
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	fmt.Fprintf(w, "read     %s: %s %dx%d, %s\n", file, src.Format, src.Width, src.Height, bytesize.Format(src.Bytes))
	start := time.Now()
	p, err := st.Pipeline().Prepare(body)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	fmt.Fprintf(w, "render   %d variants in %s (%s)\n", len(p.Variants)-1, time.Since(start).Round(time.Millisecond), st.Options().Resampler)
	printVariants(w, p.Variants, st.Options().SizeThreshold)
	start = time.Now()
	m, replaced, err := st.Put(id, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "stored   %s generation %d%s in %s%s\n", id, m.Generation, map[bool]string{true: " (replaced)"}[replaced],
		time.Since(start).Round(time.Microsecond), map[bool]string{false: ", synced"}[st.Options().NoSync])
	return nil
}

func printVariants(w io.Writer, vs []images.Variant, threshold int64) {
	for _, v := range vs {
		where := "LSM (flash)"
		if v.Bytes >= threshold {
			where = "value log (capacity)"
		}
		if v.Blob != "" {
			where = "same bytes as " + v.Blob
		}
		fmt.Fprintf(w, "  %-10s %5dx%-5d %10s  %s\n", v.Name, v.Width, v.Height, bytesize.Format(v.Bytes), where)
	}
}
