package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
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

// No number of a JSON answer is in scientific notation: encoding/json's
// exponents (an age of 4.9e-8 s, a counter of 1e21) come out as plain
// decimals; strings that look like numbers are left alone.
func TestWriteHasNoExponents(t *testing.T) {
	v := map[string]any{"age_s": 4.9e-8, "tiny": -1e-12, "big": 1e21, "bytes": 5.8075386e+08, "half": 0.5,
		"text": "4.9e-8", "esc": `q"1e-9`, "list": []float64{3e-7, 12}}
	rec := httptest.NewRecorder()
	if err := Write(rec, 200, "no-store", v); err != nil {
		t.Fatal(err)
	}
	body := rec.Body.String()
	for _, want := range []string{`"age_s": 0.000000049`, "\"tiny\": 0\n", `"big": 1000000000000000000000`, `"bytes": 580753860`,
		`"half": 0.5`, `"text": "4.9e-8"`, `"esc": "q\"1e-9"`, "0.0000003,"} {
		if !strings.Contains(body, want) {
			t.Errorf("the answer lacks %s:\n%s", want, body)
		}
	}
	var back map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &back); err != nil || back["age_s"] != 4.9e-8 || back["big"] != 1e21 {
		t.Errorf("the answer does not decode to the same values: %v %v", err, back)
	}
	if b := []byte(`{"a": 1.5, "b": "x"}`); &PlainNumbers(b)[0] != &b[0] {
		t.Error("a text without exponents was copied")
	}
}
