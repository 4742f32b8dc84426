package wanorigin

import (
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/origin"
)

// Size returns the length in bytes of object o of the library, as the
// origin would serve it, without generating its bytes.
func (l *Library) Size(o ident.Object) (int64, error) {
	syn, ok := l.byID[o.Video]
	if !ok {
		return 0, origin.ErrNotFound
	}
	return syn.Size(o)
}
