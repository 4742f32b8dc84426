package model

import (
	"fmt"
	"time"
)

// HDD presets, with sources as for the SSD presets. Full-stroke seek times
// are not in these drives' data sheets; they are estimated as twice the
// average seek, a typical ratio for drives of the class.

// Barracuda7200dot10 is the Seagate Barracuda 7200.10 (ST3320620AS, 320 GB)
// of the frame-grouping paper (FG Table 1, which used 32 GB of it).
func Barracuda7200dot10() HDDParams {
	return HDDParams{
		Name:         "barracuda-7200.10",
		Capacity:     320e9,
		RPM:          7200,                   // FG Table 1
		Surfaces:     4,                      // 2 platters
		TrackToTrack: 800 * time.Microsecond, // Seagate 7200.10 data sheet (read)
		AverageSeek:  8500 * time.Microsecond,
		FullStroke:   17 * time.Millisecond, // estimated
		OuterRate:    78e6,                  // data sheet: 78 MB/s max sustained
		// Inner rate: an HD Tune pass over a 320 GB 7200.10 averages 62 MB/s
		// (goughlui.com), so the ID rate is about 2 x 62 - 78.
		InnerRate: 46e6,
		Overhead:  100 * time.Microsecond, // assumed controller time
		ReadAhead: 16 << 20,               // 16 MB cache
	}
}

// Generic7200 is a 7200 RPM desktop disk of the capacity given, like the
// FlashStream server's 550 GB disk (§5) and the 1 TB disks of its energy
// comparison (Tables 5, 6): Seagate Barracuda 7200.12 class, 8.5 ms average
// seek, 0.8 ms track to track, 125 MB/s at the outer diameter (1 TB data
// sheet), about half that inside.
func Generic7200(capacity int64) HDDParams {
	return HDDParams{
		Name:         fmt.Sprintf("hdd-7200-%dgb", capacity/1e9),
		Capacity:     capacity,
		RPM:          7200,
		Surfaces:     4,
		TrackToTrack: 800 * time.Microsecond,
		AverageSeek:  8500 * time.Microsecond,
		FullStroke:   17 * time.Millisecond, // estimated
		OuterRate:    125e6,
		InnerRate:    65e6, // assumed: about half the outer rate
		Overhead:     100 * time.Microsecond,
		ReadAhead:    32 << 20,
	}
}

// Cheetah15K6 is the Seagate Cheetah 15K.6 146 GB (ST3146356SS) of the VoD
// paper (Table 1: 160 MB/s sequential and 70 MB/s random 1 MB reads):
// 15,000 RPM, 3.4 ms average and 0.2 ms track-to-track read seeks, 171 to
// 112 MB/s sustained (Seagate data sheet).
func Cheetah15K6() HDDParams {
	return HDDParams{
		Name:         "cheetah-15k.6",
		Capacity:     146e9,
		RPM:          15000,
		Surfaces:     4,
		TrackToTrack: 200 * time.Microsecond,
		AverageSeek:  3400 * time.Microsecond,
		FullStroke:   6800 * time.Microsecond, // estimated
		OuterRate:    171e6,
		InnerRate:    112e6,
		Overhead:     100 * time.Microsecond,
		ReadAhead:    16 << 20,
	}
}

// VoDDiskArray is the VoD paper's disk tier (§6.1): four Cheetah 15K.6
// 146 GB striped by an LSI 1068E (RAID-0, its default 64 KB stripe unit),
// 584 GB, whose 1 MB random reads the paper measured at 100 MB/s.
func VoDDiskArray() (*Striped, error) {
	var members []Model
	for i := range 4 {
		p := Cheetah15K6()
		p.Seed = int64(i + 1)
		h, err := NewHDD(p)
		if err != nil {
			return nil, err
		}
		members = append(members, h)
	}
	return NewStriped("vod-raid0", 64<<10, members...)
}
