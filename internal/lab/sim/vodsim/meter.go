package vodsim

import "time"

// meter integrates a run's stream counts over virtual time.
type meter struct {
	last            time.Duration
	cache, all      int     // streams served by the cache, all admitted streams
	write           float64 // cache write rate now, bytes/s
	cacheArea       float64 // stream-seconds
	allArea         float64
	writeBytes      float64
	peakCache, peak int

	window     time.Duration // 0: no windows
	winCache   float64
	winAll     float64
	winEnd     time.Duration
	windowHits []float64
}

func newMeter(window time.Duration) *meter { return &meter{window: window, winEnd: window} }

// advance accounts for the time from the last change to now.
func (m *meter) advance(now time.Duration) {
	for m.window > 0 && now >= m.winEnd {
		m.accrue(m.winEnd)
		m.closeWindow()
	}
	m.accrue(now)
}

func (m *meter) accrue(now time.Duration) {
	dt := (now - m.last).Seconds()
	if dt <= 0 {
		return
	}
	m.cacheArea += float64(m.cache) * dt
	m.allArea += float64(m.all) * dt
	m.winCache += float64(m.cache) * dt
	m.winAll += float64(m.all) * dt
	m.writeBytes += m.write * dt
	m.last = now
}

func (m *meter) closeWindow() {
	h := 0.0
	if m.winAll > 0 {
		h = m.winCache / m.winAll
	}
	m.windowHits = append(m.windowHits, h)
	m.winCache, m.winAll = 0, 0
	m.winEnd += m.window
}

// add changes the counts at now.
func (m *meter) add(now time.Duration, cache, all int) {
	m.advance(now)
	m.cache += cache
	m.all += all
	m.peakCache = max(m.peakCache, m.cache)
	m.peak = max(m.peak, m.all)
}

// setWrite changes the cache write rate at now.
func (m *meter) setWrite(now time.Duration, rate float64) {
	m.advance(now)
	m.write = rate
}

// fill writes the run's averages into r.
func (m *meter) fill(r *Result, end time.Duration, bitrate int64) {
	m.advance(end)
	secs := end.Seconds()
	r.Buffered, r.Streams = m.cacheArea/secs, m.allArea/secs
	r.PeakBuffered, r.PeakStreams = m.peakCache, m.peak
	if m.allArea > 0 {
		r.HitRatio = m.cacheArea / m.allArea
	}
	r.CacheReadMBps = mbps(r.Buffered * float64(bitrate))
	r.CacheWriteMBps = mbps(m.writeBytes / secs)
	r.Windows = m.windowHits
}
