package tier

import "testing"

// TestObjectiveNames: every objective parses from its own name, and an
// unknown name is an error.
func TestObjectiveNames(t *testing.T) {
	for _, o := range []Objective{ObjectiveRequests, ObjectiveBytes, ObjectiveBalanced} {
		got, err := ParseObjective(o.String())
		if err != nil || got != o {
			t.Errorf("ParseObjective(%q) = %v, %v; want %v", o.String(), got, err, o)
		}
	}
	if _, err := ParseObjective("hits"); err == nil {
		t.Error(`ParseObjective("hits"): no error`)
	}
}

// TestObjectiveWeight: a hit is worth one under requests, its size under
// bytes, and in between under balanced, where a segment's worth per byte
// still falls with its size (so a small segment is worth a little more
// per byte than a large one requested as often), less steeply than under
// requests.
func TestObjectiveWeight(t *testing.T) {
	sizes := []int64{1, 100 << 10, 500 << 10, 4 << 20}
	for i, s := range sizes {
		r, b, m := ObjectiveRequests.weight(s), ObjectiveBytes.weight(s), ObjectiveBalanced.weight(s)
		if r != 1 || b != float64(s) {
			t.Errorf("size %d: requests %v, bytes %v; want 1, %d", s, r, b, s)
		}
		if s > 1 && !(r < m && m < b) {
			t.Errorf("size %d: balanced %v not between requests %v and bytes %v", s, m, r, b)
		}
		if i == 0 {
			continue
		}
		p := sizes[i-1]
		perByte := func(o Objective, n int64) float64 { return o.weight(n) / float64(n) }
		if !(perByte(ObjectiveBalanced, s) < perByte(ObjectiveBalanced, p)) {
			t.Errorf("balanced: worth per byte of %d (%v) not below that of %d (%v)", s, perByte(ObjectiveBalanced, s), p, perByte(ObjectiveBalanced, p))
		}
		if !(perByte(ObjectiveRequests, s)/perByte(ObjectiveRequests, p) < perByte(ObjectiveBalanced, s)/perByte(ObjectiveBalanced, p)) {
			t.Errorf("balanced falls as steeply as requests from %d to %d bytes", p, s)
		}
	}
	if !ObjectiveBalanced.perByte() || !ObjectiveBytes.perByte() || ObjectiveRequests.perByte() {
		t.Error("perByte: want bytes and balanced, not requests")
	}
	o := (&Options{Objective: ObjectiveBalanced, RAMBytes: 1 << 20}).EnsureDefaults()
	if o.ReinsertShare != BytesReinsertShare || o.GroupShrink != BytesGroupShrink {
		t.Errorf("balanced defaults: share %v, shrink %v; want the byte objective's", o.ReinsertShare, o.GroupShrink)
	}
}
