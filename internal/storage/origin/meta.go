package origin

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// metaFile is the optional metadata file of a title directory, written by
// ingest: {"segment_duration_s": 10, "renditions": {"700k": {"bandwidth":
// 700000}}}. It is not listed among the title's Files.
const metaFile = "strata.json"

// maxMetaSize bounds the size of a metadata file, bytes.
const maxMetaSize = 1 << 20

// titleMeta is the content of a metadata file. Every field is optional and
// overrides what the directory's names imply; unknown fields are ignored.
type titleMeta struct {
	// SegmentDuration is the play-out time of one segment, seconds.
	SegmentDuration float64 `json:"segment_duration_s"`
	// Renditions override per rendition directory name.
	Renditions map[string]renditionMeta `json:"renditions"`
}

type renditionMeta struct {
	// Bandwidth is the nominal bitrate, bits per second.
	Bandwidth *int `json:"bandwidth"`
}

// parseMeta decodes a metadata file and checks its values.
func parseMeta(data []byte) (titleMeta, error) {
	var m titleMeta
	if err := json.Unmarshal(data, &m); err != nil {
		return titleMeta{}, fmt.Errorf("origin: %s: %w", metaFile, err)
	}
	if m.SegmentDuration < 0 || math.IsInf(m.SegmentDuration, 0) {
		return titleMeta{}, fmt.Errorf("origin: %s: segment_duration_s %v", metaFile, m.SegmentDuration)
	}
	for id, r := range m.Renditions {
		if r.Bandwidth != nil && *r.Bandwidth < 0 {
			return titleMeta{}, fmt.Errorf("origin: %s: rendition %q: bandwidth %d", metaFile, id, *r.Bandwidth)
		}
	}
	return m, nil
}

// apply overrides t's segment duration and bandwidths with m's.
func (m titleMeta) apply(t *Title) {
	if m.SegmentDuration > 0 {
		t.SegmentDuration = m.SegmentDuration
	}
	for i := range t.Renditions {
		r := &t.Renditions[i]
		if bw := m.Renditions[r.ID].Bandwidth; bw != nil {
			r.Bandwidth = *bw
		}
	}
}

// inferBandwidth reads a nominal bitrate from a rendition id such as
// "700k", "1500k", "2M" or "2.5m" (bits per second; k is 1000), and
// returns 0 for any other id.
func inferBandwidth(id string) int {
	if len(id) < 2 {
		return 0
	}
	var unit float64
	switch id[len(id)-1] {
	case 'k', 'K':
		unit = 1e3
	case 'm', 'M':
		unit = 1e6
	default:
		return 0
	}
	num := id[:len(id)-1]
	if strings.Trim(num, "0123456789.") != "" { // plain decimals only
		return 0
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || v*unit > math.MaxInt32 {
		return 0
	}
	return int(math.Round(v * unit))
}
