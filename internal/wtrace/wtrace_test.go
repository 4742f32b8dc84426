package wtrace

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	var b bytes.Buffer
	start := time.Unix(100, 0)
	w := NewWriter(&b, start)
	w.Write(start.Add(time.Second), "segments", 4<<20, 4<<20, "medium", 2)
	w.Write(start.Add(2*time.Second), "images-lsm", 0, 65536, "lsm-wal", 1)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []Record
	if err := Read(&b, func(r Record) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	want := Record{Time: time.Second, Device: "segments", Offset: 4 << 20, Length: 4 << 20, Class: "medium", Stream: 2}
	if len(got) != 2 || got[0] != want || got[1].Class != "lsm-wal" {
		t.Fatalf("got %+v", got)
	}
}

func TestParseRejects(t *testing.T) {
	for _, bad := range []string{"", "1 d 0 4096 short", "x d 0 4096 short 0", "1 d -1 4096 short 0", "1 d 0 0 short 0", "1 d 0 4096 short -2", "1 d 9223372036854771712 8192 short 0"} {
		if _, err := Parse(bad); !errors.Is(err, ErrFormat) {
			t.Errorf("Parse(%q) = %v", bad, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("5 segments 0 4096 medium 1")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		r2, err := Parse(r.Format())
		if err != nil || r2 != r {
			t.Fatalf("%q -> %+v -> %+v %v", s, r, r2, err)
		}
	})
}
