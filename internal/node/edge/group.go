package edge

import "strings"

// TierGroup returns the group of a tier key for the flash policy's
// group-aware score (tier.Options.Group): for an edge key, the key
// directory of its path's directory (e/<upstream>/d.../), so that the
// segments of one rendition pool their requests as they do in the
// videos module; without it every edge object, whose key ends in
// o<name>/<variant>/<slice>, would be a group of its own. Other keys
// keep the core's default: up to and including their last '/'.
func TierGroup(key string) string {
	if strings.HasPrefix(key, KeyPrefix) {
		if i := strings.LastIndex(key, "/o"); i >= 0 {
			return key[:i+1]
		}
	}
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i+1]
	}
	return key
}

// TierKey returns the tier key of the whole response to a plain GET of
// target (the path after the upstream's prefix, without its leading '/')
// from the upstream of prefix and base URL, stored as one record: what
// the engine's tier sees for it (strata sim peers replays such keys).
func TierKey(prefix, baseURL, target string) string {
	return sliceKey(variantKey(objectKey(upstreamDir(prefix, baseURL), target), ""), 0)
}
