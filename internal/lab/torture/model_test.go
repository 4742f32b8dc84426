package torture

import (
	"slices"
	"testing"
)

// What a read may find: what the entry held or had in flight when the
// read began, and what was sent while it ran; once settled, only the
// acknowledged content.
func TestEntryAllowed(t *testing.T) {
	e := &entry{kind: kindFile, id: "f", cur: absent, pending: none}
	if got := e.allowed(); !slices.Equal(got, []int{absent}) {
		t.Fatalf("new entry allows %v", got)
	}
	e.begin(3)
	read := e.overlapping() // begins during the upload of 3
	e.settle(true)
	e.begin(5)
	e.settle(false) // refused: nothing changed, but the read overlapped it
	if got := read(); !slices.Equal(got, []int{absent, 3, 5}) {
		t.Fatalf("overlapping read allows %v, want [absent 3 5]", got)
	}
	if got := e.overlapping()(); !slices.Equal(got, []int{3}) {
		t.Fatalf("a read after the answers allows %v, want [3]", got)
	}
	e.begin(4) // cut by a kill: either version after the restart
	if got := e.allowed(); !slices.Equal(got, []int{3, 4}) {
		t.Fatalf("after a cut upload %v, want [3 4]", got)
	}
}
