package images

import "image"

// infoJSON is an IIIF 3.0 image information document (§5).
type infoJSON struct {
	Context        string     `json:"@context"`
	ID             string     `json:"id"`
	Type           string     `json:"type"`
	Protocol       string     `json:"protocol"`
	Profile        string     `json:"profile"`
	Width          int        `json:"width"`
	Height         int        `json:"height"`
	MaxWidth       int        `json:"maxWidth"`
	MaxHeight      int        `json:"maxHeight"`
	MaxArea        int64      `json:"maxArea"`
	Sizes          []iiifSize `json:"sizes"`
	Tiles          []iiifTile `json:"tiles"`
	ExtraQualities []string   `json:"extraQualities"`
	ExtraFeatures  []string   `json:"extraFeatures"`
}

type iiifSize struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

type iiifTile struct {
	Width        int   `json:"width"`
	Height       int   `json:"height"`
	ScaleFactors []int `json:"scaleFactors"`
}

// iiifExtraFeatures are the features served beyond level 2.
var iiifExtraFeatures = []string{"mirroring", "rotationArbitrary", "sizeUpscaling", "profileLinkHeader", "canonicalLinkHeader"}

// newInfo describes m at base URI id: level 2 (jpg and png; quality color
// is level 2's, gray and bitonal extra), the stored sizes (a client that
// asks for them gets a stored variant's pixels scaled by nothing), tiles
// of o.TileSize at the power-of-two scale factors down to one tile, and
// the output limits; neither sizes nor scale factors that would decode a
// variant above MaxDecodePixels.
func newInfo(id string, m *Meta, o *IIIFOptions) infoJSON {
	info := infoJSON{
		Context: "http://iiif.io/api/image/3/context.json", ID: id, Type: "ImageService3",
		Protocol: "http://iiif.io/api/image", Profile: "level2", Width: m.Width, Height: m.Height,
		MaxWidth: o.MaxOutputSide, MaxHeight: o.MaxOutputSide, MaxArea: o.MaxOutputPixels,
		Sizes: []iiifSize{}, ExtraQualities: []string{"color", "gray", "bitonal"}, ExtraFeatures: iiifExtraFeatures,
	}
	for _, v := range iiifCandidates(m) {
		if o.limits().fits(image.Pt(v.Width, v.Height)) && o.decodable(v) {
			info.Sizes = append(info.Sizes, iiifSize{v.Width, v.Height})
		}
	}
	info.Tiles = []iiifTile{}
	if d, ok := largestDecodable(m, o); ok {
		sfs := scaleFactors(m.Width, m.Height, o.TileSize)
		for len(sfs) > 1 && (d.Width*sfs[0] < m.Width || d.Height*sfs[0] < m.Height) {
			sfs = sfs[1:] // a tile at this scale would decode a variant above MaxDecodePixels
		}
		info.Tiles = append(info.Tiles, iiifTile{Width: o.TileSize, Height: o.TileSize, ScaleFactors: sfs})
	}
	return info
}

// scaleFactors are 1, 2, 4, ... up to the first at which one tile holds
// the whole w x h image.
func scaleFactors(w, h, tile int) []int {
	out := []int{1}
	for sf := 1; (max(w, h)+sf-1)/sf > tile; {
		sf *= 2
		out = append(out, sf)
	}
	return out
}
