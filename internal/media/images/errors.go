package images

import (
	"errors"
	"net/http"

	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/origin"
)

// Errors of the image store, wrapped with %w so errors.Is works. The HTTP
// layer maps them to status codes in statusOf.
var (
	// ErrNotFound reports an image or variant that is not stored.
	ErrNotFound = errors.New("images: not found")
	// ErrUnsupported reports an upload that is not a JPEG, PNG or WebP.
	ErrUnsupported = errors.New("images: unsupported image type (want JPEG, PNG or WebP)")
	// ErrTooManyPixels reports an original whose header declares more
	// pixels than Options.MaxPixels (checked before decoding).
	ErrTooManyPixels = errors.New("images: too many pixels")
	// ErrTooLarge reports an upload of more than Options.MaxUploadBytes.
	ErrTooLarge = errors.New("images: upload too large")
	// ErrCorrupt reports an original that cannot be decoded.
	ErrCorrupt = errors.New("images: corrupt image")
	// ErrChanged reports an image replaced while it was being read; the
	// reader retries.
	ErrChanged = errors.New("images: image replaced during the read")
	// ErrOptions reports invalid options.
	ErrOptions = errors.New("images: invalid options")
	// ErrClosed reports use of a closed store.
	ErrClosed = errors.New("images: store closed")
	// ErrMissingObject reports a large variant whose object the bucket
	// does not hold, or holds with other bytes than its pointer names.
	ErrMissingObject = errors.New("images: a large variant's object is missing or altered in the bucket")
)

// statusOf is the HTTP status of an error of this package, or of the
// bucket's (origin.HTTPStatus, as the segment and file routes); an
// error of the file system or Badger is 500.
func statusOf(err error) int {
	switch {
	case errors.Is(err, ident.ErrInvalid), errors.Is(err, ErrBadIIIF):
		return http.StatusBadRequest
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrTooLarge), errors.Is(err, ErrTooMuchWork):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrUnsupported):
		return http.StatusUnsupportedMediaType
	case errors.Is(err, ErrTooManyPixels), errors.Is(err, ErrCorrupt):
		return http.StatusUnprocessableEntity
	case errors.Is(err, ErrClosed), errors.Is(err, ErrChanged):
		return http.StatusServiceUnavailable // with Retry-After (httpapi.Error)
	case errors.Is(err, ErrMissingObject):
		return http.StatusBadGateway
	}
	if code, ok := origin.HTTPStatus(err); ok {
		return code
	}
	return http.StatusInternalServerError
}

// publicDetail is the detail of a 5xx answer: the sentinel's text, or a
// generic one for errors of the file system or Badger.
func publicDetail(err error) string {
	for _, e := range []error{ErrClosed, ErrChanged, ErrMissingObject, origin.ErrUnavailable, origin.ErrTimeout, origin.ErrUpstream} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	return "images: internal error; see the server log"
}
