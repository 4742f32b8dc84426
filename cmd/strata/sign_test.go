package main

import (
	"bytes"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/signedurl"
)

const signConfig = `
[signed_urls]
prefixes = ["/videos/"]
[[signed_urls.keys]]
id = "new"
secret = "the new secret, 16+ bytes"
[[signed_urls.keys]]
id = "old"
secret = "the old secret, 16+ bytes"
`

// strata sign prints a URL the server's verifier accepts, with the first
// key or the one named, for the path or a prefix.
func TestSign(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "strata.toml")
	if err := os.WriteFile(cfg, []byte(signConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := signedurl.NewVerifier([]signedurl.Key{{ID: "new", Secret: "the new secret, 16+ bytes"}, {ID: "old", Secret: "the old secret, 16+ bytes"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args    []string
		kid     string
		checked string
	}{
		{[]string{"http://127.0.0.1:8080/videos/t1/manifest.mpd"}, "new", "/videos/t1/manifest.mpd"},
		{[]string{"--key", "old", "--prefix", "/videos/t1/", "/videos/t1/manifest.mpd"}, "old", "/videos/t1/720p/3.m4s"},
		{[]string{"--expires", time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "/videos/a"}, "new", "/videos/a"},
	} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"sign", "--config", cfg}, c.args...), &out, &errb); code != 0 {
			t.Fatalf("strata sign %v: exit %d: %s", c.args, code, errb.String())
		}
		u, err := url.Parse(strings.TrimSpace(out.String()))
		if err != nil {
			t.Fatal(err)
		}
		if got := u.Query().Get(signedurl.ParamKeyID); got != c.kid {
			t.Errorf("signed with %q, want %q", got, c.kid)
		}
		if err := v.Check(c.checked, u.Query(), time.Now()); err != nil {
			t.Errorf("strata sign %v: %s refused for %s: %v", c.args, u, c.checked, err)
		}
		if err := v.Check(c.checked, u.Query(), time.Now().Add(2*time.Hour)); !errors.Is(err, signedurl.ErrExpired) {
			t.Errorf("strata sign %v: not expired two hours later: %v", c.args, err)
		}
	}
	for _, args := range [][]string{
		{"--key", "missing", "/videos/a"},
		{"--prefix", "/images/", "/videos/a"},
		{"videos/a"},
	} {
		if code := run(append([]string{"sign", "--config", cfg}, args...), &bytes.Buffer{}, &bytes.Buffer{}); code != 2 {
			t.Errorf("strata sign %v: exit %d, want 2", args, code)
		}
	}
}

// strata sign warns on stderr when the prefix does not end at a path
// segment boundary: /videos/demo-000 also grants /videos/demo-0002/.
// It still signs.
func TestSignWarnsPrefixMidSegment(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "strata.toml")
	if err := os.WriteFile(cfg, []byte(signConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		prefix string
		warns  bool
	}{{"/videos/demo-000", true}, {"/videos/demo-000/", false}, {"/videos/demo-000/manifest.mpd", true}} {
		var out, errb bytes.Buffer
		if code := run([]string{"sign", "--config", cfg, "--prefix", c.prefix, "/videos/demo-000/manifest.mpd"}, &out, &errb); code != 0 || out.Len() == 0 {
			t.Fatalf("--prefix %s: exit %d: %s", c.prefix, code, errb.String())
		}
		if warned := strings.Contains(errb.String(), "does not end with '/'"); warned != c.warns {
			t.Errorf("--prefix %s: stderr %q, want a warning: %v", c.prefix, errb.String(), c.warns)
		}
	}
}
