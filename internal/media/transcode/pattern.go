package transcode

import (
	"context"
	"fmt"
	"os"
	"strconv"
)

// Pattern describes a generated test video: an ffmpeg lavfi test source
// with a beeping tone, encoded with libx264 and AAC.
type Pattern struct {
	Source  string  // lavfi video source: "testsrc" (a counter), "testsrc2", "smptehdbars", "mandelbrot"
	Width   int     // pixels; default 320
	Height  int     // default 180
	FPS     int     // default 24
	Seconds float64 // default 4
	GOP     int     // pictures between key frames (closed GOPs, no scene cuts); default 1 s worth
	BFrames int     // consecutive B pictures; 0 for none
	Pyramid bool    // B-pyramid: the middle B picture is a reference
	Kbps    int     // video bitrate; default 300
	NoAudio bool
}

func (p *Pattern) defaults() {
	if p.Source == "" {
		p.Source = "testsrc2"
	}
	if p.Width == 0 {
		p.Width, p.Height = 320, 180
	}
	if p.FPS == 0 {
		p.FPS = 24
	}
	if p.Seconds == 0 {
		p.Seconds = 4
	}
	if p.GOP == 0 {
		p.GOP = p.FPS
	}
	if p.Kbps == 0 {
		p.Kbps = 300
	}
}

// Generate writes the pattern as an MP4 file at out.
func Generate(ctx context.Context, out string, p Pattern) error {
	if !Available() {
		return ErrNoFFmpeg
	}
	p.defaults()
	if err := run(ctx, p.args(out), 0, nil); err != nil {
		os.Remove(out)
		return fmt.Errorf("transcode: generating %s: %w", out, err)
	}
	return nil
}

func (p Pattern) args(out string) []string {
	k := strconv.Itoa
	dur := strconv.FormatFloat(p.Seconds, 'f', 3, 64)
	pyramid := "none"
	if p.Pyramid {
		pyramid = "normal"
	}
	args := []string{"-v", "error", "-nostdin", "-y",
		"-f", "lavfi", "-i", fmt.Sprintf("%s=size=%dx%d:rate=%d:duration=%s", p.Source, p.Width, p.Height, p.FPS, dur)}
	if !p.NoAudio {
		args = append(args, "-f", "lavfi", "-i", "sine=frequency=440:beep_factor=2:sample_rate=48000:duration="+dur)
	}
	args = append(args, "-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high", "-pix_fmt", "yuv420p",
		"-b:v", k(p.Kbps)+"k", "-g", k(p.GOP), "-keyint_min", k(p.GOP), "-sc_threshold", "0",
		"-x264-params", fmt.Sprintf("bframes=%d:b-pyramid=%s", p.BFrames, pyramid))
	if !p.NoAudio {
		args = append(args, "-c:a", "aac", "-b:a", "64k", "-ac", "2")
	}
	return append(args, "-movflags", "+faststart", out)
}
