package streamsim

import "testing"

func TestClassOf(t *testing.T) {
	for _, c := range []struct {
		device, class string
		kind          Kind
		rank          Rank
	}{
		{"segments", "medium", KindData, Medium},
		{"segments", "long", KindData, Long},
		{"segments", "short", KindData, Short},
		{"segments-meta", "short", KindLog, Short},
		{"files", "long", KindData, Long},
		{"images", "lsm-wal", KindLog, Short},
		{"images", "lsm-l0", KindData, Medium},
		{"images", "lsm-l1+", KindData, Long},
		{"images", "lsm-l3", KindData, Long},
		{"images", "vlog", KindData, Long},
		{"lsm-wal", "short", KindLog, Short},
		{"segments", "extreme", KindData, Extreme},
		{"segments", "not-set", KindData, Medium},
		{"x", "something-new", KindData, Medium},
		{"system", "anything", KindSystem, Short},
	} {
		got := ClassOf(c.device, c.class)
		if got.Kind != c.kind || got.Rank != c.rank || got.Name != c.class {
			t.Errorf("ClassOf(%q, %q) = %+v, want kind %s rank %s", c.device, c.class, got, c.kind, c.rank)
		}
	}
}

// TestTableOne checks the mappings against MS Table 1: system data, the
// commit log, flushed data and compaction data.
func TestTableOne(t *testing.T) {
	classes := []Class{classSystem, classCommitLog, classFlushed, classTier1, classTier2}
	want := map[MappingName][]int{
		Normal:    {0, 0, 0, 0, 0},
		Single:    {0, 1, 1, 1, 1},
		MultiLog:  {0, 1, 2, 2, 2},
		MultiData: {0, 1, 2, 3, 4},
	}
	for m, streams := range want {
		mp := NewMapping(m)
		for i, c := range classes {
			op := Op{Kind: OpWrite, Class: c}
			if got := mp.Stream(&op); got != streams[i] {
				t.Errorf("%s: %s -> stream %d, want %d", m, c.Name, got, streams[i])
			}
		}
	}
}

func TestTracedMapping(t *testing.T) {
	mp := NewMapping(Traced)
	for st, want := range map[int]int{0: 0, 3: 3, 5: 0, 7: 2} {
		op := Op{Stream: st}
		if got := mp.Stream(&op); got != want {
			t.Errorf("stream %d -> %d, want %d", st, got, want)
		}
	}
}
