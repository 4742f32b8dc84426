package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/node/app"
	"github.com/strata-media/strata/internal/storage/store"
)

func runFsck(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fsck", "--ssd PATH [--json]", stderr)
	path := fs.String("ssd", "", "flash cache file or block device to check (read only)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" {
		return fmt.Errorf("%w: --ssd PATH is required", errUsage)
	}
	rep, err := app.Fsck(*path, slog.New(slog.NewTextHandler(stderr, nil)), progressPrinter(stderr, "scanning blocks"))
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printFsck(stdout, *path, rep)
	}
	if !rep.Clean() {
		return errFound
	}
	return nil
}

func printFsck(w io.Writer, path string, r *store.FsckReport) {
	fmt.Fprintf(w, "flash cache %s: %s, %d blocks of %s, format %s\n",
		path, bytesize.Format(r.DeviceSize), r.Blocks, bytesize.Format(r.BlockSize), r.FormatID)
	for _, s := range r.MetaSlots {
		fmt.Fprintf(w, "  metadata   %s\n", s)
	}
	fmt.Fprintf(w, "  blocks     %d data blocks scanned, %d hold records\n", r.Blocks-2, r.BlocksWithData)
	fmt.Fprintf(w, "  records    %d verified, %d corrupt, %d orphaned, %d invalidated, %d superseded\n",
		r.Records, r.CorruptRecords, r.OrphanRecords, r.InvalidatedRecords, r.SupersededRecords)
	fmt.Fprintf(w, "  segments   %d live, %s\n", r.Segments, bytesize.Format(r.Bytes))
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  problem    %s\n", p)
	}
	if r.Clean() {
		fmt.Fprintln(w, "  result     clean")
	} else {
		fmt.Fprintf(w, "  result     %d corrupt record(s): their segments are dropped at the next start\n", r.CorruptRecords)
	}
}

// progressPrinter returns a callback that prints progress in 10% steps for
// long jobs.
func progressPrinter(w io.Writer, what string) func(done, total int) {
	last := -1
	return func(done, total int) {
		if total < 64 {
			return
		}
		if pct := done * 10 / total; pct != last {
			last = pct
			fmt.Fprintf(w, "%s: %d/%d (%d%%)\n", what, done, total, pct*10)
		}
	}
}
