package loadgen

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// The report's text names the server's counters in plain decimals with
// their units, never in scientific notation (origin.bytes printed as
// +5.8075386e+08).
func TestReportTextHasNoExponents(t *testing.T) {
	r := Report{URL: "http://127.0.0.1:8080", RateRPS: 2e6, Server: map[string]float64{
		"origin.bytes": 5.8075386e+08, "ram.hits": 1234567, "ssd.utilization": 1.5e-7, "ram.bytes": -4096,
		"x.age_s": 0.25, "unchanged": 0}}
	var out bytes.Buffer
	r.WriteText(&out)
	text := out.String()
	if regexp.MustCompile(`[0-9][eE][-+]?[0-9]`).MatchString(text) {
		t.Errorf("an exponent in:\n%s", text)
	}
	for _, want := range []string{
		"bench http://127.0.0.1:8080: 2000000 req/s",
		"origin.bytes                 +580753860 B (553.9 MiB)",
		"ram.hits                     +1234567\n",
		"ram.bytes                    -4096 B (4 KiB)",
		"ssd.utilization              +0\n",
		"x.age_s                      +0.25 s",
		"1 other /stats values unchanged",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
}
