package origin

import "github.com/strata-media/strata/internal/ident"

// Size returns the length of object o in bytes without generating it, or
// an error wrapping ErrNotFound (or ident.ErrInvalid): what a trace of
// requests for the library needs to know of each object.
func (s *Synthetic) Size(o ident.Object) (int64, error) {
	r, err := s.resolve(o)
	if err != nil {
		return 0, err
	}
	return r.len(), nil
}
