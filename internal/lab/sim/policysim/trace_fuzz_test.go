package policysim

import (
	"bytes"
	"testing"
)

// FuzzParseTrace: whatever the bytes and the format named, ParseTrace
// returns a trace or an error (a TraceError naming where), never panics,
// and a trace it returns has as many requests as records kept.
func FuzzParseTrace(f *testing.F) {
	f.Add([]byte("0,a,100\n1,b,200\n2,a,100\n"), "")
	f.Add([]byte(`{"time":"2026-11-27T10:00:00Z","method":"GET","path":"/v/a.m4s","status":200,"bytes":100}`+"\n"), "strata")
	f.Add([]byte(`127.0.0.1 - - [27/Nov/2026:10:00:00 +0000] "GET /v/a.m4s HTTP/1.1" 200 100 "-" "curl"`+"\n"), "combined")
	f.Add(make([]byte, 24*3), "oracle")
	f.Add([]byte{0x1f, 0x8b, 0, 0}, "")
	f.Fuzz(func(t *testing.T, b []byte, format string) {
		switch format {
		case "", "oracle", "csv", "strata", "combined":
		default:
			format = ""
		}
		rt, err := ParseTrace(bytes.NewReader(b), "fuzz", format, nil)
		if err != nil {
			if rt != nil {
				t.Fatalf("a trace and an error: %v", err)
			}
			return
		}
		if rt == nil || rt.Trace == nil {
			t.Fatal("no trace and no error")
		}
	})
}
