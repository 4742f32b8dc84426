package engine

import "github.com/strata-media/strata/internal/core/tier"

// SetThreshold changes the admission threshold λ (Options.Threshold)
// while the engine runs; the feed's next block follows it. It has no
// effect when Options.Tier.Admission was set to another policy.
func (e *Engine) SetThreshold(max float64) {
	if _, ok := e.opts.Tier.Admission.(tier.Threshold); !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mu.c.SetAdmission(tier.Threshold{Max: max})
}
