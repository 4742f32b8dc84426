package app

import (
	"errors"
	"slices"
	"testing"
)

func TestCleanupClosesInReverseOrderDespiteErrors(t *testing.T) {
	var c cleanup
	var closed []string
	errB := errors.New("b failed")
	for _, name := range []string{"a", "b", "c"} {
		c.push(name, func() error {
			closed = append(closed, name)
			if name == "b" {
				return errB
			}
			return nil
		})
	}
	if got := c.names(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("names %v", got)
	}
	err := c.close()
	if !slices.Equal(closed, []string{"c", "b", "a"}) {
		t.Fatalf("closed %v, want c b a", closed)
	}
	if !errors.Is(err, errB) {
		t.Fatalf("close: %v, want b's error", err)
	}
	if err := c.close(); err != nil || len(closed) != 3 {
		t.Fatalf("second close: %v, closed %v", err, closed)
	}
}
