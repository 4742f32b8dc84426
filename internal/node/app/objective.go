package app

import (
	"fmt"

	"github.com/strata-media/strata/internal/core/tier"
)

// ObjectiveAuto is the default objective: tier.ObjectiveBytes in edge
// mode, where the origin link limits how many viewers a node serves and
// every byte fetched counts, tier.ObjectiveRequests otherwise.
// On the side-by-side benchmark's trace strata-lab sim peers measured a byte
// hit ratio of 0.272 with the byte objective against 0.195, and the live
// run 0.262 against 0.228 with the request objective
// (docs/decisions/0021-byte-objective-at-the-edge.md); it writes more to
// flash (0.49 bytes per byte served against 0.15).
const ObjectiveAuto = "auto"

// FlashObjective is the flash policy's objective of c: Objective, with
// auto resolved by whether c has upstreams.
func (c *Config) FlashObjective() (tier.Objective, error) {
	if c.Objective == ObjectiveAuto || c.Objective == "" {
		if len(c.Upstreams) > 0 {
			return tier.ObjectiveBytes, nil
		}
		return tier.ObjectiveRequests, nil
	}
	o, err := tier.ParseObjective(c.Objective)
	if err != nil {
		return 0, fmt.Errorf("%w: --objective: %v", ErrConfig, err)
	}
	return o, nil
}
