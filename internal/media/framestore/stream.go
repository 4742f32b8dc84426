package framestore

import "github.com/strata-media/strata/internal/core/framegroup"

// Level is a play level; the store plays framegroup's levels. The name
// stays for cmd/strata, which has not moved to framegroup yet.
type Level = framegroup.Level

// L1 is the play level of every frame.
const L1 = framegroup.L1

// ParseLevel parses "L1" to "L5" (or "1" to "5").
func ParseLevel(s string) (Level, error) { return framegroup.ParseLevel(s) }
