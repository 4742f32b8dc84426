package media

import (
	"context"
	"strings"

	"github.com/strata-media/strata/internal/media/transcode"
)

// LadderNames is transcode.DefaultLadder's rendition names joined by "/".
func LadderNames() string {
	var n []string
	for _, r := range transcode.DefaultLadder {
		n = append(n, r.Name)
	}
	return strings.Join(n, "/")
}

// TranscodeLadder transcodes src with ffmpeg into transcode.DefaultLadder
// inside the staging directory and returns the renditions to Commit.
// progress, if not nil, receives the percentage done.
func (s *Staging) TranscodeLadder(ctx context.Context, src string, progress func(pct int)) ([]Input, error) {
	outs, err := transcode.Ladder(ctx, src, s.UploadDir(), transcode.DefaultLadder, progress)
	if err != nil {
		return nil, err
	}
	inputs := make([]Input, 0, len(outs))
	for _, o := range outs {
		inputs = append(inputs, Input{Name: o.Name, Path: o.Path})
	}
	return inputs, nil
}
