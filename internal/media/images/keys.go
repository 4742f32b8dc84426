package images

import (
	"strconv"

	"github.com/strata-media/strata/internal/ident"
)

// Key layout in the Badger store. Ids and variant names are validated by
// ident.ValidName, so they never contain '/', and one image's keys share
// the prefix "img/<id>/" that no other id's keys start with:
//
//	img/<id>/meta            JSON Meta: generation, original, variants
//	img/<id>/v/<variant>     the bytes of one variant ("original" is the upload)
//
// A variant under SizeThreshold bytes stays in the LSM tree on flash; a
// larger one is written to the value log on the capacity tier and the LSM
// holds its address (MRIS §3: a pair whose KeyType marks a large value).
const keyPrefix = "img/"

// metaKey is the key of id's metadata.
func metaKey(id string) []byte { return []byte(keyPrefix + id + "/meta") }

// blobKey is the key of the bytes of variant name of id.
func blobKey(id, name string) []byte { return []byte(keyPrefix + id + "/v/" + name) }

// imagePrefix is the prefix of every key of id.
func imagePrefix(id string) []byte { return []byte(keyPrefix + id + "/") }

// TierKey is the tier engine's key of a variant's bytes at a generation:
// "i/<id>/<generation>/<blob>". The generation makes a re-uploaded image's
// bytes new keys, so a copy cached before the replacement (even one on
// flash from before a restart, or replaced offline by strata ingest) is
// never looked up again; Invalidate("i/<id>/") frees the old copies.
func TierKey(id string, generation uint64, blob string) string {
	return TierPrefix(id) + strconv.FormatUint(generation, 10) + "/" + blob
}

// TierPrefix is the tier engine's key prefix of every variant of id.
func TierPrefix(id string) string { return "i/" + id + "/" }

// validID checks an image id or variant name.
func validID(s string) error { return ident.ValidName(s) }
