package vodsim

import (
	"math"
	"time"
)

// copier runs the dynamic LFU's copies one at a time as a fluid: a copy
// reads the disk and writes flash at the bandwidth streams leave free on
// both (vod.Admission.Spare), up to CopyRate, so it never takes bandwidth
// a stream could be admitted with. Its speed is recomputed whenever a
// stream starts or ends.
type copier struct {
	r      *lfuRun
	title  int
	active bool
	left   float64 // bytes still to copy
	speed  float64 // bytes/s now
	last   time.Duration
	gen    int // invalidates completion events scheduled at older speeds
}

// kick starts the next planned copy whose space is free, if none runs.
func (c *copier) kick() {
	if c.active {
		return
	}
	title, size, ok := c.r.lfu.Ready()
	if !ok {
		return
	}
	c.title, c.left, c.active, c.last, c.speed = title, float64(size), true, c.r.loop.Now(), 0
	c.update()
}

// progress accounts for the bytes copied up to now.
func (c *copier) progress(now time.Duration) {
	if !c.active {
		return
	}
	done := math.Min(c.left, c.speed*(now-c.last).Seconds())
	c.left -= done
	c.last = now
}

// update re-rates the running copy and schedules its completion.
func (c *copier) update() {
	if !c.active {
		return
	}
	now := c.r.loop.Now()
	c.progress(now)
	c.speed = float64(min(c.r.adm.Spare(c.r.c.CopyRate)+c.r.c.CopyFloor, c.r.c.CopyRate))
	c.r.m.setWrite(now, c.speed)
	c.gen++
	if c.speed <= 0 {
		return
	}
	gen := c.gen
	eta := time.Duration(math.Ceil(c.left / c.speed * float64(time.Second)))
	c.r.loop.At(now+eta, func() {
		if gen == c.gen {
			c.finish()
		}
	})
}

// finish installs the copied title and starts the next copy.
func (c *copier) finish() {
	c.progress(c.r.loop.Now())
	c.active = false
	c.r.m.setWrite(c.r.loop.Now(), 0)
	c.r.fail(c.r.lfu.Installed(c.title))
	c.kick()
}
