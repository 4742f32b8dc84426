package origin

import (
	"cmp"
	"slices"

	"github.com/strata-media/strata/internal/ident"
)

// The capacity tier's layout, the same in a directory (Dir) and a bucket
// (S3), so that a packaged title directory copied as-is into either is
// served alike:
//
//	<video>/strata.json          optional metadata (meta.go); not one of the Files
//	<video>/<name>               a file of the title (manifest.mpd, master.m3u8)
//	<video>/<rendition>/<n>.m4s  media segment n of a rendition
//	<video>/<rendition>/<name>   another file of a rendition (init.mp4, playlist.m3u8)
//
// Names that are not valid ids (ident.ValidName), such as the frame
// store's ".frames/", are not part of the catalog.

// addName counts name in r if it is a media segment "<n>.m4s", or lists
// it among r's Files if it is another valid name.
func addName(r *Rendition, name string) {
	if ident.ValidName(name) != nil {
		return
	}
	n, ok := ident.SegmentNumber(name)
	if !ok {
		r.Files = append(r.Files, name)
		return
	}
	if r.Segments == 0 || int(n) < r.StartNumber {
		r.StartNumber = int(n)
	}
	r.Segments++
}

// sortTitle puts t in catalog order: renditions by bandwidth, then id;
// the title's and each rendition's files by name.
func sortTitle(t *Title) {
	slices.SortFunc(t.Renditions, func(a, b Rendition) int {
		return cmp.Or(cmp.Compare(a.Bandwidth, b.Bandwidth), cmp.Compare(a.ID, b.ID))
	})
	slices.Sort(t.Files)
	for i := range t.Renditions {
		slices.Sort(t.Renditions[i].Files)
	}
}
