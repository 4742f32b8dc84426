// Package ident validates and parses the ids of Strata's objects (videos,
// renditions, segments, images, files) before they touch a file name or a
// cache key.
package ident

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalid reports a malformed id.
var ErrInvalid = errors.New("ident: invalid id")

// MaxNameLen is the longest name accepted.
const MaxNameLen = 128

// ValidName checks one path component of an id: 1 to 128 bytes of ASCII
// letters, digits, '.', '_' and '-', not starting with '.', so it can never
// be a separator, ".", ".." or a hidden file.
func ValidName(s string) error {
	if s == "" || len(s) > MaxNameLen {
		return fmt.Errorf("%w: %q must be 1 to %d bytes", ErrInvalid, clip(s), MaxNameLen)
	}
	if s[0] == '.' {
		return fmt.Errorf("%w: %q starts with '.'", ErrInvalid, s)
	}
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return fmt.Errorf("%w: %q contains %q", ErrInvalid, s, s[i])
		}
	}
	return nil
}

// clip cuts client input quoted in an error to 64 bytes, so that errors
// never echo unbounded input.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:61] + "..."
}

func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// Object identifies a file of a video in the capacity tier: a file of a
// rendition ("video/rendition/name": a media segment "<n>.m4s", the init
// segment, a media playlist), or a file of the title itself
// ("video/name": manifest.mpd, master.m3u8). FlashStream Table 1's segment
// id (video, bitrate, segment number) is the first kind.
type Object struct {
	Video     string
	Rendition string // "" for a file of the title itself
	Name      string
}

// ParseObject parses "video/name" or "video/rendition/name".
func ParseObject(s string) (Object, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 2 && len(parts) != 3 {
		return Object{}, fmt.Errorf("%w: %q is not video/name or video/rendition/name", ErrInvalid, clip(s))
	}
	for _, p := range parts {
		if err := ValidName(p); err != nil {
			return Object{}, err
		}
	}
	if len(parts) == 2 {
		return Object{Video: parts[0], Name: parts[1]}, nil
	}
	return Object{Video: parts[0], Rendition: parts[1], Name: parts[2]}, nil
}

// Path returns "video/rendition/name", or "video/name".
func (o Object) Path() string {
	if o.Rendition == "" {
		return o.Video + "/" + o.Name
	}
	return o.Video + "/" + o.Rendition + "/" + o.Name
}

// String is Path.
func (o Object) String() string { return o.Path() }

// Key is the object's key in the tier engine: "v/" + Path.
func (o Object) Key() string { return "v/" + o.Path() }

// VideoPrefix is the tier key prefix of every object of a video, as
// invalidation takes it.
func VideoPrefix(video string) string { return "v/" + video + "/" }

// SegmentNumber returns n for a media segment named "<n>.m4s" (decimal,
// no sign or leading zeros beyond "0"), and false for any other name.
func SegmentNumber(name string) (uint32, bool) {
	num, ok := strings.CutSuffix(name, ".m4s")
	if !ok || num == "" || len(num) > 10 || (len(num) > 1 && num[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(num, 10, 32)
	return uint32(n), err == nil
}

// SegmentName is the file name of media segment n.
func SegmentName(n uint32) string { return strconv.FormatUint(uint64(n), 10) + ".m4s" }
