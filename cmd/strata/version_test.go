package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/app"
)

// strata --version and strata version print the build as Go's build
// information names it (the same line the start banner begins with and
// strata_build_info's labels carry); version --json its fields.
func TestVersion(t *testing.T) {
	want := "strata " + httpapi.ReadBuild().String() + "\n"
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 || out.String() != want {
			t.Errorf("strata %s: exit %d, %q (stderr %q), want %q", strings.Join(args, " "), code, out.String(), errb.String(), want)
		}
	}
	var out bytes.Buffer
	var b httpapi.Build
	if code := run([]string{"version", "--json"}, &out, &out); code != 0 || json.Unmarshal(out.Bytes(), &b) != nil || b != httpapi.ReadBuild() {
		t.Errorf("strata version --json: exit %d, %s", code, out.String())
	}
	var banner bytes.Buffer
	printStart(&banner, app.Description{}, "text")
	if first, _, _ := strings.Cut(banner.String(), "\n"); first != "strata serve "+httpapi.ReadBuild().String() {
		t.Errorf("the banner begins %q", first)
	}
}
