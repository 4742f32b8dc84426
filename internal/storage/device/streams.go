package device

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// WriteStreams reports the NVMe write streams (Linux 6.16+: FDP placement
// handles) the block device named disk offers for per-I/O placement, from
// /sys/block/<disk>/queue/max_write_streams, and a sentence saying what it
// found. sysRoot "" means "/sys". A kernel without the attribute, or a
// device without streams, gives 0.
func WriteStreams(sysRoot, disk string) (int, string) {
	if sysRoot == "" {
		sysRoot = "/sys"
	}
	p := filepath.Join(sysRoot, "block", disk, "queue", "max_write_streams")
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, fmt.Sprintf("no per-I/O write streams: %s not present (kernel before 6.16)", p)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return 0, fmt.Sprintf("no per-I/O write streams: /dev/%s offers none (max_write_streams 0); lifetime classes go down as per-file hints only", disk)
	}
	return n, fmt.Sprintf("/dev/%s offers %d write streams (NVMe FDP)", disk, n)
}
