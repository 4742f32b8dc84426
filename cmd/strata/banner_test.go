package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/banner"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/app"
)

// With --log-format json the start banner is one JSON log line with the
// text banner's fields (continuation lines joined), the build and the
// URL, which banner.URL reads; as text, it is the aligned lines, the
// listening line among them.
func TestStartBannerFormats(t *testing.T) {
	d := app.Description{Data: "/var/lib/strata", RAMBytes: 256 << 20, URL: "http://127.0.0.1:8080",
		Flash:    app.FlashDescription{Path: "/var/lib/strata/flash.cache", Size: 1 << 30, WriteHint: "long"},
		Capacity: app.CapacityDescription{Dir: "/var/lib/strata/videos", Titles: 2}, AdminTokenFile: "/var/lib/strata/admin.token",
		Files: app.FilesDescription{Dir: "/var/lib/strata/files", DiskBandwidth: 100e6, Flash: "/var/lib/strata/files.flash", FlashSize: 1 << 30, FlashBandwidth: 400e6}}
	var out bytes.Buffer
	printStart(&out, d, "json")
	if n := strings.Count(out.String(), "\n"); n != 1 {
		t.Fatalf("the JSON banner is %d lines:\n%s", n, out.String())
	}
	var rec map[string]any
	if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if rec["level"] != "INFO" || rec["msg"] != banner.JSONMessage || rec["url"] != d.URL || rec["data"] != d.Data ||
		rec["version"] != httpapi.ReadBuild().Version || rec["ram"] != "256 MiB" ||
		!strings.Contains(rec["flash"].(string), "; write hint: long") || !strings.Contains(rec["admin"].(string), "admin.token") {
		t.Errorf("JSON banner %v", rec)
	}
	if u, ok := banner.URL(out.String()); !ok || u != d.URL {
		t.Errorf("banner.URL of the JSON line: %q %v", u, ok)
	}

	out.Reset()
	printStart(&out, d, "text")
	lines := strings.Split(out.String(), "\n")
	if !strings.HasPrefix(lines[0], "strata serve ") || !strings.Contains(out.String(), "\n  data       /var/lib/strata\n") ||
		!strings.Contains(out.String(), "\n             write hint: long\n") || strings.Contains(out.String(), "{") ||
		!strings.Contains(out.String(), "streams up to 100MB/s from disk; flash copies in /var/lib/strata/files.flash (1 GiB), up to 400MB/s") {
		t.Errorf("text banner:\n%s", out.String())
	}
	found := false
	for _, l := range lines {
		if u, ok := banner.URL(l); ok && u == d.URL {
			found = true
		}
	}
	if !found {
		t.Errorf("no listening line in the text banner:\n%s", out.String())
	}
}
