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
		return fmt.Errorf("%w: %q must be 1 to %d bytes", ErrInvalid, s, MaxNameLen)
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

func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// Segment identifies a file of a video rendition (FlashStream Table 1:
// video id, bitrate, segment number): a media segment "<n>.m4s", the init
// segment, or a playlist stored beside them.
type Segment struct {
	Video     string
	Rendition string
	Name      string
}

// ParseSegment parses "video/rendition/name".
func ParseSegment(s string) (Segment, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return Segment{}, fmt.Errorf("%w: %q is not video/rendition/name", ErrInvalid, s)
	}
	for _, p := range parts {
		if err := ValidName(p); err != nil {
			return Segment{}, err
		}
	}
	return Segment{Video: parts[0], Rendition: parts[1], Name: parts[2]}, nil
}

// String returns "video/rendition/name".
func (s Segment) String() string { return s.Video + "/" + s.Rendition + "/" + s.Name }

// Key is the segment's key in the tier engine: "v/video/rendition/name".
func (s Segment) Key() string { return "v/" + s.String() }

// VideoPrefix is the tier key prefix of every segment of a video, as
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
