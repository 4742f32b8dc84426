package model

// Stats counts an SSD's flash work. Page counts are in flash pages (the
// mapping granularity); Erases in erase blocks (one per plane).
type Stats struct {
	HostWrites   int64 // pages written by the host
	HostReads    int64 // mapped pages read by the host
	GCCopies     int64 // pages copied by garbage collection or merges
	Erases       int64 // erase blocks erased
	TrimmedPages int64 // mapped pages discarded by Trim

	// LogBlock merges (BAST): a switch makes an in-order log the data unit,
	// a partial merge first copies the tail the log is missing, a full merge
	// copies the whole unit into a fresh one.
	SwitchMerges, PartialMerges, FullMerges int64

	Streams []StreamStats // per write stream, index = stream id
}

// StreamStats counts one write stream's pages. GCCopies are the copies made
// while collecting blocks holding the stream's data.
type StreamStats struct {
	HostWrites int64
	GCCopies   int64
}

// WAF is the write amplification factor (host + copies) / host, or 1 before
// any host write.
func (s Stats) WAF() float64 { return waf(s.HostWrites, s.GCCopies) }

// WAF is the stream's write amplification factor.
func (s StreamStats) WAF() float64 { return waf(s.HostWrites, s.GCCopies) }

func waf(host, copies int64) float64 {
	if host <= 0 {
		return 1
	}
	return float64(host+copies) / float64(host)
}

// Sub returns s - o, the counts of the window between two snapshots.
func (s Stats) Sub(o Stats) Stats {
	d := Stats{
		HostWrites:    s.HostWrites - o.HostWrites,
		HostReads:     s.HostReads - o.HostReads,
		GCCopies:      s.GCCopies - o.GCCopies,
		Erases:        s.Erases - o.Erases,
		TrimmedPages:  s.TrimmedPages - o.TrimmedPages,
		SwitchMerges:  s.SwitchMerges - o.SwitchMerges,
		PartialMerges: s.PartialMerges - o.PartialMerges,
		FullMerges:    s.FullMerges - o.FullMerges,
		Streams:       make([]StreamStats, len(s.Streams)),
	}
	for i, st := range s.Streams {
		d.Streams[i] = st
		if i < len(o.Streams) {
			d.Streams[i].HostWrites -= o.Streams[i].HostWrites
			d.Streams[i].GCCopies -= o.Streams[i].GCCopies
		}
	}
	return d
}

// clone returns a copy that shares nothing with s.
func (s Stats) clone() Stats {
	s.Streams = append([]StreamStats(nil), s.Streams...)
	return s
}
