package files

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// putAs PUTs data as file id with Content-Type ct (none if empty) and
// returns the answer's status and metadata.
func putAs(t *testing.T, ts *server, id, ct string, data []byte) (int, Meta) {
	t.Helper()
	hdr := httpapitest.Bearer(testToken)
	if ct != "" {
		hdr = append(hdr, "Content-Type", ct)
	}
	resp, body := httpapitest.DoWith(t, ts.client, "PUT", base+"/files/"+id, bytes.NewReader(data), hdr...)
	var m Meta
	if resp.StatusCode == 201 {
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("PUT %s: %v %s", id, err, body)
		}
	}
	return resp.StatusCode, m
}

// A PUT's Content-Type is the file's: stored, answered and served back,
// also after a restart; a type that says nothing of the kind (none,
// octet-stream, curl's form default) leaves it to the extension; one that
// is not a media type is a 400 problem and stores nothing.
func TestPutKeepsContentType(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, ts := testTier(t, Options{})
		data := bytes.Repeat([]byte("x"), 1000)
		for _, c := range []struct{ id, ct, want string }{
			{"talk", "video/webm", "video/webm"},
			{"notes.txt", "text/markdown; charset=UTF-8", "text/markdown; charset=UTF-8"},
			{"a.mp4", "", "video/mp4"},
			{"b.mp4", "application/octet-stream", "video/mp4"},
			{"c.mp4", "application/x-www-form-urlencoded", "video/mp4"},
			{"blob", "", "application/octet-stream"},
		} {
			code, m := putAs(t, ts, c.id, c.ct, data)
			if code != 201 || m.ContentType != c.want {
				t.Errorf("PUT %s as %q: %d, content type %q, want %q", c.id, c.ct, code, m.ContentType, c.want)
			}
			if resp, _ := get(t, ts, c.id, ""); resp.Header.Get("Content-Type") != c.want {
				t.Errorf("GET %s: %q, want %q", c.id, resp.Header.Get("Content-Type"), c.want)
			}
		}
		resp, body := httpapitest.DoWith(t, ts.client, "PUT", base+"/files/bad", bytes.NewReader(data),
			append(httpapitest.Bearer(testToken), "Content-Type", "not a type")...)
		if p, err := httpapi.ReadProblem(resp, body); resp.StatusCode != 400 || err != nil {
			t.Errorf("PUT with a bad Content-Type: %d %+v %v", resp.StatusCode, p, err)
		}
		if resp, _ := get(t, ts, "bad", ""); resp.StatusCode != 404 {
			t.Errorf("the refused upload was stored: GET %d", resp.StatusCode)
		}

		// The sidecar keeps it across a restart.
		tr.Close()
		o := tr.opts
		tr2, err := Open(o)
		if err != nil {
			t.Fatal(err)
		}
		ts2 := serve(t, tr2)
		if resp, _ := get(t, ts2, "talk", ""); resp.Header.Get("Content-Type") != "video/webm" {
			t.Errorf("after a restart GET talk: %q", resp.Header.Get("Content-Type"))
		}
	})
}

// The rate of a file is answered in bytes per second (byte_rate, what a
// stream reserves) and bits per second (bitrate_bps, 8 times as much); a
// sidecar of before byte_rate (its bitrate_bps in bytes per second) is
// not trusted but probed again.
func TestRateUnits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, ts := testTier(t, Options{DefaultBitrate: 400e3})
		code, m := putAs(t, ts, "clip.bin", "", bytes.Repeat([]byte("x"), 1000))
		if code != 201 || m.ByteRate != 400e3 || m.Bitrate != 3200e3 {
			t.Fatalf("PUT: %d, %+v: want byte_rate 400000, bitrate_bps 3200000", code, m)
		}
		var raw map[string]any
		b, err := os.ReadFile(filepath.Join(tr.opts.Dir, "clip.bin.json"))
		if err != nil || json.Unmarshal(b, &raw) != nil || raw["byte_rate"] != 400e3 || raw["bitrate_bps"] != 3200e3 {
			t.Errorf("sidecar %s: %v", b, err)
		}

		// An old sidecar: bitrate_bps meant bytes per second.
		path := filepath.Join(tr.opts.Dir, "old.bin")
		if err := os.WriteFile(path, bytes.Repeat([]byte("y"), 500), 0o644); err != nil {
			t.Fatal(err)
		}
		old := `{"size": 500, "bitrate_bps": 123, "duration_s": 0, "content_type": "x/old"}`
		if err := os.WriteFile(path+".json", []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err = tr.readMeta("old.bin")
		if err != nil || m.ByteRate != 400e3 || m.Bitrate != 3200e3 || m.ContentType != "application/octet-stream" {
			t.Errorf("an old sidecar's meta %+v, %v: want it probed again", m, err)
		}
	})
}
