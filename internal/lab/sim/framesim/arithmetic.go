package framesim

import "github.com/strata-media/strata/internal/core/framegroup"

// LevelBlocks is the layout arithmetic of one block size and play level
// over a whole catalog, each title played from its start to its end: how
// many S-byte data blocks each layout reads and which share of the bytes
// read are frames the level needs. Metadata, index and timing are left
// out; this is what the runs then put on a device.
type LevelBlocks struct {
	Device   string `json:"device"`
	BlockKiB int64  `json:"block_kib"`
	Level    int    `json:"level"`
	// Needed is the share of the coded bytes the level delivers.
	Needed float64 `json:"needed"`
	// Blocks per hour of content.
	GroupedBlocks      float64 `json:"grouped_blocks_per_hour"`
	ConventionalBlocks float64 `json:"conventional_blocks_per_hour"`
	// Useful is needed bytes over bytes read.
	GroupedUseful      float64 `json:"grouped_useful"`
	ConventionalUseful float64 `json:"conventional_useful"`
}

// Arithmetic tabulates LevelBlocks for each device's S and each level.
func Arithmetic(cat *catalog) []LevelBlocks {
	var out []LevelBlocks
	for _, d := range devices() {
		for _, lv := range framegroup.Levels {
			out = append(out, levelBlocks(cat, d, lv))
		}
	}
	return out
}

func levelBlocks(cat *catalog, d Device, lv framegroup.Level) LevelBlocks {
	var need, all, gb, cb int64
	var frames int
	for _, t := range cat.Titles {
		need += t.NeededBytes(lv, 0)
		all += t.Bytes()
		frames += len(t.Frames)
		gb += int64(len(newGroupedFile(t, d.Block).DataBlocks(t, lv, 0)))
		cb += int64(len(newConventionalFile(t, d.Block, 5).DataBlocks(t, lv, 0)))
	}
	hours := float64(frames) / float64(cat.Video.FPS) / 3600
	return LevelBlocks{
		Device: d.Name, BlockKiB: d.Block >> 10, Level: int(lv),
		Needed:        float64(need) / float64(all),
		GroupedBlocks: float64(gb) / hours, ConventionalBlocks: float64(cb) / hours,
		GroupedUseful:      float64(need) / float64(gb*d.Block),
		ConventionalUseful: float64(need) / float64(cb*d.Block),
	}
}
