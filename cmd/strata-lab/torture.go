package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/strata-media/strata/internal/lab/torture"
	"github.com/strata-media/strata/internal/media/transcode"
)

// tortureVideos are the torture's two video sources: the same shape (2 s,
// 1 s GOPs, audio) and different pictures, small so that an upload packages
// in a fraction of a second.
var tortureVideos = []transcode.Pattern{
	{Source: "testsrc2", Width: 160, Height: 90, Seconds: 2, GOP: 24, Kbps: 100},
	{Source: "testsrc", Width: 160, Height: 90, Seconds: 2, GOP: 24, Kbps: 100},
}

func runTorture(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("torture", "[--edge] [--strata BIN] [--cycles N] [--seed N] [--dir DIR] [--min-run D] [--max-run D] [--workers N]", stderr)
	opts := torture.Options{RunOptions: torture.RunOptions{Log: stdout}}
	edge := torture.EdgeOptions{}
	edgeMode := fs.Bool("edge", false, "torture an edge (strata serve --upstream) in front of an origin publishing new versions, instead of an origin server")
	fs.IntVar(&opts.Cycles, "cycles", 0, "kill -9 and restart cycles (default 200; 50 with --edge)")
	fs.Uint64Var(&opts.Seed, "seed", 1, "seed of the workload, the run times and the kill moments")
	dir := fs.String("dir", "", "working directory, empty or absent (default: a new temporary directory, removed after a clean run)")
	fs.DurationVar(&opts.MinRun, "min-run", 0, "shortest load before a kill (default 200ms; 300ms with --edge)")
	fs.DurationVar(&opts.MaxRun, "max-run", 0, "longest load before a kill (default 2.5s; 3s with --edge)")
	fs.IntVar(&opts.Workers, "workers", 0, "concurrent clients (default 4)")
	fs.IntVar(&edge.Objects, "objects", 0, "with --edge: objects at the origin (default 48)")
	fs.DurationVar(&edge.MaxAge, "max-age", 0, "with --edge: the origin's max-age, whole seconds (default 2s)")
	fs.DurationVar(&edge.Publish, "publish", 0, "with --edge: the origin publishes a new version of a random object this often (default 100ms)")
	fs.DurationVar(&edge.Grace, "grace", 0, "with --edge: the edge's --edge-grace")
	fs.DurationVar(&edge.KeepOnError, "keep-on-error", 0, "with --edge: the edge's --edge-keep-on-error (default 10s)")
	edgeArgs := fs.String("edge-args", "", "with --edge: more strata serve flags for the edge, space-separated")
	strata := strataFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	bin, err := strataBinary(*strata)
	if err != nil {
		return err
	}
	opts.Bin = bin
	if opts.Dir = *dir; opts.Dir == "" {
		if opts.Dir, err = os.MkdirTemp("", "strata-torture-"); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *edgeMode {
		edge.RunOptions = opts.RunOptions
		edge.EdgeArgs = strings.Fields(*edgeArgs)
		_, err = torture.RunEdge(ctx, edge)
	} else {
		if opts.Videos, err = tortureSources(ctx, filepath.Join(opts.Dir, "sources")); err != nil {
			return err
		}
		_, err = torture.Run(ctx, opts)
	}
	if errors.Is(err, torture.ErrFailed) {
		fmt.Fprintf(stderr, "strata-lab torture: %v\n  the data directory and the server log are kept in %s\n", err, opts.Dir)
		return errFound
	}
	if err == nil && *dir == "" {
		err = os.RemoveAll(opts.Dir)
	}
	return err
}

// tortureSources generates the video sources with ffmpeg into dir.
func tortureSources(ctx context.Context, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for i, p := range tortureVideos {
		path := filepath.Join(dir, fmt.Sprintf("v%d.mp4", i))
		if err := transcode.Generate(ctx, path, p); err != nil {
			return nil, fmt.Errorf("generating the video sources: %w", err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
