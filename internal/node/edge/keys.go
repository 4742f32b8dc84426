package edge

import (
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Tier keys of the edge. Every key starts with KeyPrefix, then one hashed
// directory per element of the upstream path, so that a purge of a path
// prefix ending in '/' is one tier invalidation:
//
//	e/<upstream>/d<dir>/.../o<name>/<variant>/<slice>
//
// <upstream> hashes the upstream's prefix and URL, d<dir> each directory
// of the path after the upstream's prefix, o<name> the last element with
// the query; <variant> is "a" for the anchor (the first response stored
// for the path, whose Vary names the request fields the others are keyed
// on) or "v" and a hash of the request's secondary key (httpcache.VaryKey);
// <slice> is the slice number in decimal. Hashes are xxHash64 in base 36.
// A path deeper than maxDirs keeps its remainder in the last element.

// KeyPrefix starts the tier key of every edge object.
const KeyPrefix = "e/"

// maxDirs bounds the hashed directories of a key, so that keys stay well
// under tier.MaxKeyLen (1024): 2 + 14 + 56*15 + 15 + 15 + 20 < 1024.
const maxDirs = 56

func hash36(s string) string { return strconv.FormatUint(xxhash.Sum64String(s), 36) }

// upstreamDir is the key directory of an upstream.
func upstreamDir(prefix, url string) string {
	return KeyPrefix + hash36(prefix+"\x00"+url) + "/"
}

// splitTarget splits a target (path after the upstream prefix, without
// its leading '/', with its query) into directories and a last element.
func splitTarget(target string) (dirs []string, name string) {
	path, query, hasQuery := strings.Cut(target, "?")
	parts := strings.Split(path, "/")
	dirs, name = parts[:len(parts)-1], parts[len(parts)-1]
	if len(dirs) > maxDirs {
		name = strings.Join(dirs[maxDirs:], "/") + "/" + name
		dirs = dirs[:maxDirs]
	}
	if hasQuery {
		name += "?" + query
	}
	return dirs, name
}

// dirKey returns the key directory of a path prefix: the directories of
// dirs under the upstream's.
func dirKey(up string, dirs []string) string {
	var b strings.Builder
	b.WriteString(up)
	for _, d := range dirs {
		b.WriteString("d")
		b.WriteString(hash36(d))
		b.WriteString("/")
	}
	return b.String()
}

// objectKey returns the key directory of every variant and slice of target.
func objectKey(up, target string) string {
	dirs, name := splitTarget(target)
	return dirKey(up, dirs) + "o" + hash36(name) + "/"
}

// variantKey returns the key directory of a variant of the object under
// obj: the anchor for the empty secondary key.
func variantKey(obj, varyKey string) string {
	if varyKey == "" {
		return obj + "a/"
	}
	return obj + "v" + hash36(varyKey) + "/"
}

// sliceKey returns the key of slice n of the variant under v.
func sliceKey(v string, n int64) string { return v + strconv.FormatInt(n, 10) }
