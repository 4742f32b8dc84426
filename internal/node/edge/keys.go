package edge

import "github.com/strata-media/strata/internal/edgekey"

// The edge's tier keys are internal/edgekey's scheme:
//
//	e/<upstream>/d<dir>/.../o<name>/<variant>/<slice>
//
// (see there); these are its names in this package.

// KeyPrefix starts the tier key of every edge object.
const KeyPrefix = edgekey.Prefix

func upstreamDir(prefix, url string) string                  { return edgekey.Upstream(prefix, url) }
func splitTarget(target string) (dirs []string, name string) { return edgekey.SplitTarget(target) }
func dirKey(up string, dirs []string) string                 { return edgekey.Dir(up, dirs) }
func objectKey(up, target string) string                     { return edgekey.Object(up, target) }
func variantKey(obj, varyKey string) string                  { return edgekey.Variant(obj, varyKey) }
func sliceKey(v string, n int64) string                      { return edgekey.Slice(v, n) }

// TierGroup is edgekey.Group: the group of a tier key for the flash
// policy's group-aware score (tier.Options.Group).
func TierGroup(key string) string { return edgekey.Group(key) }

// TierKey is edgekey.Whole: the tier key of the whole response to a plain
// GET of target from the upstream of prefix and base URL.
func TierKey(prefix, baseURL, target string) string { return edgekey.Whole(prefix, baseURL, target) }
