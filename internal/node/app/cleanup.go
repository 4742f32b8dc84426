package app

import (
	"errors"
	"fmt"
	"log/slog"
)

// cleanup closes what a node opened, in the reverse order of opening: the
// one shape every part's release takes, whether Open fails half-way or
// the node shuts down.
type cleanup struct {
	log   *slog.Logger // nil: no messages
	parts []part
}

// part is one opened resource and how to release it.
type part struct {
	name  string
	close func() error
}

// push records a part opened after the ones already recorded.
func (c *cleanup) push(name string, close func() error) {
	c.parts = append(c.parts, part{name, close})
}

// names lists the parts in opening order.
func (c *cleanup) names() []string {
	out := make([]string, len(c.parts))
	for i, p := range c.parts {
		out[i] = p.name
	}
	return out
}

// close releases every part, last opened first, even when some fail, and
// returns their errors joined. A second call does nothing.
func (c *cleanup) close() error {
	var errs []error
	for i := len(c.parts) - 1; i >= 0; i-- {
		p := c.parts[i]
		err := p.close()
		if err != nil {
			errs = append(errs, fmt.Errorf("closing %s: %w", p.name, err))
		}
		if c.log != nil {
			c.log.Debug("closed", "part", p.name, "err", err)
		}
	}
	c.parts = nil
	return errors.Join(errs...)
}
