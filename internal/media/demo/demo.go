// Package demo generates strata serve --demo's playable titles with ffmpeg: test patterns with a tone, packaged like uploads.
package demo

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/strata-media/strata/internal/media"
	"github.com/strata-media/strata/internal/media/transcode"
)

// A title is one playable demo title: a test pattern with a beeping tone,
// transcoded into the ladder or encoded at a few sizes.
type title struct {
	id     string
	source transcode.Pattern
	ladder bool                // transcode source into transcode.DefaultLadder
	sizes  []transcode.Pattern // else encode these renditions directly
}

var titles = []title{
	{id: "play-counter", ladder: true, source: transcode.Pattern{Source: "testsrc", Width: 1280, Height: 720,
		FPS: 25, Seconds: 30, GOP: 50, BFrames: 3, Pyramid: true, Kbps: 4000}},
	{id: "play-colors", sizes: []transcode.Pattern{
		{Source: "testsrc2", Width: 640, Height: 360, FPS: 30, Seconds: 30, GOP: 60, BFrames: 2, Kbps: 900},
		{Source: "testsrc2", Width: 320, Height: 180, FPS: 30, Seconds: 30, GOP: 60, BFrames: 2, Kbps: 300},
	}},
}

// SegmentDuration keeps demo titles' segments short, so seeking and
// fast-forward start quickly in titles under a minute.
const SegmentDuration = 4 * time.Second

// Seed generates the demo titles that the capacity directory lacks, one
// after the other, until ctx is done. Without ffmpeg it logs why and
// returns.
func Seed(ctx context.Context, ing *media.Ingester, capacity string, log *slog.Logger) {
	if !transcode.Available() {
		log.Warn("--demo: ffmpeg is not installed, so no playable demo titles are generated " +
			"(only the synthetic library, which is not playable); apt-get install ffmpeg and restart, " +
			"or upload MP4 files with POST /videos/{id}")
		return
	}
	for _, d := range titles {
		if _, err := os.Stat(filepath.Join(capacity, d.id)); err == nil {
			continue
		}
		log.Info("--demo: generating a playable title with ffmpeg", "video", d.id)
		start := time.Now()
		if err := make1(ctx, ing, d); err != nil {
			if ctx.Err() == nil {
				log.Warn("--demo: generating a title failed", "video", d.id, "err", err)
			}
			return
		}
		log.Info("--demo: title ready at /watch", "video", d.id, "took", time.Since(start).Round(time.Second))
	}
}

// make1 generates, packages and commits one title.
func make1(ctx context.Context, ing *media.Ingester, d title) error {
	s, err := ing.Begin(d.id)
	if err != nil {
		return err
	}
	defer s.Abort()
	s.Options.SegmentDuration = SegmentDuration
	var inputs []media.Input
	if d.ladder {
		src := filepath.Join(s.UploadDir(), "source.mp4")
		if err := transcode.Generate(ctx, src, d.source); err != nil {
			return err
		}
		outs, err := transcode.Ladder(ctx, src, s.UploadDir(), transcode.DefaultLadder, nil)
		if err != nil {
			return err
		}
		for _, o := range outs {
			inputs = append(inputs, media.Input{Name: o.Name, Path: o.Path})
		}
	}
	for i, p := range d.sizes {
		path := filepath.Join(s.UploadDir(), fmt.Sprintf("r%d.mp4", i))
		if err := transcode.Generate(ctx, path, p); err != nil {
			return err
		}
		inputs = append(inputs, media.Input{Name: fmt.Sprintf("%dk", p.Kbps), Path: path})
	}
	_, err = s.Commit(ctx, inputs)
	return err
}
