package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// A build prints as its version, its revision (short, marked modified)
// with the commit's time, and the Go version; without a revision, the
// version and Go's alone.
func TestBuildString(t *testing.T) {
	b := Build{Version: "v0.0.0-20261127115317-d684f3769961+dirty", Revision: "d684f376996106a6cb001021324489366687a363",
		Modified: true, Time: "2026-11-27T11:53:17Z", GoVersion: "go1.26.8"}
	if got, want := b.String(), "v0.0.0-20261127115317-d684f3769961+dirty (revision d684f3769961 modified, 2026-11-27T11:53:17Z, go1.26.8)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got, want := (Build{Version: "(devel)", Revision: "unknown", GoVersion: "go1.26.8"}).String(), "(devel) (go1.26.8)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// strata_build_info names the build ReadBuild reads, and a version set at
// link time (buildVersion) wins over Go's.
func TestBuildInfoMetric(t *testing.T) {
	defer func(v string) { buildVersion = v }(buildVersion)
	buildVersion = "v9.8.7"
	b := ReadBuild()
	if b.Version != "v9.8.7" {
		t.Fatalf("ReadBuild: %+v, want the link-time version", b)
	}
	a := New(Options{})
	if err := a.Mount(); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{`version="v9.8.7"`, `revision="` + b.Revision, `goversion="` + b.GoVersion + `"`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %s in strata_build_info", want)
		}
	}
}
