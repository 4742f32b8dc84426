package framestore

import "github.com/strata-media/strata/internal/core/framegroup"

// Errors of the store: framegroup's, so errors.Is matches either name.
var (
	// ErrCorrupt reports metadata or blocks that fail their checks.
	ErrCorrupt = framegroup.ErrCorrupt
	// ErrInvalid reports invalid options or frames given to a Writer.
	ErrInvalid = framegroup.ErrInvalid
)

// File names inside a store directory.
const (
	BlocksFile = "blocks"
	IndexFile  = "index"
)
