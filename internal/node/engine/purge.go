package engine

import (
	"fmt"

	"github.com/strata-media/strata/internal/core/tier"
)

// Purge is Invalidate, and says what it dropped: the objects that were
// servable (in RAM, on their way to flash, or on flash) under prefix, and
// their bytes.
func (e *Engine) Purge(prefix string) (tier.Dropped, error) {
	e.metaMu.Lock()
	defer e.metaMu.Unlock()
	e.mu.Lock()
	mw, d, err := e.mu.c.InvalidateCounted(prefix, e.now())
	e.mu.Unlock()
	if err != nil || mw == nil {
		return d, err
	}
	err = e.flash.WriteMeta(mw)
	e.mu.Lock()
	e.mu.c.MetaDone(mw, err)
	e.mu.Unlock()
	if err != nil {
		return d, fmt.Errorf("engine: recording the invalidation on flash: %w", err)
	}
	return d, nil
}
