package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/strata-media/strata/internal/core/framegroup"
	"github.com/strata-media/strata/internal/media/framestore"
	"github.com/strata-media/strata/internal/media/mediatest"
	"github.com/strata-media/strata/internal/media/source"
)

func TestMain(m *testing.M) {
	code := m.Run()
	mediatest.Cleanup()
	os.Exit(code)
}

func testVideo(t testing.TB, name string) string { return mediatest.Video(t, name) }

// testOptions package with short segments and small blocks, so a few
// seconds of video make several of each.
func testOptions(t *testing.T) Options {
	return Options{SegmentDuration: 2 * time.Second, BlockSize: 16 << 10, Progress: func(s string) { t.Log(s) }}
}

// readTrack decodes a rendition directory (init.mp4 then 1.m4s, 2.m4s...)
// into its samples, and the number of fragments and truns per segment.
func readTrack(t *testing.T, dir string, segments int) (samples []mp4.FullSample, frags, truns []int) {
	t.Helper()
	init, err := mp4.ReadMP4File(filepath.Join(dir, "init.mp4"))
	if err != nil || init.Init == nil {
		t.Fatalf("%s/init.mp4: %v", dir, err)
	}
	trex := init.Init.Moov.Mvex.Trex
	for n := 1; n <= segments; n++ {
		f, err := mp4.ReadMP4File(filepath.Join(dir, segmentName(n)))
		if err != nil || len(f.Segments) != 1 {
			t.Fatalf("%s segment %d: %v", dir, n, err)
		}
		frags = append(frags, len(f.Segments[0].Fragments))
		nt := 0
		for _, fr := range f.Segments[0].Fragments {
			nt += len(fr.Moof.Traf.Truns)
			fs, err := fr.GetFullSamples(trex)
			if err != nil {
				t.Fatal(err)
			}
			samples = append(samples, fs...)
		}
		truns = append(truns, nt)
	}
	return samples, frags, truns
}

func segmentCount(t *testing.T, dir string) int {
	n := 0
	for ; ; n++ {
		if _, err := os.Stat(filepath.Join(dir, segmentName(n+1))); err != nil {
			return n
		}
	}
}

// TestPackageLevels packages a two-rendition B-pyramid title and checks
// every level against the source: L1 is the source's samples, byte for
// byte and with their times; L2 to L5 hold exactly the pictures the
// paper's Fig. 1 keeps, timelines stay continuous, and L4/L5 are one
// sync sample per fragment with one trun each.
func TestPackageLevels(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "title")
	in := []Input{{Path: testVideo(t, "pyr-300k.mp4")}, {Name: "600k", Path: testVideo(t, "pyr-600k.mp4")}}
	res, err := Package(context.Background(), dir, "t1", in, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Renditions) != 11 { // 2 × 5 levels + audio
		t.Fatalf("%d renditions: %+v", len(res.Renditions), res.Renditions)
	}
	src, err := source.Open(in[1].Path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	v, err := analyze("600k", src.Video, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range framegroup.Levels {
		t.Run(l.String(), func(t *testing.T) { checkLevel(t, filepath.Join(dir, LevelName("600k", l)), src.Video, v, l) })
	}
	for _, name := range manifestNames(testOptions(t).Levels) {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

func checkLevel(t *testing.T, dir string, src *source.Track, v *video, l framegroup.Level) {
	n := segmentCount(t, dir)
	samples, frags, truns := readTrack(t, dir, n)
	var want []int // source sample indices the level keeps
	for i, f := range v.frames {
		if l.Includes(f.Stream) {
			want = append(want, i)
		}
	}
	if len(samples) != len(want) {
		t.Fatalf("%d samples, want %d", len(samples), len(want))
	}
	for k, i := range want {
		s, w := samples[k], src.Samples[i]
		data, _ := src.Read(i)
		if s.DecodeTime != w.DTS || s.CompositionTimeOffset != w.CTO || !bytes.Equal(s.Data, data) {
			t.Fatalf("sample %d (source %d) differs: dts %d/%d cto %d/%d", k, i, s.DecodeTime, w.DTS, s.CompositionTimeOffset, w.CTO)
		}
		if k+1 < len(samples) && s.DecodeTime+uint64(s.Dur) != samples[k+1].DecodeTime {
			t.Fatalf("sample %d: timeline gap", k)
		}
		if l.IntraOnly() && !s.IsSync() {
			t.Fatalf("sample %d of an intra-only level is not sync", k)
		}
	}
	if last := samples[len(samples)-1]; last.DecodeTime+uint64(last.Dur) != src.EndTime {
		t.Fatalf("timeline ends at %d, want %d", last.DecodeTime+uint64(last.Dur), src.EndTime)
	}
	for i := range frags {
		if l.IntraOnly() && frags[i] != truns[i] || !l.IntraOnly() && frags[i] != 1 || truns[i] != frags[i] {
			t.Fatalf("segment %d: %d fragments, %d truns", i+1, frags[i], truns[i])
		}
	}
}

// TestIFramePlaylist checks that every byte range of an I-frame playlist
// is one whole fragment: a moof, then its mdat.
func TestIFramePlaylist(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "title")
	in := []Input{{Name: "r", Path: testVideo(t, "flat-300k.mp4")}}
	if _, err := Package(context.Background(), dir, "t", in, testOptions(t)); err != nil {
		t.Fatal(err)
	}
	for _, rend := range []string{"r-L4", "r-L5"} {
		pl, err := os.ReadFile(filepath.Join(dir, rend, "iframes.m3u8"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(pl, []byte("#EXT-X-I-FRAMES-ONLY")) {
			t.Fatalf("not an I-frame playlist:\n%s", pl)
		}
		if n := checkRanges(t, filepath.Join(dir, rend), strings.Split(string(pl), "\n")); n == 0 {
			t.Fatalf("no byte ranges:\n%s", pl)
		}
	}
}

// checkRanges checks each EXT-X-BYTERANGE of an I-frame playlist and
// returns how many there were.
func checkRanges(t *testing.T, dir string, lines []string) int {
	ranges := 0
	for i, line := range lines {
		var n, off int64
		if _, err := fmt.Sscanf(line, "#EXT-X-BYTERANGE:%d@%d", &n, &off); err != nil {
			continue
		}
		uri := lines[i+2] // after the EXTINF line
		data, err := os.ReadFile(filepath.Join(dir, uri))
		if err != nil {
			t.Fatal(err)
		}
		b := data[off : off+n]
		moof := int64(binary.BigEndian.Uint32(b))
		if string(b[4:8]) != "moof" || string(b[moof+4:moof+8]) != "mdat" || moof+int64(binary.BigEndian.Uint32(b[moof:])) != n {
			t.Fatalf("range %d@%d of %s is not one fragment", n, off, uri)
		}
		ranges++
	}
	return ranges
}

// ffmpegConvert makes a variant of a test video with ffmpeg.
func ffmpegConvert(t *testing.T, in string, args ...string) string {
	out := filepath.Join(t.TempDir(), "converted.mp4")
	cmd := exec.Command("ffmpeg", append(append([]string{"-v", "error", "-y", "-i", in}, args...), out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
	return out
}

// TestPackageErrors feeds bad inputs and expects a classified error and
// an untouched output directory.
func TestPackageErrors(t *testing.T) {
	pyr := testVideo(t, "pyr-300k.mp4")
	text := filepath.Join(t.TempDir(), "notes.mp4")
	os.WriteFile(text, []byte("this is not a video\n"), 0o644)
	data, _ := os.ReadFile(pyr)
	trunc := filepath.Join(t.TempDir(), "trunc.mp4")
	os.WriteFile(trunc, data[:len(data)/2], 0o644)
	cases := []struct {
		name   string
		inputs []Input
		want   error
		msg    string
	}{
		{"not mp4", []Input{{Path: text}}, ErrInvalidInput, "not an MP4"},
		{"truncated", []Input{{Path: trunc}}, ErrInvalidInput, "truncated"},
		{"no video", []Input{{Path: ffmpegConvert(t, pyr, "-vn", "-c", "copy")}}, ErrInvalidInput, "no video track"},
		{"mpeg-4 part 2", []Input{{Path: ffmpegConvert(t, pyr, "-c:v", "mpeg4", "-c:a", "copy")}}, ErrUnsupported, "want H.264"},
		{"mp3 audio", []Input{{Path: ffmpegConvert(t, pyr, "-c:v", "copy", "-c:a", "libmp3lame")}}, ErrUnsupported, "want AAC"},
		{"durations", []Input{{Path: pyr}, {Path: testVideo(t, "short.mp4")}}, ErrInvalidInput, "mismatched durations"},
		{"reserved name", []Input{{Name: "audio", Path: pyr}}, ErrInvalidInput, "reserved"},
		{"level name", []Input{{Name: "x-L3", Path: pyr}}, ErrInvalidInput, "play level"},
		{"twice", []Input{{Name: "a", Path: pyr}, {Name: "a", Path: pyr}}, ErrInvalidInput, "given twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "title")
			_, err := Package(context.Background(), dir, "t", c.inputs, testOptions(t))
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v, want %v mentioning %q", err, c.want, c.msg)
			}
		})
	}
}

// TestClassifyMatchesFFprobe compares the picture types read from slice
// headers with ffprobe's, and checks the B-pyramid's reference B pictures
// go to the P stream.
func TestClassifyMatchesFFprobe(t *testing.T) {
	path := testVideo(t, "pyr-300k.mp4")
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "frame=pict_type",
		"-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, f := range strings.Fields(string(out)) {
		want[strings.TrimSuffix(f, ",")]++
	}
	src, err := source.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	v, err := analyze("x", src.Video, 2)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	refB := 0
	for _, f := range v.frames {
		got[[]string{"I", "P", "B"}[f.Flags.Kind()]]++
		if f.Flags.Kind() == framegroup.KindB && f.Flags&framegroup.FlagRef != 0 {
			refB++
			if f.Stream != framegroup.P {
				t.Fatalf("reference B picture in stream %s", f.Stream)
			}
		}
	}
	if got["I"] != want["I"] || got["P"] != want["P"] || got["B"] != want["B"] {
		t.Fatalf("types %v, ffprobe %v", got, want)
	}
	if refB == 0 {
		t.Fatal("no reference B picture in a B-pyramid stream")
	}
}

func TestCutPoints(t *testing.T) {
	var frames []framestore.Frame
	for i := range 100 { // sync every 7 pictures
		f := framestore.Frame{FrameRecord: framegroup.FrameRecord{DTS: uint64(i) * 10}}
		if i%7 == 0 {
			f.Flags = framegroup.FlagSync
		}
		frames = append(frames, f)
	}
	got := cutPoints(frames, 200, 1000)
	want := []uint64{0, 210, 420, 630, 770} // 600 is nearer 630 than 560
	if !slices.Equal(got, want) {
		t.Fatalf("cuts %v, want %v", got, want)
	}
}
