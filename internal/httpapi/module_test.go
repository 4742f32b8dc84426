package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// testModule mounts a public and an admin route, a stats section and a
// counter.
type testModule struct {
	name    string
	section func() any
	counter prometheus.Counter
}

func (t testModule) Mount(m *Mounter) {
	m.Handle("GET /"+t.name, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "plain "+t.name+" failure", http.StatusTeapot)
	}))
	m.HandleAdmin("POST /"+t.name, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Write(w, http.StatusOK, "no-store", map[string]string{"ok": t.name}) //nolint:errcheck
	}))
	m.Stats(t.name, t.section)
	if t.counter != nil {
		m.Metrics(t.counter)
	}
}

func newTestAPI(t *testing.T, mods ...Module) *httptest.Server {
	t.Helper()
	a := New(Options{AdminToken: "tok", Logger: slog.New(slog.DiscardHandler)})
	if err := a.Mount(mods...); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(a.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func request(t *testing.T, method, url, token string) (*http.Response, []byte) {
	t.Helper()
	if token == "" {
		return httpapitest.Do(t, method, url, nil)
	}
	return httpapitest.Do(t, method, url, nil, httpapitest.Bearer(token)...)
}

func TestModulesMountRoutesStatsMetrics(t *testing.T) {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_things_total", Help: "Things."})
	c.Add(3)
	ts := newTestAPI(t,
		ModuleFunc(func(m *Mounter) { m.Stats("", func() any { return struct{ A, B int }{1, 2} }) }),
		testModule{name: "x", section: func() any { return []int{7} }, counter: c})
	resp, b := request(t, "GET", ts.URL+"/stats", "")
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/stats: %d %s %v", resp.StatusCode, b, err)
	}
	if st["A"] != 1.0 || st["B"] != 2.0 || len(st["x"].([]any)) != 1 || len(st) != 3 {
		t.Fatalf("/stats merged %v", st)
	}
	if _, b := request(t, "GET", ts.URL+"/metrics", ""); !strings.Contains(string(b), "test_things_total 3") {
		t.Fatalf("/metrics lacks the module's counter:\n%.500s", b)
	}
	if resp, b := request(t, "POST", ts.URL+"/x", "tok"); resp.StatusCode != 200 || !strings.Contains(string(b), `"ok": "x"`) {
		t.Fatalf("admin route with the token: %d %s", resp.StatusCode, b)
	}
}

func TestEveryErrorIsAProblem(t *testing.T) {
	ts := newTestAPI(t, testModule{name: "x", section: func() any { return 1 }})
	long := strings.Repeat("q", 3000)
	for _, c := range []struct {
		method, path, token string
		code                int
	}{
		{"GET", "/x", "", http.StatusTeapot}, // http.Error inside a handler
		{"POST", "/x", "", http.StatusUnauthorized},
		{"POST", "/x", "bad", http.StatusUnauthorized},
		{"GET", "/nothing/" + long, "", http.StatusNotFound},
		{"PUT", "/stats", "", http.StatusMethodNotAllowed},
	} {
		resp, b := request(t, c.method, ts.URL+c.path, c.token)
		p, err := ReadProblem(resp, b)
		if resp.StatusCode != c.code || err != nil || p.Detail == "" {
			t.Errorf("%s %.40s: %d, want %d: %v", c.method, c.path, resp.StatusCode, c.code, err)
		}
		if strings.Contains(p.Detail, long) {
			t.Errorf("%s: the detail echoes the whole path", c.method)
		}
	}
	resp, _ := request(t, "PUT", ts.URL+"/stats", "")
	if resp.Header.Get("Allow") == "" {
		t.Error("405 without Allow")
	}
}

func TestAdminDisabledWithoutToken(t *testing.T) {
	a := New(Options{Logger: slog.New(slog.DiscardHandler)})
	if err := a.Mount(testModule{name: "x", section: func() any { return 1 }}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(a.Handler())
	defer ts.Close()
	if resp, b := request(t, "POST", ts.URL+"/x", ""); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("admin route without a configured token: %d %s", resp.StatusCode, b)
	}
}

func TestStatsErrors(t *testing.T) {
	a := New(Options{Logger: slog.New(slog.DiscardHandler)})
	if err := a.Mount(testModule{name: "x", section: func() any { return 1 }}, testModule{name: "y", section: func() any { return 2 }}); err != nil {
		t.Fatal(err)
	}
	m := ModuleFunc(func(m *Mounter) { m.Stats("x", func() any { return 3 }) })
	if err := a.Mount(m); err == nil {
		t.Fatal("a section mounted twice is not an error")
	}
	if err := a.Mount(ModuleFunc(func(m *Mounter) { m.Stats("bad", func() any { return func() {} }) })); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Stats(); err == nil {
		t.Fatal("an unencodable section is not an error")
	}
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/stats", nil))
	if rec.Code != 500 || rec.Header().Get("Content-Type") != ProblemType {
		t.Fatalf("/stats with a broken section: %d %s", rec.Code, rec.Header())
	}
	top := New(Options{})
	top.Mount(ModuleFunc(func(m *Mounter) { m.Stats("", func() any { return []int{1} }) })) //nolint:errcheck
	if _, err := top.Stats(); err == nil {
		t.Fatal("a top-level section that is not an object is not an error")
	}
}

func TestMetricsConflict(t *testing.T) {
	a := New(Options{})
	c := func() prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "dup_total", Help: "h"})
	}
	if err := a.Mount(testModule{name: "x", section: func() any { return 1 }, counter: c()}); err != nil {
		t.Fatal(err)
	}
	if err := a.Mount(testModule{name: "y", section: func() any { return 1 }, counter: c()}); err == nil {
		t.Fatal("two collectors of one metric are not an error")
	}
}

func TestClip(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "abcdefgh": "abcd...", "ééééé": "éé..."} {
		if got := Clip(in, 7); got != want {
			t.Errorf("Clip(%q, 7) = %q, want %q", in, got, want)
		}
	}
}

func TestContentType(t *testing.T) {
	for name, want := range map[string]string{
		"1.m4s": "video/iso.segment", "manifest.MPD": "application/dash+xml", "a.webm": "video/webm",
		"x.unknownext": "application/octet-stream",
	} {
		if got := ContentType(name); got != want {
			t.Errorf("ContentType(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestEncodedSlashRefused: %2F inside a segment is refused with 400
// before any route sees it, so /x/a%2Fb is no alias of /x/a/b; other
// escapes still reach the route.
func TestEncodedSlashRefused(t *testing.T) {
	var got []string
	ts := newTestAPI(t, ModuleFunc(func(m *Mounter) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = append(got, r.PathValue("a")+"|"+r.PathValue("b"))
			Write(w, http.StatusOK, "no-store", "ok") //nolint:errcheck
		})
		m.Handle("GET /x/{a}/{b}", h)
		m.Handle("GET /x/{a}", h)
	}))
	for path, code := range map[string]int{"/x/a%2Fb": 400, "/x/a%2fb/c": 400, "/x/a/b%2F": 400,
		"/x/a/b": 200, "/x/a%20b": 200} {
		resp, body := request(t, "GET", ts.URL+path, "")
		if resp.StatusCode != code {
			t.Errorf("GET %s: %d, want %d (routes saw %q)", path, resp.StatusCode, code, got)
		}
		if _, err := ReadProblem(resp, body); code == 400 && err != nil {
			t.Errorf("GET %s: %v", path, err)
		}
	}
}
