package httpapi

import (
	"net/http/httptest"
	"testing"
)

// Every 503 problem says when to retry, RetryAfter unless the handler
// said otherwise; no other status does.
func TestErrorRetryAfter(t *testing.T) {
	for _, c := range []struct {
		code      int
		set, want string
	}{{503, "", "5"}, {503, "30", "30"}, {502, "", ""}, {504, "", ""}, {429, "", ""}} {
		rec := httptest.NewRecorder()
		if c.set != "" {
			rec.Header().Set("Retry-After", c.set)
		}
		Error(rec, c.code, "x")
		if got := rec.Header().Get("Retry-After"); rec.Code != c.code || got != c.want {
			t.Errorf("%d (handler set %q): Retry-After %q, want %q", c.code, c.set, got, c.want)
		}
	}
	if RetryAfter.Seconds() != 5 {
		t.Errorf("RetryAfter %v: the test above assumes 5 s", RetryAfter)
	}
}
