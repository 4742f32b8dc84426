package main

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
)

// testPhoto returns a deterministic photo-like image: smooth color fields
// at several scales (sky, walls, shading), hard-edged shapes (objects),
// and per-pixel grain (sensor noise), so that it compresses like a
// camera JPEG (a few bits per pixel), not like a flat test card.
func testPhoto(w, h int, seed uint64) *image.RGBA {
	rng := rand.New(rand.NewPCG(seed, 1))
	fields := []*lattice{newLattice(rng, w, h, 600), newLattice(rng, w, h, 150), newLattice(rng, w, h, 40)}
	shapes := make([][4]float64, 24)
	for i := range shapes {
		shapes[i] = [4]float64{rng.Float64() * float64(w), rng.Float64() * float64(h), (0.02 + 0.1*rng.Float64()) * float64(min(w, h)), rng.Float64()}
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, photoPixel(rng, fields, shapes, x, y))
		}
	}
	return img
}

func photoPixel(rng *rand.Rand, fields []*lattice, shapes [][4]float64, x, y int) color.RGBA {
	var c [3]float64
	for i, f := range fields {
		v := f.at(x, y)
		for k := range c {
			c[k] += v[k] * []float64{150, 60, 25}[i]
		}
	}
	for _, s := range shapes {
		if dx, dy := float64(x)-s[0], float64(y)-s[1]; dx*dx+dy*dy < s[2]*s[2] {
			c = [3]float64{255 * s[3], 200 * (1 - s[3]), 90 + 100*s[3]}
		}
	}
	var out [3]uint8
	for k := range c {
		out[k] = uint8(math.Max(0, math.Min(255, c[k]+rng.NormFloat64()*5)))
	}
	return color.RGBA{out[0], out[1], out[2], 255}
}

// lattice is value noise: random colors on a grid, interpolated.
type lattice struct {
	cell   float64
	cols   int
	values [][3]float64
}

func newLattice(rng *rand.Rand, w, h int, cell float64) *lattice {
	cols, rows := int(float64(w)/cell)+2, int(float64(h)/cell)+2
	l := &lattice{cell: cell, cols: cols, values: make([][3]float64, cols*rows)}
	for i := range l.values {
		l.values[i] = [3]float64{rng.Float64(), rng.Float64(), rng.Float64()}
	}
	return l
}

func (l *lattice) at(x, y int) [3]float64 {
	fx, fy := float64(x)/l.cell, float64(y)/l.cell
	ix, iy := int(fx), int(fy)
	tx, ty := smooth(fx-float64(ix)), smooth(fy-float64(iy))
	var out [3]float64
	for k := range out {
		a := l.values[iy*l.cols+ix][k]*(1-tx) + l.values[iy*l.cols+ix+1][k]*tx
		b := l.values[(iy+1)*l.cols+ix][k]*(1-tx) + l.values[(iy+1)*l.cols+ix+1][k]*tx
		out[k] = a*(1-ty) + b*ty
	}
	return out
}

func smooth(t float64) float64 { return t * t * (3 - 2*t) }
