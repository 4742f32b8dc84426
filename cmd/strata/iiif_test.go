package main

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/node/app"
)

// iiifValidatorVersion is the IIIF community's image API validator the
// acceptance test runs (PyPI iiif-validator).
const iiifValidatorVersion = "1.0.5"

// iiifTestID is the identifier under which the validator expects its test
// image (testdata/iiif/README.md).
const iiifTestID = "67352ccc-d1b0-11e1-89ae-279075081939"

// iiifLevel2Tests is how many tests iiif-validate.py 1.0.5 runs for IIIF
// Image API 3.0 at level 2: a run of fewer did not test what it claims.
const iiifLevel2Tests = 33

// TestIIIFValidator is the acceptance test of the IIIF endpoint: a real
// strata serve holding the validator's test image passes every level-2
// test of the IIIF community's validator (iiif-validate.py --version 3.0
// --level 2). STRATA_IIIF_TESTS=1 runs it (make test sets it); it
// pip-installs the validator into .cache/iiif-venv where missing.
func TestIIIFValidator(t *testing.T) {
	if os.Getenv("STRATA_IIIF_TESTS") == "" {
		t.Skip("STRATA_IIIF_TESTS=1 runs the IIIF validator (make test sets it)")
	}
	py, validate := iiifValidator(t)
	data := t.TempDir()
	base, stop := startServe(t, smallConfig(data), app.Options{})
	defer stop()
	body, err := os.ReadFile(filepath.Join("testdata", "iiif", iiifTestID+".png"))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("PUT", base+"/images/"+iiifTestID, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+readToken(t, data))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d", resp.StatusCode)
	}
	u, _ := url.Parse(base)
	cmd := exec.Command(py, validate, "--server", u.Host, "--prefix", "iiif/3", "--identifier", iiifTestID,
		"--version", "3.0", "--level", "2")
	out, err := cmd.CombinedOutput()
	t.Logf("iiif-validate.py --version 3.0 --level 2:\n%s", out)
	m := regexp.MustCompile(`Done \((\d+) tests, (\d+) failures\)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("the validator failed: %v", err)
	}
	if n, _ := strconv.Atoi(string(m[1])); n != iiifLevel2Tests || string(m[2]) != "0" {
		t.Fatalf("%s tests, %s failures; want %d tests, 0 failures", m[1], m[2], iiifLevel2Tests)
	}
}

// iiifValidator returns the Python interpreter of a virtual environment
// under the repository's .cache holding iiif-validator, installing it
// there where missing, and the path of its iiif-validate.py.
func iiifValidator(t *testing.T) (python, script string) {
	t.Helper()
	venv, err := filepath.Abs(filepath.Join("..", "..", ".cache", "iiif-venv-"+iiifValidatorVersion))
	if err != nil {
		t.Fatal(err)
	}
	python, script = filepath.Join(venv, "bin", "python"), filepath.Join(venv, "bin", "iiif-validate.py")
	if _, err := os.Stat(script); err == nil {
		return python, script
	}
	py3, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("the IIIF validator needs python3")
	}
	t.Logf("installing iiif-validator==%s into %s", iiifValidatorVersion, venv)
	for _, args := range [][]string{
		{py3, "-m", "venv", venv},
		{python, "-m", "pip", "install", "--quiet", "iiif-validator==" + iiifValidatorVersion},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	return python, script
}

// TestServeIIIFBounds: the [images] IIIF keys reach the handler of a real
// server (maxArea in info.json, a 400 beyond it, a 413 for a request that
// would decode a variant above iiif_max_decode_pixels), and a derived
// response is kept in the tier engine: the second request is a RAM hit.
func TestServeIIIFBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server")
	}
	data := t.TempDir()
	cfg := smallConfig(data)
	cfg.Images.IIIFMaxArea, cfg.Images.IIIFMaxDecodePixels = 300_000, 400_000
	base, stop := startServe(t, cfg, app.Options{})
	defer stop()
	body, err := os.ReadFile(filepath.Join("testdata", "iiif", iiifTestID+".png"))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("PUT", base+"/images/v", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+readToken(t, data))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %v %v", resp, err)
	}
	get := func(path string) (*http.Response, []byte) {
		t.Helper()
		resp, err := http.Get(base + "/iiif/3/v/" + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	if _, b := get("info.json"); !bytes.Contains(b, []byte(`"maxArea": 300000`)) || !bytes.Contains(b, []byte(`"profile": "level2"`)) {
		t.Errorf("info.json: %s", b)
	}
	for path, want := range map[string]int{
		"full/max/0/default.jpg":         200, // 547x547, scaled to maxArea, from the 600x600 variant
		"full/600,/0/default.jpg":        400, // above maxArea
		"0,0,500,500/500,/0/default.jpg": 413, // needs the 1000x1000 variant
		"0,0,500,500/max/0/default.jpg":  200, // 300x300: what the 600x600 variant holds
		"0,0,500,500/200,/0/default.jpg": 200,
	} {
		if resp, b := get(path); resp.StatusCode != want {
			t.Errorf("%s: %d (%d bytes), want %d", path, resp.StatusCode, len(b), want)
		}
	}
	var tiers []string
	for range 2 {
		resp, _ := get("100,100,300,300/150,/90/gray.jpg")
		tiers = append(tiers, resp.Header.Get("X-Strata-Tier")+" "+resp.Header.Get("X-Strata-Variant"))
	}
	if tiers[0] != "render small" || tiers[1] != "ram small" {
		t.Errorf("tiers %q, want a render from small, then a RAM hit", tiers)
	}
	req, _ = http.NewRequest("GET", base+"/iiif/3/v/full/50,/0/default.jpg", nil)
	req.Header.Set("Origin", "https://viewer.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if exp := resp.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(exp, "X-Strata-Variant") || !strings.Contains(exp, "Link") {
		t.Errorf("a viewer on another origin cannot read X-Strata-Variant and Link: %q", exp)
	}
}
