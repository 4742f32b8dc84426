// Package mediatest generates the test videos of Strata's media tests
// with ffmpeg, once per test binary, into a temporary directory. Without
// ffmpeg a test that asks for one is skipped, unless the environment sets
// STRATA_REQUIRE_FFMPEG (make test does, after installing ffmpeg), where
// it fails.
package mediatest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/strata-media/strata/internal/media/transcode"
)

// Videos are the generated inputs, a few seconds each: with B-pyramid
// (two sizes, aligned key frames: one title's ladder), with plain
// non-reference B pictures, without B pictures or audio, and a short one
// whose duration does not match the others.
var Videos = map[string]transcode.Pattern{
	"pyr-300k.mp4":  {Source: "testsrc2", Seconds: 5, GOP: 24, BFrames: 3, Pyramid: true, Kbps: 300},
	"pyr-600k.mp4":  {Source: "testsrc2", Width: 480, Height: 270, Seconds: 5, GOP: 24, BFrames: 3, Pyramid: true, Kbps: 600},
	"flat-300k.mp4": {Source: "testsrc", Seconds: 4, FPS: 25, GOP: 25, BFrames: 2, Kbps: 300},
	"nob-200k.mp4":  {Source: "smptehdbars", Seconds: 3, GOP: 12, NoAudio: true, Kbps: 200},
	"short.mp4":     {Source: "testsrc2", Seconds: 2, GOP: 24, BFrames: 3, Pyramid: true},
}

var (
	once sync.Once
	dir  string
	err  error
)

// Video returns the path of generated video name (a key of Videos).
func Video(t testing.TB, name string) string {
	t.Helper()
	Require(t)
	once.Do(generate)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// Require skips t without ffmpeg, or fails it when ffmpeg is required.
func Require(t testing.TB) {
	t.Helper()
	if transcode.Available() {
		return
	}
	if os.Getenv("STRATA_REQUIRE_FFMPEG") != "" {
		t.Fatal(transcode.ErrNoFFmpeg)
	}
	t.Skip(transcode.ErrNoFFmpeg)
}

func generate() {
	dir, err = os.MkdirTemp("", "strata-mediatest-")
	for name, p := range Videos {
		if err == nil {
			err = transcode.Generate(context.Background(), filepath.Join(dir, name), p)
		}
	}
	if err != nil {
		err = errors.Join(err, os.RemoveAll(dir))
	}
}

// Cleanup removes the generated videos; call it from TestMain after
// m.Run.
func Cleanup() {
	if dir != "" {
		os.RemoveAll(dir)
	}
}
