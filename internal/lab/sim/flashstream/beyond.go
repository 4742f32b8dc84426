package flashstream

import (
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/sim/des"
)

// beyondJobs measure what FlashStream's own future work (§7) and the
// issue ask for beyond the paper: read-over-write priority in the device
// queue, and an adaptive admission signal (tier.LatencyTarget) in place of
// the static 60% utilization threshold. Each is Fig. 7's procedure on
// FlashStream(LRU), and read priority on ZFS too, whose reads the paper says
// queue behind L2ARC writes.
func (s *Setup) beyondJobs(rep *Report, p Progress) []job {
	variants := []config{
		{Name: "FlashStream(LRU) + read priority", Build: s.withReadPriority(s.flashStream(tier.BlockLRU, 16<<20, false))},
		{Name: "FlashStream(LRU) + latency admission", Build: s.latencyAdmission()},
		{Name: "ZFS + read priority", Build: s.withReadPriority(s.zfs())},
	}
	rep.Beyond = make([]maxResult, len(variants))
	var jobs []job
	for i, v := range variants {
		jobs = append(jobs, func() error {
			m, fc, err := s.warmAndFindMax(v, p)
			m.System = v.Name
			m.AtMax.System = v.Name
			rep.Beyond[i] = m
			p("%s: max %.0f req/s, flash full after %.0f min", v.Name, m.MaxRPS, fc.FillMinutes)
			return err
		})
	}
	return jobs
}

func (s *Setup) withReadPriority(build func(*des.Loop, *des.Catalog) (system, error)) func(*des.Loop, *des.Catalog) (system, error) {
	return func(l *des.Loop, cat *des.Catalog) (system, error) {
		sys, err := build(l, cat)
		if err == nil {
			sys.SSD().PrioritizeReads = true
		}
		return sys, err
	}
}

// latencyAdmission is FlashStream(LRU) admitting writes while flash reads
// average under 20 ms: a fiftieth of the 10 s segment deadline, and ten
// times a 1 MB read on the OCZ model, so it only refuses when writes visibly
// delay reads.
func (s *Setup) latencyAdmission() func(*des.Loop, *des.Catalog) (system, error) {
	return func(l *des.Loop, cat *des.Catalog) (system, error) {
		sys, err := s.flashStream(tier.BlockLRU, 16<<20, false)(l, cat)
		if err != nil {
			return nil, err
		}
		f := sys.(*FlashStream)
		o := f.core.Options()
		o.Admission = tier.LatencyTarget{Target: 20 * time.Millisecond}
		return newFlashStream(l, cat, f.ssd, f.hdd, flashStreamOptions{Name: "FlashStream(LRU) + latency admission", Tier: o})
	}
}
