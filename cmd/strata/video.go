package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/core/framegroup"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/media"
	"github.com/strata-media/strata/internal/media/framestore"
	"github.com/strata-media/strata/internal/node/app"
	"github.com/strata-media/strata/internal/storage/origin"
)

// ingestFlags are strata ingest video's flags.
type ingestFlags struct {
	id, data, capacity string
	origin             string
	segment            time.Duration
	block              bytesize.Value
	levels             string
	ladder             bool
}

func (f *ingestFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.id, "id", "", "video id of the title (replaced if it exists)")
	fs.StringVar(&f.data, "data", app.DefaultConfig().Data, "data directory of strata serve")
	fs.StringVar(&f.capacity, "capacity", "", "capacity tier directory (default <data>/videos)")
	fs.StringVar(&f.origin, "origin", "", "package into a temporary directory, then upload the title to this S3 bucket: s3://BUCKET/PREFIX[?endpoint=URL&region=R&path_style=true]")
	fs.DurationVar(&f.segment, "segment-duration", 10*time.Second, "target media segment duration; cuts at the nearest sync sample")
	fs.Var(&f.block, "block-size", "frame-grouped store block size: the flash device's optimal request size (see strata probe)")
	fs.StringVar(&f.levels, "levels", "L2,L3,L4,L5", "play levels to build besides L1, comma-separated, or none")
	fs.BoolVar(&f.ladder, "ladder", false, "transcode the one FILE with ffmpeg into the 200/400/700/1500/2000 kb/s ladder first")
}

// runIngestVideo is `strata ingest video`: package MP4 renditions (or
// one source transcoded into the ladder) into a title of the capacity
// directory, with progress on stdout.
func runIngestVideo(args []string, stdout, stderr io.Writer) error {
	f := ingestFlags{block: framestore.DefaultBlockSize}
	fs := newFlags("ingest video", "--id ID [flags] [NAME=]FILE...", stderr)
	f.register(fs)
	files, err := parseIngestArgs(fs, args)
	if err != nil {
		return err
	}
	inputs, err := f.check(files)
	if err != nil {
		return err
	}
	levels, err := parseLevels(f.levels)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	opts := media.Options{SegmentDuration: f.segment, BlockSize: int(f.block), Levels: levels,
		Progress: func(msg string) { fmt.Fprintln(stdout, "  "+msg) },
		Logger:   warnLogger(stderr)}
	if f.origin != "" {
		return ingestVideoS3(context.Background(), f, opts, inputs, stdout, stderr)
	}
	ing := media.NewIngester(f.capacityDir(), media.IngestOptions{Options: opts})
	res, err := ingestVideo(context.Background(), ing, f, inputs, stdout)
	if err != nil {
		return err
	}
	printIngest(stdout, res)
	return nil
}

// ingestVideoS3 packages the title into a temporary capacity directory
// and uploads it to the bucket of f.origin (S3Writer.PutTitle publishes
// it last), with progress on stderr.
func ingestVideoS3(ctx context.Context, f ingestFlags, opts media.Options, inputs []media.Input, stdout, stderr io.Writer) error {
	s3opts, err := origin.ParseS3URL(f.origin)
	if err != nil {
		return fmt.Errorf("%w: --origin: %v", errUsage, err)
	}
	s3opts.Logger = opts.Logger
	w, err := origin.NewS3Writer(s3opts)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "strata-ingest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	f.data, f.capacity = tmp, filepath.Join(tmp, "videos")
	res, err := ingestVideo(ctx, media.NewIngester(f.capacity, media.IngestOptions{Options: opts}), f, inputs, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "upload: %s to %s\n", f.id, w)
	up, err := w.PutTitle(ctx, filepath.Join(f.capacity, f.id), f.id, uploadProgress(stderr))
	if err != nil {
		return err
	}
	printIngest(stdout, res)
	fmt.Fprintf(stdout, "uploaded %d objects (%s) to %s/%s", up.Files, bytesize.Format(up.Bytes), s3opts.URL(), f.id)
	if up.Removed > 0 {
		fmt.Fprintf(stdout, ", removed %d of the earlier upload", up.Removed)
	}
	fmt.Fprintln(stdout)
	return nil
}

// uploadProgress prints a line each time a file of an upload completes.
func uploadProgress(w io.Writer) origin.ProgressFunc {
	files := 0
	return func(p origin.Progress) {
		if p.Files != files {
			files = p.Files
			fmt.Fprintf(w, "upload: %d/%d files, %s of %s\n", p.Files, p.TotalFiles, bytesize.Format(p.Sent), bytesize.Format(p.Total))
		}
	}
}

// parseIngestArgs parses flags and files, which may be interleaved.
func parseIngestArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		if fs.NArg() == 0 {
			return files, nil
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func (f *ingestFlags) check(files []string) ([]media.Input, error) {
	if err := ident.ValidName(f.id); err != nil {
		return nil, fmt.Errorf("%w: --id: %v", errUsage, err)
	}
	if len(files) == 0 || f.ladder && len(files) != 1 {
		return nil, fmt.Errorf("%w: give one or more MP4 files (exactly one with --ladder)", errUsage)
	}
	var inputs []media.Input
	for _, arg := range files {
		in := media.Input{Path: arg}
		if name, path, ok := strings.Cut(arg, "="); ok && ident.ValidName(name) == nil {
			in = media.Input{Name: name, Path: path}
		}
		if _, err := os.Stat(in.Path); err != nil {
			return nil, err
		}
		inputs = append(inputs, in)
	}
	return inputs, nil
}

// capacityDir is the capacity directory strata serve would use.
func (f *ingestFlags) capacityDir() string {
	c := app.Config{Data: f.data, Capacity: f.capacity}
	c.ResolvePaths()
	return c.Capacity
}

// parseLevels parses "L2,L4" (or "none").
func parseLevels(s string) ([]framegroup.Level, error) {
	out := []framegroup.Level{}
	if s == "" || s == "none" {
		return out, nil
	}
	for _, p := range strings.Split(s, ",") {
		l, err := framegroup.ParseLevel(strings.TrimSpace(p))
		if err != nil {
			return nil, err
		}
		if l != framegroup.L1 {
			out = append(out, l)
		}
	}
	return out, nil
}

// ingestVideo stages, optionally transcodes the ladder into the staging
// directory, and commits.
func ingestVideo(ctx context.Context, ing *media.Ingester, f ingestFlags, inputs []media.Input, stdout io.Writer) (*media.Result, error) {
	if err := os.MkdirAll(f.capacityDir(), 0o755); err != nil {
		return nil, err
	}
	s, err := ing.Begin(f.id)
	if err != nil {
		return nil, err
	}
	defer s.Abort()
	if f.ladder {
		fmt.Fprintf(stdout, "transcoding %s into the ladder %s with ffmpeg\n", inputs[0].Path, media.LadderNames())
		inputs, err = s.TranscodeLadder(ctx, inputs[0].Path, func(pct int) { fmt.Fprintf(stdout, "  ladder: %d%%\n", pct) })
		if err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(stdout, "packaging %s into %s\n", f.id, f.capacityDir())
	return s.Commit(ctx, inputs)
}

func printIngest(w io.Writer, res *media.Result) {
	verb := "created"
	if res.Replaced {
		verb = "replaced"
	}
	fmt.Fprintf(w, "%s title %s: %.2f s, %d renditions\n", verb, res.Video, res.Duration, len(res.Renditions))
	for _, r := range res.Renditions {
		desc := fmt.Sprintf("%dx%d, %s fps", r.Width, r.Height, r.FrameRate)
		if r.Width == 0 {
			desc = "audio"
		}
		fmt.Fprintf(w, "  %-14s %-12s %-22s %6d kb/s %4d segments\n", r.Name, r.Codec, desc, r.Bandwidth/1000, r.Segments)
	}
	fmt.Fprintf(w, "play: /videos/%s/%s (DASH), /videos/%s/%s (HLS), or /watch?v=%s\n",
		res.Video, media.MPDName, res.Video, media.MasterName, res.Video)
	if res.Replaced {
		fmt.Fprintf(w, "a running strata serve keeps cached segments of the old version until: "+
			"curl -X POST -H \"Authorization: Bearer $(cat <data>/admin.token)\" <url>/admin/invalidate/%s\n", res.Video)
	}
}
