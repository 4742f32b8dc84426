package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/store"
)

// writeCache writes a flash cache file holding segments, as strata serve
// would, and returns its path and the number of segments on flash.
func writeCache(t *testing.T) (string, int, *tier.Cache) {
	path := filepath.Join(t.TempDir(), "flash.cache")
	log := slog.New(slog.DiscardHandler)
	dev, err := device.OpenFile(path, device.FileOptions{Size: 32 << 20, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	opts := tier.Options{RAMBytes: 1 << 20, BlockSize: 1 << 20, MonitorRoom: 1, RingBytes: 8 << 20}
	f, c, _, err := store.Open(dev, opts, store.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		data := bytes.Repeat([]byte{byte(i)}, 100_000+i*1000)
		c.Insert(fmt.Sprintf("v/bbb/700k/%d.m4s", i), int64(len(data)), data, 0, 0)
		c.Monitor(0)
		for w := c.Feed(0, tier.Signals{}); w != nil; w = c.Feed(0, tier.Signals{}) {
			err := f.WriteBlock(w)
			c.WriteDone(w, err, 0)
		}
	}
	return path, c.Occupancy().SSDSegments, c
}

func TestFsckCommand(t *testing.T) {
	path, segs, c := writeCache(t)
	var out, errOut bytes.Buffer
	if code := run([]string{"fsck", "--ssd", path}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("segments   %d live", segs)) || !strings.Contains(out.String(), "result     clean") {
		t.Fatalf("report:\n%s", out.String())
	}

	// Corrupt one byte in the middle of a segment's data.
	seg, _ := c.FlashSegment("v/bbb/700k/10.m4s")
	dev, _ := device.OpenFile(path, device.FileOptions{Logger: slog.New(slog.DiscardHandler)})
	buf := device.AlignedBuffer(4096, 4096)
	off := device.AlignDown(seg.Chunks[0].RecordOff(1<<20)+50_000, 4096)
	dev.ReadAt(buf, off)
	buf[7] ^= 0x20
	dev.WriteAt(buf, off)
	dev.Close()

	out.Reset()
	if code := run([]string{"fsck", "--ssd", path, "--json"}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d after corruption: %s", code, out.String())
	}
	var rep store.FsckReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.CorruptRecords != 1 || rep.Segments != segs-1 || len(rep.Problems) != 1 {
		t.Fatalf("report after corruption: %+v", rep)
	}
}

func TestFsckUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"fsck"}, &out, &errOut); code != 2 {
		t.Fatalf("exit %d without --ssd", code)
	}
	if code := run([]string{"fsck", "--ssd", filepath.Join(t.TempDir(), "missing")}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d for a missing file", code)
	}
	if code := run([]string{"nosuch"}, &out, &errOut); code != 2 {
		t.Fatalf("exit %d for an unknown command", code)
	}
}
