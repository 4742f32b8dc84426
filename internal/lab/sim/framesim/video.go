package framesim

import (
	"math/rand/v2"
	"time"

	"github.com/strata-media/strata/internal/core/framegroup"
)

// A frame is one coded picture of a title: the stream the server's
// grouper puts it in (FG §III.1, Fig. 7) and its size.
type frame struct {
	Stream framegroup.Stream
	Size   int32 // bytes
}

// videoOptions describe the coded videos. Defaults are the paper's (FG
// §IV) where it states them.
type videoOptions struct {
	// Bitrate in bits per second. FG §IV: 2 Mbps.
	Bitrate float64
	// FPS is frames per second. FG §IV: 30.
	FPS int
	// GOP is frames per group of pictures. FG §IV: 90 (three seconds).
	GOP int
	// BFrames is the number of B frames between anchors. FG §IV: the
	// pattern IBBPBBP..., so 2.
	BFrames int
	// IPRatio and PBRatio are the mean sizes of I over P and P over B
	// frames. The paper does not give them; default 2.75 each, the middle
	// of x264's typical 2.5 to 3 for both (L. Merritt, ffmpeg-devel,
	// 22 Oct 2007).
	IPRatio, PBRatio float64
	// Jitter spreads each frame's size uniformly over mean*(1±Jitter).
	// Assumed 0.25; it only moves frame boundaries inside blocks.
	Jitter float64
	// MinLength and MaxLength bound a title's running time, drawn
	// uniformly. FG §III.2: 5 to 20 minutes.
	MinLength, MaxLength time.Duration
}

// EnsureDefaults fills in zero fields with the defaults.
func (o *videoOptions) EnsureDefaults() {
	if o.Bitrate <= 0 {
		o.Bitrate = 2e6
	}
	if o.FPS <= 0 {
		o.FPS = 30
	}
	if o.GOP <= 0 {
		o.GOP = 90
	}
	if o.BFrames <= 0 {
		o.BFrames = 2
	}
	if o.IPRatio <= 0 {
		o.IPRatio = 2.75
	}
	if o.PBRatio <= 0 {
		o.PBRatio = 2.75
	}
	if o.Jitter <= 0 {
		o.Jitter = 0.25
	}
	if o.MinLength <= 0 {
		o.MinLength = 5 * time.Minute
	}
	if o.MaxLength < o.MinLength {
		o.MaxLength = max(o.MinLength, 20*time.Minute)
	}
}

// gopPattern is one GOP in decode order as I, P or B. Display order is
// I B B P B B P ... P B B; in decode order each P comes before the two B
// frames it anchors, and the last two B frames (closed GOP) follow the
// last P.
func (o videoOptions) gopPattern() []byte {
	pat := []byte{'I'}
	for len(pat)+o.BFrames+1 <= o.GOP {
		pat = append(pat, 'P')
		for range o.BFrames {
			pat = append(pat, 'B')
		}
	}
	for len(pat) < o.GOP {
		pat = append(pat, 'B')
	}
	return pat
}

// meanSizes returns the mean I, P and B frame sizes that make a GOP carry
// Bitrate for GOP/FPS seconds.
func (o videoOptions) meanSizes() (i, p, b float64) {
	var ni, np, nb float64
	for _, c := range o.gopPattern() {
		switch c {
		case 'I':
			ni++
		case 'P':
			np++
		default:
			nb++
		}
	}
	gopBytes := o.Bitrate / 8 * float64(o.GOP) / float64(o.FPS)
	unit := gopBytes / (ni*o.IPRatio*o.PBRatio + np*o.PBRatio + nb)
	return unit * o.IPRatio * o.PBRatio, unit * o.PBRatio, unit
}

// GOPDuration is the running time of one GOP.
func (o videoOptions) GOPDuration() time.Duration {
	return time.Duration(o.GOP) * time.Second / time.Duration(o.FPS)
}

// newFrames returns gops GOPs of frames in decode order, sizes drawn from
// rng, grouped into streams by framegroup's Grouper as the server groups
// them: the B frames of IBBP... are not references, so I and B frames go
// to their odd or even stream by their number among their kind.
func newFrames(o videoOptions, gops int, rng *rand.Rand) []frame {
	o.EnsureDefaults()
	mi, mp, mb := o.meanSizes()
	pat := o.gopPattern()
	frames := make([]frame, 0, gops*len(pat))
	var g framegroup.Grouper
	for range gops {
		for _, c := range pat {
			var f frame
			switch c {
			case 'I':
				f = frame{Stream: g.Assign(framegroup.KindI, true), Size: jitter(mi, o.Jitter, rng)}
			case 'P':
				f = frame{Stream: g.Assign(framegroup.KindP, true), Size: jitter(mp, o.Jitter, rng)}
			default:
				f = frame{Stream: g.Assign(framegroup.KindB, false), Size: jitter(mb, o.Jitter, rng)}
			}
			frames = append(frames, f)
		}
	}
	return frames
}

// RandomGOPs draws a title length in GOPs between MinLength and MaxLength.
func (o videoOptions) RandomGOPs(rng *rand.Rand) int {
	o.EnsureDefaults()
	lo := max(1, int(o.MinLength/o.GOPDuration()))
	hi := max(lo, int(o.MaxLength/o.GOPDuration()))
	return lo + rng.IntN(hi-lo+1)
}

func jitter(mean, j float64, rng *rand.Rand) int32 {
	return int32(max(1, mean*(1+j*(2*rng.Float64()-1))))
}
