package app

import (
	"os"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/media/mediatest"
)

// A title uploaded over HTTP is in the catalog as soon as the upload is
// answered, though the catalog was read at start, less than its TTL
// before.
func TestUploadedTitleListedAtOnce(t *testing.T) {
	mediatest.Require(t)
	video := mediatest.Video(t, "nob-200k.mp4")
	cfg := testConfig(t)
	cfg.AdminToken = "tok"
	cfg.Images.Disabled = true
	_, base := serveNode(t, cfg)
	f, err := os.Open(video)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	resp, body := httpapitest.Do(t, "POST", base+"/videos/fresh?segment_duration=1", f,
		append(httpapitest.Bearer("tok"), "Content-Type", "video/mp4")...)
	if resp.StatusCode != 201 {
		t.Fatalf("upload: %d %s", resp.StatusCode, body)
	}
	if _, body := get(t, base+"/videos"); !strings.Contains(string(body), `"fresh"`) {
		t.Fatalf("the catalog does not list the uploaded title: %.300s", body)
	}
	// Its details name what packaging found.
	if resp, body := get(t, base+"/videos/fresh"); resp.StatusCode != 200 || !strings.Contains(string(body), `"codec": "avc1.`) ||
		!strings.Contains(string(body), `"hls": "/videos/fresh/master.m3u8"`) || !strings.Contains(string(body), `"bitrate_bps"`) {
		t.Fatalf("GET /videos/fresh: %d %.600s", resp.StatusCode, body)
	}
}
