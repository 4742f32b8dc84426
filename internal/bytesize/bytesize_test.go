package bytesize

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	cases := map[string]int64{"4096": 4096, "256MiB": 256 << 20, "2G": 2 << 30, "2 GiB": 2 << 30,
		"1.5k": 1536, "10MB": 10_000_000, "0": 0, "16m": 16 << 20, "7b": 7}
	for in, want := range cases {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "x", "1x", "NaN", "1e30G"} {
		if _, err := Parse(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) err %v", bad, err)
		}
	}
}

func TestFormat(t *testing.T) {
	cases := map[int64]string{512: "512 B", 256 << 20: "256 MiB", 3 << 29: "1.5 GiB", 2 << 30: "2 GiB"}
	for in, want := range cases {
		if got := Format(in); got != want {
			t.Errorf("Format(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestCompact(t *testing.T) {
	for in, want := range map[int64]string{8 << 20: "8MiB", 256 << 10: "256KiB", 100: "100B"} {
		if got := Compact(in); got != want {
			t.Errorf("Compact(%d) = %q, want %q", in, got, want)
		}
	}
}

// Exact writes a size as a config file does, reading back to the same
// bytes.
func TestExact(t *testing.T) {
	for n, want := range map[int64]string{4 << 20: "4MiB", 400e6: "400MB", 1000: "1KB", 1536: "1536", 0: "0", 3 << 30: "3GiB", 2e12: "2TB"} {
		got := Exact(n)
		if got != want {
			t.Errorf("Exact(%d) = %q, want %q", n, got, want)
		}
		if back, err := Parse(got); err != nil || back != n {
			t.Errorf("Parse(%q) = %d, %v; want %d", got, back, err, n)
		}
	}
}
