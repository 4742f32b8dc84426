package framegroup

import (
	"errors"
	"slices"
	"testing"
)

func TestLevelStreams(t *testing.T) {
	want := map[Level][]Stream{
		L1: {IOdd, IEven, P, BOdd, BEven},
		L2: {IOdd, IEven, P, BOdd},
		L3: {IOdd, IEven, P},
		L4: {IOdd, IEven},
		L5: {IOdd},
		0:  nil,
		6:  nil,
	}
	for lv, sts := range want {
		if got := lv.Streams(); !slices.Equal(got, sts) {
			t.Errorf("level %d reads %v, want %v", lv, got, sts)
		}
		if lv.Valid() != (sts != nil) {
			t.Errorf("level %d: Valid() = %v", lv, lv.Valid())
		}
	}
}

func TestParseLevel(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Level
	}{{"L1", L1}, {"l3", L3}, {"5", L5}} {
		if got, err := ParseLevel(c.in); err != nil || got != c.want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "L0", "L6", "L12", "x1"} {
		if _, err := ParseLevel(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseLevel(%q): %v, want ErrInvalid", in, err)
		}
	}
}

func TestGrouper(t *testing.T) {
	var g Grouper
	seq := []struct {
		k   Kind
		ref bool
	}{{KindI, true}, {KindP, true}, {KindB, true}, {KindB, false}, {KindB, false}, {KindI, true}, {KindB, false}}
	var got []Stream
	for _, p := range seq {
		got = append(got, g.Assign(p.k, p.ref))
	}
	if want := []Stream{IOdd, P, P, BOdd, BEven, IEven, BOdd}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
