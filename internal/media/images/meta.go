package images

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Meta is an image's metadata, stored as JSON under "img/<id>/meta" in the
// same atomic batch as its variants.
type Meta struct {
	ID string `json:"id"`
	// Generation counts the uploads of this id, from 1. Each upload
	// replaces every variant.
	Generation uint64    `json:"generation"`
	Uploaded   time.Time `json:"uploaded"`
	// Format is the original's format: "jpeg", "png" or "webp".
	Format string `json:"format"`
	// Width and Height are the original's size as displayed.
	Width  int `json:"width"`
	Height int `json:"height"`
	// Variants are the ladder's rungs in order, then "original".
	Variants []Variant `json:"variants"`
}

// A Variant is one stored resolution of an image.
type Variant struct {
	Name        string `json:"name"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	Bytes       int64  `json:"bytes"`
	ContentType string `json:"content_type"`
	// ETag is a strong entity tag: a hash of the bytes, quoted.
	ETag string `json:"etag"`
	// Blob names the variant whose stored bytes this one shares, when
	// never enlarging gave it the same size as another rung or as the
	// original; empty when it has its own.
	Blob string `json:"blob,omitempty"`
}

// BlobName is the variant whose key holds v's bytes.
func (v Variant) BlobName() string {
	if v.Blob != "" {
		return v.Blob
	}
	return v.Name
}

// Variant returns the variant called name.
func (m *Meta) Variant(name string) (Variant, bool) {
	for _, v := range m.Variants {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}

// blobs lists the names of the variants that have their own key.
func (m *Meta) blobs() []string {
	var out []string
	for _, v := range m.Variants {
		if v.Blob == "" {
			out = append(out, v.Name)
		}
	}
	return out
}

// etagOf is the strong entity tag of data: the first 128 bits of its
// SHA-256, quoted.
func etagOf(data []byte) string {
	sum := sha256.Sum256(data)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

func decodeMeta(b []byte) (Meta, error) {
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("images: decoding metadata: %w", err)
	}
	return m, nil
}
