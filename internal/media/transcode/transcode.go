// Package transcode runs ffmpeg for what packaging itself never needs:
// the bitrate ladder of `strata ingest video --ladder` and the generated
// test-pattern titles of the tests and of `strata serve --demo`.
package transcode

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoFFmpeg reports that ffmpeg is not installed.
var ErrNoFFmpeg = errors.New("transcode: ffmpeg not found in PATH (apt-get install ffmpeg)")

// Available reports whether ffmpeg and ffprobe are installed.
func Available() bool {
	_, err1 := exec.LookPath("ffmpeg")
	_, err2 := exec.LookPath("ffprobe")
	return err1 == nil && err2 == nil
}

// Output is one file ffmpeg wrote.
type Output struct {
	Name string // rendition name, e.g. "700k"
	Path string
}

// Rung is one rendition of a bitrate ladder.
type Rung struct {
	Name   string
	Kbps   int // video bitrate
	Height int // picture height, never above the source's
}

// DefaultLadder is the DASH dataset's ladder (FlashStream Table 4):
// 200, 400, 700, 1500 and 2000 kb/s.
var DefaultLadder = []Rung{
	{"200k", 200, 180}, {"400k", 400, 270}, {"700k", 700, 360}, {"1500k", 1500, 540}, {"2000k", 2000, 720},
}

// Ladder transcodes src into one H.264/AAC MP4 per rung in dir, in one
// ffmpeg run (the source is decoded once). Key frames are forced every 2 s
// at the same times in every rung, with no scene-cut key frames, so the
// renditions' segments align; B-pyramid is on. progress, if set, receives
// the percentage done.
func Ladder(ctx context.Context, src, dir string, rungs []Rung, progress func(pct int)) ([]Output, error) {
	if !Available() {
		return nil, ErrNoFFmpeg
	}
	dur, err := Duration(ctx, src)
	if err != nil {
		return nil, err
	}
	args := []string{"-v", "error", "-nostdin", "-y", "-i", src, "-progress", "pipe:1", "-nostats"}
	var outs []Output
	for _, r := range rungs {
		out := filepath.Join(dir, r.Name+".mp4")
		args = append(args, ladderArgs(r)...)
		args = append(args, out)
		outs = append(outs, Output{r.Name, out})
	}
	return outs, run(ctx, args, dur, progress)
}

func ladderArgs(r Rung) []string {
	k := strconv.Itoa
	return []string{"-map", "0:v:0", "-map", "0:a:0?",
		"-vf", fmt.Sprintf("scale=w=-2:h=min(ih\\,%d),format=yuv420p", r.Height),
		"-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high",
		"-b:v", k(r.Kbps) + "k", "-maxrate", k(r.Kbps*11/10) + "k", "-bufsize", k(r.Kbps*2) + "k",
		"-force_key_frames", "expr:gte(t,n_forced*2)", "-sc_threshold", "0",
		"-x264-params", "bframes=3:b-pyramid=normal",
		"-c:a", "aac", "-b:a", "128k", "-ac", "2", "-movflags", "+faststart"}
}

// Duration asks ffprobe for a file's duration in seconds.
func Duration(ctx context.Context, path string) (float64, error) {
	out, err := exec.CommandContext(ctx, "ffprobe", "-v", "error", "-show_entries", "format=duration",
		"-of", "default=nw=1:nk=1", path).Output()
	if err != nil {
		return 0, fmt.Errorf("transcode: ffprobe %s: %w", path, exitError(err))
	}
	d, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		return 0, fmt.Errorf("transcode: ffprobe %s: duration %q", path, out)
	}
	return d, nil
}

// run runs ffmpeg with args, reporting progress from its -progress output
// against the expected duration.
func run(ctx context.Context, args []string, dur float64, progress func(int)) error {
	cmd := exec.CommandContext(ctx, "ffmpeg", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("transcode: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("transcode: ffmpeg: %w", err)
	}
	readProgress(stdout, dur, progress)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("transcode: ffmpeg: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// readProgress reads ffmpeg's key=value progress lines until EOF and
// reports each new whole-10% step of out_time_us.
func readProgress(r io.Reader, dur float64, progress func(int)) {
	last := -1
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "out_time_us=")
		us, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil || dur <= 0 || progress == nil {
			continue
		}
		if pct := min(100, int(float64(us)/1e6/dur*100)) / 10 * 10; pct > last {
			last = pct
			progress(pct)
		}
	}
}

func exitError(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}
