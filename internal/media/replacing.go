package media

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-media/strata/internal/ident"
)

// replacingPrefix starts the name of a title's replacement marker under
// the root: <root>/.replacing-<id>, written (and synced) before a title
// is exchanged with its new version and removed once the old version's
// cached objects are invalidated. A process killed between the two
// leaves it behind, and the next start invalidates the title then
// (RecoverReplacements): otherwise flash would keep, and serve, segments
// of the old version beside the new one's (found by the crash torture).
const replacingPrefix = ".replacing-"

// markReplacing writes id's replacement marker durably, when the title
// exists (a new title has nothing cached to invalidate).
func (g *Ingester) markReplacing(id string) (bool, error) {
	if g.opts.Invalidate == nil {
		return false, nil
	}
	if _, err := os.Stat(filepath.Join(g.root, id)); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	f, err := os.OpenFile(filepath.Join(g.root, replacingPrefix+id), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return false, fmt.Errorf("media: %w", err)
	}
	err = errors.Join(f.Sync(), f.Close())
	if err == nil {
		err = syncDir(g.root)
	}
	return err == nil, err
}

// clearReplacing removes id's replacement marker once its invalidation
// is recorded.
func (g *Ingester) clearReplacing(id string) error {
	err := os.Remove(filepath.Join(g.root, replacingPrefix+id))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("media: %w", err)
	}
	return nil
}

// RecoverReplacements finishes the replacements that a killed process
// left between the exchange of a title and the invalidation of its cached
// objects: it invalidates each marked title and removes its marker. Call
// it at start, before serving. It returns the titles invalidated.
func (g *Ingester) RecoverReplacements() ([]string, error) {
	entries, err := os.ReadDir(g.root)
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	var done []string
	for _, e := range entries {
		id, ok := strings.CutPrefix(e.Name(), replacingPrefix)
		if !ok || e.IsDir() || ident.ValidName(id) != nil || g.opts.Invalidate == nil {
			continue
		}
		if err := g.opts.Invalidate(id); err != nil {
			return done, fmt.Errorf("media: invalidating %s after an interrupted replacement: %w", id, err)
		}
		if err := g.clearReplacing(id); err != nil {
			return done, err
		}
		done = append(done, id)
	}
	return done, nil
}
