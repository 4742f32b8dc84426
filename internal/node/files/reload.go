package files

import "github.com/strata-media/strata/internal/core/tier"

// SetThreshold changes the flash utilization above which copy writes wait
// (Options.Threshold) while the tier runs.
func (t *Tier) SetThreshold(max float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.core != nil {
		t.mu.core.SetAdmission(tier.Threshold{Max: max})
	}
}
