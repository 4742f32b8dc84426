package images

import (
	"encoding/binary"
	"image"
)

// exifOrientation returns the EXIF orientation (1-8) of a JPEG, 1 when it
// has none or it cannot be read. It walks the markers up to the start of
// scan and reads tag 0x0112 of IFD0 in the first APP1 "Exif" segment.
func exifOrientation(jpg []byte) int {
	if len(jpg) < 4 || jpg[0] != 0xFF || jpg[1] != 0xD8 {
		return 1
	}
	for p := 2; p+4 <= len(jpg) && jpg[p] == 0xFF; {
		marker, n := jpg[p+1], int(binary.BigEndian.Uint16(jpg[p+2:]))
		if marker == 0xDA || n < 2 || p+2+n > len(jpg) { // start of scan, or broken
			return 1
		}
		if seg := jpg[p+4 : p+2+n]; marker == 0xE1 && len(seg) > 6 && string(seg[:6]) == "Exif\x00\x00" {
			return tiffOrientation(seg[6:])
		}
		p += 2 + n
	}
	return 1
}

// tiffOrientation reads the orientation tag of a TIFF header's IFD0.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	ifd := int(bo.Uint32(t[4:]))
	if ifd < 8 || ifd+2 > len(t) {
		return 1
	}
	for i, n := 0, int(bo.Uint16(t[ifd:])); i < n; i++ {
		e := ifd + 2 + 12*i
		if e+12 > len(t) {
			return 1
		}
		if bo.Uint16(t[e:]) == 0x0112 {
			if v := int(bo.Uint16(t[e+8:])); v >= 1 && v <= 8 {
				return v
			}
			return 1
		}
	}
	return 1
}

// orient applies EXIF orientation o to img, returning an upright image.
// Orientations 5 to 8 transpose the image.
func orient(img *image.RGBA, o int) *image.RGBA {
	if o <= 1 || o > 8 {
		return img
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := range dh {
		for x := range dw {
			sx, sy := orientSource(o, x, y, w, h)
			si, di := img.PixOffset(b.Min.X+sx, b.Min.Y+sy), dst.PixOffset(x, y)
			copy(dst.Pix[di:di+4], img.Pix[si:si+4])
		}
	}
	return dst
}

// orientSource maps a pixel (x, y) of the upright image to the stored
// image of size w x h under EXIF orientation o.
func orientSource(o, x, y, w, h int) (int, int) {
	switch o {
	case 2: // mirrored horizontally
		return w - 1 - x, y
	case 3: // rotated 180
		return w - 1 - x, h - 1 - y
	case 4: // mirrored vertically
		return x, h - 1 - y
	case 5: // transposed
		return y, x
	case 6: // rotated 90 clockwise to display
		return y, h - 1 - x
	case 7: // transversed
		return w - 1 - y, h - 1 - x
	case 8: // rotated 90 counter-clockwise to display
		return w - 1 - y, x
	}
	return x, y
}
