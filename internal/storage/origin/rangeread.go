package origin

import (
	"context"
	"fmt"

	"github.com/strata-media/strata/internal/ident"
)

// GetRange reads length bytes of o from offset off as RangeReader says:
// with org's own ranged read if it has one, else by reading the whole
// object and slicing it. The HTTP layer can thus answer Range requests
// from any origin, and fetch only the bytes asked from those that can.
func GetRange(ctx context.Context, org Origin, o ident.Object, off, length int64) (Range, error) {
	if rr, ok := org.(RangeReader); ok {
		return rr.GetRange(ctx, o, off, length)
	}
	obj, err := org.Get(ctx, o)
	if err != nil {
		return Range{}, err
	}
	return sliceRange(obj, o, off, length)
}

// sliceRange is the Range of a whole object.
func sliceRange(obj Object, o ident.Object, off, length int64) (Range, error) {
	size := int64(len(obj.Data))
	if off < 0 || off >= size {
		return Range{}, fmt.Errorf("%w: offset %d of %s, %d bytes", ErrInvalidRange, off, o, size)
	}
	end := size
	if length >= 0 {
		end = min(size, off+length)
	}
	return Range{Data: obj.Data[off:end:end], Offset: off, Size: size, Modified: obj.Modified}, nil
}
