package plot

import "testing"

func TestCompact(t *testing.T) {
	cases := map[float64]string{
		0: "0", 0.25: "0.25", 0.8123: "0.812", 42: "42", 123.456: "123", 999.4: "999",
		999.6: "1000", 1460: "1460", 9999.4: "9999", 9999.6: "10k", 12345: "12.3k",
		1.5e6: "1.5M", -2e6: "-2M", 1.23e9: "1.23G", 4.2e12: "4.2T", 5e-5: "5e-5",
		-1.25e-7: "-1.25e-7", 1e15: "1e15", 0.001: "0.001", 999999: "1M",
	}
	for in, want := range cases {
		if got := compact(in); got != want {
			t.Errorf("compact(%g) = %q, want %q", in, got, want)
		}
	}
}

func TestTickFormat(t *testing.T) {
	cases := []struct {
		step, max, v float64
		want         string
	}{
		{0.05, 1, 0.25, "0.25"},
		{0.2, 1, 0.6000000000000001, "0.6"},
		{500, 2000, 1500, "1500"},
		{5000, 20000, 15000, "15k"},
		{2e5, 1e6, 4e5, "0.4M"},
		{1e-5, 5e-5, 3e-5, "3e-5"},
		{0.1, 1, 1e-17, "0"},
		{1, 5, -0.0, "0"},
	}
	for _, c := range cases {
		if got := newTickFormat(c.step, c.max).label(c.v); got != c.want {
			t.Errorf("step %g max %g: label(%g) = %q, want %q", c.step, c.max, c.v, got, c.want)
		}
	}
}

func TestNum(t *testing.T) {
	cases := map[float64]string{0: "0", -0.001: "0", 1.005: "1", 12.345: "12.35", -3.5: "-3.5", 640: "640"}
	for in, want := range cases {
		if got := num(in); got != want {
			t.Errorf("num(%g) = %q, want %q", in, got, want)
		}
	}
}

func TestFitText(t *testing.T) {
	if got := fitText("short", 11, 200); got != "short" {
		t.Errorf("fitText shortened a fitting string: %q", got)
	}
	got := fitText("a rather long legend entry that cannot fit", 11, 100)
	if textWidth(got, 11) > 100 || got[len(got)-len("…"):] != "…" {
		t.Errorf("fitText = %q (%.1f px)", got, textWidth(got, 11))
	}
}
