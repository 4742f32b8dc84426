// Package edgekey is the edge cache's scheme of tier keys: the key of
// each slice of each variant of an upstream object, and the group the
// flash policy pools a key's requests in. The edge (internal/node/edge)
// stores under these keys; the lab replays them (strata-lab sim peers),
// which is why the scheme is a leaf both may import.
package edgekey

import (
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Tier keys of the edge. Every key starts with Prefix, then one hashed
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

// Prefix starts the tier key of every edge object.
const Prefix = "e/"

// maxDirs bounds the hashed directories of a key, so that keys stay well
// under tier.MaxKeyLen (1024): 2 + 14 + 56*15 + 15 + 15 + 20 < 1024.
const maxDirs = 56

func hash36(s string) string { return strconv.FormatUint(xxhash.Sum64String(s), 36) }

// Upstream is the key directory of an upstream.
func Upstream(prefix, url string) string {
	return Prefix + hash36(prefix+"\x00"+url) + "/"
}

// SplitTarget splits a target (path after the upstream prefix, without
// its leading '/', with its query) into directories and a last element.
func SplitTarget(target string) (dirs []string, name string) {
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

// Dir returns the key directory of a path prefix: the directories of
// dirs under the upstream's.
func Dir(up string, dirs []string) string {
	var b strings.Builder
	b.WriteString(up)
	for _, d := range dirs {
		b.WriteString("d")
		b.WriteString(hash36(d))
		b.WriteString("/")
	}
	return b.String()
}

// Object returns the key directory of every variant and slice of target.
func Object(up, target string) string {
	return string(AppendObject(make([]byte, 0, objectLen(up, target)), up, target))
}

// objectLen is room for Object(up, target) when its directories are few.
func objectLen(up, target string) int { return len(up) + 16*(strings.Count(target, "/")+1) }

// AppendObject appends Object(up, target) to b: the edge's hits build
// their keys with it in one buffer, without the elements of SplitTarget.
func AppendObject(b []byte, up, target string) []byte {
	b = append(b, up...)
	path, query, hasQuery := strings.Cut(target, "?")
	for range maxDirs {
		i := strings.IndexByte(path, '/')
		if i < 0 {
			break
		}
		b = append(b, 'd')
		b = strconv.AppendUint(b, xxhash.Sum64String(path[:i]), 36)
		b = append(b, '/')
		path = path[i+1:]
	}
	// The last element: the rest of the path (past maxDirs, with its
	// slashes), then the query.
	name := path
	if hasQuery {
		name = target[len(target)-len(path)-len(query)-1:]
	}
	b = append(b, 'o')
	b = strconv.AppendUint(b, xxhash.Sum64String(name), 36)
	return append(b, '/')
}

// Variant returns the key directory of a variant of the object under
// obj: the anchor for the empty secondary key.
func Variant(obj, varyKey string) string {
	if varyKey == "" {
		return obj + "a/"
	}
	return obj + "v" + hash36(varyKey) + "/"
}

// Slice returns the key of slice n of the variant under v.
func Slice(v string, n int64) string { return v + strconv.FormatInt(n, 10) }

// Group returns the group of a tier key for the flash policy's
// group-aware score (tier.Options.Group): for an edge key, the key
// directory of its path's directory (e/<upstream>/d.../), so that the
// segments of one rendition pool their requests as they do in the
// videos module; without it every edge object, whose key ends in
// o<name>/<variant>/<slice>, would be a group of its own. Other keys
// keep the core's default: up to and including their last '/'.
func Group(key string) string {
	if strings.HasPrefix(key, Prefix) {
		if i := strings.LastIndex(key, "/o"); i >= 0 {
			return key[:i+1]
		}
	}
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i+1]
	}
	return key
}

// Whole returns the tier key of the whole response to a plain GET of
// target (the path after the upstream's prefix, without its leading '/')
// from the upstream of prefix and base URL, stored as one record: what
// the engine's tier sees for it (strata-lab sim peers replays such keys).
func Whole(prefix, baseURL, target string) string {
	return Slice(Variant(Object(Upstream(prefix, baseURL), target), ""), 0)
}
