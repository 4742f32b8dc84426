package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
)

func TestWrite(t *testing.T) {
	rec := httptest.NewRecorder()
	if err := Write(rec, 201, "no-store", map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 201 || rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("code %d, headers %v", rec.Code, rec.Header())
	}
	var m map[string]int
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || m["a"] != 1 {
		t.Fatalf("body %q: %v", rec.Body.String(), err)
	}
	if err := Write(httptest.NewRecorder(), 200, "no-cache", func() {}); err == nil {
		t.Fatal("an unencodable value is not an error")
	}
}
