package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/media"
	"github.com/strata-media/strata/internal/media/mediatest"
	"github.com/strata-media/strata/internal/media/player"
	"github.com/strata-media/strata/internal/node/app"
	"github.com/strata-media/strata/internal/storage/origin"
)

const videoToken = "video-test-token"

// startVideoServe runs the real strata serve (flash tier on) with an
// admin token, and checks the video routes are wired in.
func startVideoServe(t *testing.T) (string, string, func()) {
	t.Helper()
	return startVideoServeIn(t, t.TempDir())
}

// startVideoServeIn is startVideoServe on the data directory data.
func startVideoServeIn(t *testing.T, data string) (string, string, func()) {
	t.Helper()
	cfg := smallConfig(data)
	cfg.AdminToken = videoToken
	url, stop := startServe(t, cfg, app.Options{})
	resp, err := http.Post(url+"/videos/probe", "video/mp4", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		stop()
		t.Fatalf("POST /videos/{video} answers %d without a token, want 401: is setupVideo called from serve (serve.go)?", resp.StatusCode)
	}
	return url, cfg.Capacity, stop
}

// upload posts files as a multipart body (form name = rendition name).
func upload(t *testing.T, url, video string, files map[string]string, query string) (int, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, path := range files {
		w, _ := mw.CreateFormFile(name, filepath.Base(path))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	mw.Close()
	return postVideo(t, url+"/videos/"+video+query, &buf, mw.FormDataContentType(), videoToken)
}

func postVideo(t *testing.T, url string, body io.Reader, ct, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, body)
	req.Header.Set("Content-Type", ct)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 400 {
		if _, err := httpapi.ReadProblem(resp, b); err != nil {
			t.Errorf("POST %s: %v", url, err)
		}
	}
	return resp.StatusCode, string(b)
}

// uploadTestTitles uploads the B-pyramid ladder (two renditions), the
// plain-B title and the title without B pictures or audio, with 2 s
// segments, and returns their ids.
func uploadTestTitles(t *testing.T, url string) []string {
	titles := map[string]map[string]string{
		"pyramid": {"300k": mediatest.Video(t, "pyr-300k.mp4"), "600k": mediatest.Video(t, "pyr-600k.mp4")},
		"flat":    {"file": mediatest.Video(t, "flat-300k.mp4")},
		"nob":     {"200k": mediatest.Video(t, "nob-200k.mp4")},
	}
	var ids []string
	for id, files := range titles {
		if code, body := upload(t, url, id, files, "?segment_duration=2"); code != http.StatusCreated {
			t.Fatalf("upload %s: %d %s", id, code, body)
		}
		ids = append(ids, id)
	}
	return ids
}

func catalogTitle(t *testing.T, url, id string) origin.Title {
	t.Helper()
	resp, err := http.Get(url + "/videos")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var cat struct{ Titles []origin.Title }
	json.NewDecoder(resp.Body).Decode(&cat)
	for _, ti := range cat.Titles {
		if ti.ID == id {
			return ti
		}
	}
	return origin.Title{}
}

// ffmpegDecode decodes every stream of url; any output at -v error fails.
func ffmpegDecode(t *testing.T, url string) {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", url, "-map", "0", "-f", "null", "-").CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("ffmpeg -v error -i %s -f null -: %v\n%s", url, err, out)
	}
}

// pictTypes returns the picture types ffprobe decodes from url.
func pictTypes(t *testing.T, url string) map[string]int {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pict_type",
		"-of", "csv=p=0", url).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", url, err)
	}
	types := map[string]int{}
	for _, f := range strings.Fields(string(out)) {
		types[strings.TrimSuffix(f, ",")]++
	}
	return types
}

// TestVideoFFmpeg runs the real server, uploads generated titles and has
// ffmpeg decode every manifest, rendition and play level over HTTP, and
// ffprobe confirm that L4 and L5 hold only I pictures.
func TestVideoFFmpeg(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end video test")
	}
	mediatest.Require(t)
	url, _, stop := startVideoServe(t)
	defer stop()
	for _, id := range uploadTestTitles(t, url) {
		ti := catalogTitle(t, url, id)
		if len(ti.Renditions) == 0 {
			t.Fatalf("%s is not in the catalog", id)
		}
		for _, f := range ti.Files {
			if strings.HasSuffix(f, ".mpd") || strings.HasSuffix(f, ".m3u8") {
				ffmpegDecode(t, fmt.Sprintf("%s/videos/%s/%s", url, id, f))
			}
		}
		for _, r := range ti.Renditions {
			pl := fmt.Sprintf("%s/videos/%s/%s/playlist.m3u8", url, id, r.ID)
			ffmpegDecode(t, pl)
			if strings.HasSuffix(r.ID, "-L4") || strings.HasSuffix(r.ID, "-L5") {
				types := pictTypes(t, pl)
				if len(types) != 1 || types["I"] == 0 {
					t.Errorf("%s/%s: picture types %v, want only I", id, r.ID, types)
				}
			}
		}
	}
}

// TestVideoUploads checks, against the real server, that segments pass
// through the tier engine, that malformed or unauthorized uploads are
// refused with nothing stored, and that a replaced title is served new.
func TestVideoUploads(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end video test")
	}
	mediatest.Require(t)
	url, capacity, stop := startVideoServe(t)
	defer stop()
	files := map[string]string{"200k": mediatest.Video(t, "nob-200k.mp4")}
	if code, body := upload(t, url, "title", files, "?segment_duration=1"); code != http.StatusCreated {
		t.Fatalf("upload: %d %s", code, body)
	}
	seg := url + "/videos/title/200k-L4/1.m4s"
	first, tier1 := get(t, seg)
	_, tier2 := get(t, seg)
	if tier1 != "origin" || tier2 != "ram" {
		t.Fatalf("tiers %s then %s, want origin then ram", tier1, tier2)
	}
	text := filepath.Join(t.TempDir(), "x.mp4")
	os.WriteFile(text, []byte("not a video at all"), 0o644)
	for _, c := range []struct {
		name  string
		code  int
		token string
		files map[string]string
	}{
		{"no token", 401, "", files},
		{"wrong token", 401, "nope", files},
		{"not mp4", 400, videoToken, map[string]string{"x": text}},
		{"mismatched", 400, videoToken, map[string]string{"a": mediatest.Video(t, "pyr-300k.mp4"), "b": mediatest.Video(t, "short.mp4")}},
	} {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for n, p := range c.files {
			w, _ := mw.CreateFormFile(n, "f.mp4")
			b, _ := os.ReadFile(p)
			w.Write(b)
		}
		mw.Close()
		code, body := postVideo(t, url+"/videos/bad", &buf, mw.FormDataContentType(), c.token)
		if code != c.code || !strings.Contains(body, `"detail"`) {
			t.Errorf("%s: %d %s, want %d", c.name, code, body, c.code)
		}
	}
	ents, _ := os.ReadDir(capacity)
	for _, e := range ents {
		if e.Name() == "bad" || strings.HasPrefix(e.Name(), ".ingest-") {
			t.Fatalf("capacity holds %s after refused uploads", e.Name())
		}
	}
	if catalogTitle(t, url, "bad").ID != "" {
		t.Fatal("a refused title is in the catalog")
	}
	files = map[string]string{"200k": mediatest.Video(t, "pyr-300k.mp4")}
	if code, body := upload(t, url, "title", files, "?segment_duration=1"); code != http.StatusOK {
		t.Fatalf("replacing upload: %d %s", code, body)
	}
	if second, _ := get(t, seg); bytes.Equal(first, second) {
		t.Fatal("the replaced title's cached segment is still served")
	}
}

func get(t *testing.T, url string) ([]byte, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return b, resp.Header.Get("X-Strata-Tier")
}

// TestVideoBrowser plays a title in headless Chromium with dash.js and
// hls.js (tests/browser/play.test.mjs): normal play, the reduced level L3
// and fast-forward through the trick level L4, and DASH and HLS from a
// page served by another origin (CORS). It runs when
// STRATA_BROWSER_TESTS is set (make test-browser, which installs Chromium
// and the npm packages).
func TestVideoBrowser(t *testing.T) {
	if os.Getenv("STRATA_BROWSER_TESTS") == "" {
		t.Skip("set STRATA_BROWSER_TESTS=1 (make test-browser) to play streams in Chromium")
	}
	mediatest.Require(t)
	// A synthetic load-test library whose titles sort before the real
	// one: the watch page must still open on the title that plays.
	data := t.TempDir()
	lib, _ := json.Marshal(app.SyntheticLibrary{Titles: 3, MaxLengthS: 20, SegmentDurationS: 2, Seed: 1, Prefix: "a-synthetic-"})
	if err := os.WriteFile(filepath.Join(data, "synthetic.json"), lib, 0o644); err != nil {
		t.Fatal(err)
	}
	url, _, stop := startVideoServeIn(t, data)
	defer stop()
	files := map[string]string{"300k": mediatest.Video(t, "pyr-300k.mp4"), "600k": mediatest.Video(t, "pyr-600k.mp4")}
	if code, body := upload(t, url, "browser", files, "?segment_duration=2"); code != http.StatusCreated {
		t.Fatalf("upload: %d %s", code, body)
	}
	// The player page from another origin (another port of 127.0.0.1),
	// playing the media from Strata through CORS.
	pages := httpapi.New(httpapi.Options{})
	if err := pages.Mount(player.Module); err != nil {
		t.Fatal(err)
	}
	other := httptest.NewServer(pages.Handler())
	defer other.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--test", "play.test.mjs")
	cmd.Dir = filepath.Join("..", "..", "tests", "browser")
	cmd.Env = append(os.Environ(), "STRATA_URL="+url, "STRATA_VIDEO=browser", "STRATA_PAGE_URL="+other.URL)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test play.test.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("browser tests failed: %v", err)
	}
	// The players' segments came off the Front (our HTTP/1.1 server of
	// plain reads), and their connections came back to it after the
	// manifests and playlists net/http answered.
	m := metricsText(t, url)
	for _, event := range []string{"answer", "reclaim"} {
		v := regexp.MustCompile(`strata_http_front_events_total\{event="` + event + `"\} (\d+)`).FindStringSubmatch(m)
		if v == nil || v[1] == "0" {
			t.Errorf("the Front's %s count after the players: %v", event, v)
		} else {
			t.Logf("the Front's %s count after the players: %s", event, v[1])
		}
	}
}

// TestIngestVideoCLI runs strata ingest video into a data directory, then
// with a bad file (refused, nothing stored), then with --ladder.
func TestIngestVideoCLI(t *testing.T) {
	mediatest.Require(t)
	data := t.TempDir()
	var out, errb bytes.Buffer
	err := runIngestVideo([]string{"--id", "cli", "--data", data, "--segment-duration", "1s", "--levels", "L4",
		"--block-size", "64KiB", "low=" + mediatest.Video(t, "nob-200k.mp4")}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errb.String())
	}
	for _, want := range []string{"frame store:", "low-L4:", "created title cli"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	for _, f := range []string{"manifest.mpd", "master-L4.m3u8", "low/1.m4s", "low-L4/iframes.m3u8", ".frames/low/index"} {
		if _, err := os.Stat(filepath.Join(data, "videos", "cli", f)); err != nil {
			t.Error(err)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.mp4")
	os.WriteFile(bad, []byte("nope"), 0o644)
	if err := runIngestVideo([]string{"--id", "bad", "--data", data, bad}, io.Discard, io.Discard); err == nil {
		t.Fatal("a bad file was ingested")
	}
	if ents, _ := os.ReadDir(filepath.Join(data, "videos")); len(ents) != 1 {
		t.Fatalf("capacity holds %d entries after a refused ingest", len(ents))
	}
	if testing.Short() {
		return
	}
	out.Reset()
	if err := runIngestVideo([]string{"--id", "ladder", "--data", data, "--ladder", "--levels", "none",
		mediatest.Video(t, "flat-300k.mp4")}, &out, io.Discard); err != nil {
		t.Fatalf("--ladder: %v\n%s", err, out.String())
	}
	for _, r := range []string{"200k", "400k", "700k", "1500k", "2000k"} {
		if _, err := os.Stat(filepath.Join(data, "videos", "ladder", r, media.MasterName)); err == nil {
			t.Errorf("unexpected file")
		}
		if _, err := os.Stat(filepath.Join(data, "videos", "ladder", r, "init.mp4")); err != nil {
			t.Errorf("ladder rendition %s: %v", r, err)
		}
	}
}
