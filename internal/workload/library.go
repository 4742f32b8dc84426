package workload

import "time"

// Library describes a synthetic library of Dataset titles in the form a
// data directory's synthetic.json holds it (strata serve reads it; the
// torture and the tests write it).
type Library struct {
	Titles           int     `json:"titles"`
	AllRenditions    bool    `json:"all_renditions"`
	MaxLengthS       float64 `json:"max_length_s"`
	SegmentDurationS float64 `json:"segment_duration_s"`
	Seed             uint64  `json:"seed"`
	Prefix           string  `json:"prefix"`
}

// Dataset is the dataset the library describes.
func (l Library) Dataset() *Dataset {
	return NewDataset(DatasetOptions{
		Titles: l.Titles, AllRenditions: l.AllRenditions, Seed: l.Seed, Prefix: l.Prefix,
		MaxLength:       time.Duration(l.MaxLengthS * float64(time.Second)),
		SegmentDuration: time.Duration(l.SegmentDurationS * float64(time.Second)),
	})
}
