package httpapi

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// TestReloadCORSAndToken: the setters change what the next requests get,
// on an API already serving, CORS off to on and back, and the token.
func TestReloadCORSAndToken(t *testing.T) {
	a := New(Options{AdminToken: "old", Logger: slog.New(slog.DiscardHandler)})
	if err := a.Mount(ModuleFunc(func(m *Mounter) {
		m.Handle("GET /media/{name}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("x")) }))
		m.HandleAdmin("POST /admin/x", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	})); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(a.Handler())
	defer ts.Close()
	allowed := func() string {
		resp, _ := httpapitest.Do(t, "GET", ts.URL+"/media/a", nil, "Origin", page)
		return resp.Header.Get("Access-Control-Allow-Origin")
	}
	admin := func(tok string) int {
		resp, _ := httpapitest.Do(t, "POST", ts.URL+"/admin/x", nil, "Authorization", "Bearer "+tok)
		return resp.StatusCode
	}
	if got := allowed(); got != "" {
		t.Fatalf("CORS off, yet Allow-Origin %q", got)
	}
	a.SetCORSOrigins([]string{page})
	if got := allowed(); got != page {
		t.Fatalf("after SetCORSOrigins, Allow-Origin %q", got)
	}
	a.SetCORSOrigins(nil)
	if got := allowed(); got != "" {
		t.Fatalf("CORS turned off again, yet Allow-Origin %q", got)
	}
	if admin("old") != http.StatusOK || admin("new") != http.StatusUnauthorized {
		t.Fatal("the first token does not work as configured")
	}
	a.SetAdminToken("new")
	if admin("old") != http.StatusUnauthorized || admin("new") != http.StatusOK {
		t.Fatal("after SetAdminToken, the old token works or the new one does not")
	}
	a.SetAdminToken("")
	if got := admin("new"); got != http.StatusForbidden {
		t.Fatalf("no token: %d, want 403", got)
	}
}
