package streamsim

import "testing"

func TestClassOf(t *testing.T) {
	for _, c := range []struct {
		device, class string
		kind          Kind
		rank          Rank
	}{
		{"segments", "medium", kindData, medium},
		{"segments", "long", kindData, long},
		{"segments", "short", kindData, short},
		{"segments-meta", "short", kindLog, short},
		{"files", "long", kindData, long},
		{"images", "lsm-wal", kindLog, short},
		{"images", "lsm-l0", kindData, medium},
		{"images", "lsm-l1+", kindData, long},
		{"images", "lsm-l3", kindData, long},
		{"images", "vlog", kindData, long},
		{"lsm-wal", "short", kindLog, short},
		{"segments", "extreme", kindData, extreme},
		{"segments", "not-set", kindData, medium},
		{"x", "something-new", kindData, medium},
		{"system", "anything", kindSystem, short},
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
		single:    {0, 1, 1, 1, 1},
		multiLog:  {0, 1, 2, 2, 2},
		MultiData: {0, 1, 2, 3, 4},
	}
	for m, streams := range want {
		mp := newMapping(m)
		for i, c := range classes {
			op := Op{Kind: opWrite, Class: c}
			if got := mp.Stream(&op); got != streams[i] {
				t.Errorf("%s: %s -> stream %d, want %d", m, c.Name, got, streams[i])
			}
		}
	}
}

func TestTracedMapping(t *testing.T) {
	mp := newMapping(traced)
	for st, want := range map[int]int{0: 0, 3: 3, 5: 0, 7: 2} {
		op := Op{Stream: st}
		if got := mp.Stream(&op); got != want {
			t.Errorf("stream %d -> %d, want %d", st, got, want)
		}
	}
}
