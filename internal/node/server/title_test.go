package server

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/media"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
)

// packagedMeta is a strata.json as ingest writes it (media.writeMeta).
const packagedMeta = `{
  "segment_duration_s": 2,
  "renditions": {"700k": {"bandwidth": 712000}, "700k-L4": {"bandwidth": 90000}, "audio": {"bandwidth": 128000}},
  "media": {
    "version": 1,
    "duration_s": 4.0,
    "renditions": [
      {"name": "700k", "codec": "avc1.64001f", "width": 1280, "height": 720, "frame_rate": "25", "bandwidth": 712000, "peak_bandwidth": 900000, "segments": 2, "duration_s": 4},
      {"name": "700k-L4", "of": "700k", "level": 4, "codec": "avc1.64001f", "width": 1280, "height": 720, "bandwidth": 90000, "peak_bandwidth": 100000, "segments": 2, "duration_s": 4},
      {"name": "audio", "codec": "mp4a.40.2", "bandwidth": 128000, "peak_bandwidth": 130000, "segments": 2, "duration_s": 4}
    ],
    "levels": ["L1", "L4"]
  }
}
`

// titleServer serves a capacity directory holding one packaged title,
// "film", with the videos module and the upload module mounted as strata
// serve mounts them (admin token "sekrit").
func titleServer(t *testing.T) string {
	t.Helper()
	root := packagedDir(t)
	dir, err := origin.NewDir(root, origin.DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	eng, err := engine.New(engine.Options{Tier: tier.Options{RAMBytes: 1 << 20, BlockSize: 256 << 10}, Logger: log},
		device.NewMem(16<<20, 4096), dir)
	if err != nil {
		t.Fatal(err)
	}
	api := httpapi.New(httpapi.Options{AdminToken: "sekrit", Logger: log})
	ing := media.NewIngester(root, media.IngestOptions{})
	if err := api.Mount(NewVideos(eng, dir, Options{Logger: log}), ing.Module(0)); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(api.Handler())
	t.Cleanup(func() { ts.Close(); eng.Close() })
	return ts.URL
}

// packagedDir returns a capacity directory holding one packaged title,
// "film", as ingest lays it out.
func packagedDir(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"strata.json": packagedMeta, "manifest.mpd": "<MPD/>", "master.m3u8": "#EXTM3U\n",
		"manifest-L4.mpd": "<MPD/>", "master-L4.m3u8": "#EXTM3U\n",
		"700k/init.mp4": "i", "700k/playlist.m3u8": "#EXTM3U\n", "700k/1.m4s": "a", "700k/2.m4s": "b",
		"700k-L4/init.mp4": "i", "700k-L4/iframes.m3u8": "#EXTM3U\n", "700k-L4/playlist.m3u8": "#EXTM3U\n",
		"700k-L4/1.m4s": "a", "700k-L4/2.m4s": "b",
		"audio/init.mp4": "i", "audio/playlist.m3u8": "#EXTM3U\n", "audio/1.m4s": "a", "audio/2.m4s": "b",
	}
	for name, data := range files {
		p := filepath.Join(root, "film", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// GET /videos/{id} answers the title's details: its renditions with
// bitrate, resolution and codec, its levels, durations and the URLs of
// its manifests and playlists; HEAD answers the same without a body; an
// unknown title is a 404 problem; POST to the same path is still an
// upload.
func TestTitleDetails(t *testing.T) {
	base := titleServer(t)
	resp, body := httpapitest.Do(t, "GET", base+"/videos/film", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /videos/film: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var d TitleDetails
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	if d.ID != "film" || d.Duration != 4 || d.SegmentDuration != 2 || strings.Join(d.Levels, ",") != "L1,L4" || d.Modified.IsZero() {
		t.Errorf("details %+v", d)
	}
	want := []LevelManifests{
		{"L1", "/videos/film/manifest.mpd", "/videos/film/master.m3u8"},
		{"L4", "/videos/film/manifest-L4.mpd", "/videos/film/master-L4.m3u8"},
	}
	if len(d.Manifests) != 2 || d.Manifests[0] != want[0] || d.Manifests[1] != want[1] || len(d.Files) != 0 {
		t.Errorf("manifests %+v, files %v", d.Manifests, d.Files)
	}
	byID := map[string]RenditionDetails{}
	for _, r := range d.Renditions {
		byID[r.ID] = r
	}
	if r := byID["700k"]; r.Bitrate != 712000 || r.PeakBitrate != 900000 || r.Codec != "avc1.64001f" || r.Width != 1280 ||
		r.Height != 720 || r.Segments != 2 || r.StartNumber != 1 || r.Duration != 4 ||
		r.Init != "/videos/film/700k/init.mp4" || r.Playlist != "/videos/film/700k/playlist.m3u8" ||
		r.Segment != "/videos/film/700k/$Number$.m4s" {
		t.Errorf("rendition 700k: %+v", r)
	}
	if r := byID["700k-L4"]; r.Level != 4 || r.Of != "700k" || r.Playlist != "/videos/film/700k-L4/playlist.m3u8" {
		t.Errorf("rendition 700k-L4: %+v", r)
	}
	if r := byID["audio"]; r.Codec != "mp4a.40.2" || r.Width != 0 || r.Bitrate != 128000 {
		t.Errorf("rendition audio: %+v", r)
	}
	for _, p := range []string{d.Manifests[0].DASH, d.Manifests[1].HLS, byID["700k"].Playlist, byID["audio"].Init} {
		if resp, _ := httpapitest.Do(t, "GET", base+p, nil); resp.StatusCode != 200 {
			t.Errorf("GET %s (a URL of the details): %d", p, resp.StatusCode)
		}
	}

	resp, head := httpapitest.Do(t, "HEAD", base+"/videos/film", nil)
	if resp.StatusCode != 200 || len(head) != 0 || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("HEAD /videos/film: %d, %d bytes", resp.StatusCode, len(head))
	}
	for path, code := range map[string]int{"/videos/nope": 404, "/videos/.hidden": 400} {
		resp, body = httpapitest.Do(t, "GET", base+path, nil)
		if resp.StatusCode != code {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, code)
		}
		checkProblem(t, "GET "+path, resp, body)
	}
	// POST is still the upload (here a body that is no MP4: 400, not 405).
	resp, body = httpapitest.Do(t, "POST", base+"/videos/other", strings.NewReader("not an mp4"),
		append(httpapitest.Bearer("sekrit"), "Content-Type", "video/mp4")...)
	if resp.StatusCode != 400 {
		t.Errorf("POST /videos/other: %d %s", resp.StatusCode, body)
	}
}

// A synthetic title (no strata.json) has details from the catalog alone.
func TestSyntheticTitleDetails(t *testing.T) {
	ts, _, _ := testServer(t)
	resp, body := httpapitest.Do(t, "GET", ts.URL+"/videos/title-0001", nil)
	var d TitleDetails
	if err := json.Unmarshal(body, &d); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET: %d %v %s", resp.StatusCode, err, body)
	}
	if !d.Synthetic || len(d.Renditions) == 0 || d.Renditions[0].Bitrate == 0 || len(d.Manifests) != 1 || d.Manifests[0].DASH == "" {
		t.Errorf("details %+v", d)
	}
}
