package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
)

// Write sends v as indented JSON with status code and the Cache-Control
// header cacheControl: the one JSON writer of the API, so that /stats,
// /videos, uploads and the image API answer alike. An encoding error
// after the header has gone out cannot be reported to the client; it is
// returned for logging.
func Write(w http.ResponseWriter, code int, cacheControl string, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", cacheControl)
	w.WriteHeader(code)
	return writeIndented(w, v)
}

func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
