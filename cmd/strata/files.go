package main

import (
	"context"
	"flag"

	"fmt"

	"io"
	"log/slog"
	"os"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/node/app"
)

// filesFlags registers the whole-file tier's flags on fs.
func filesFlags(fs *flag.FlagSet, c *app.FilesConfig) {
	fs.StringVar(&c.Dir, "files-dir", c.Dir, "directory of whole files served at /files/{id} (default <data>/files)")
	fs.StringVar(&c.Flash, "files-flash", c.Flash, "flash copies of popular whole files (default <data>/files.flash)")
	fs.Var(&c.FlashSize, "files-flash-size", "size of the whole-file flash cache file (0: no flash copies)")
	fs.Var(&c.FlashBandwidth, "files-flash-bandwidth", "bytes/s the flash may promise to whole-file streams (admission control)")
	fs.Var(&c.DiskBandwidth, "files-disk-bandwidth", "bytes/s the capacity disk may promise to whole-file streams")
	fs.Var(&c.Bitrate, "files-bitrate", "bytes/s of a file whose play-out time is unknown")
	fs.Var(&c.WriteRate, "files-write-rate", "cap on the flash write rate of whole-file copies, bytes/s (0: none)")
}

// runIngestFile is strata ingest file: it stores a whole file in a data
// directory's file store, as PUT /files/{id} does.
func runIngestFile(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("ingest file", "--id ID [--data DIR] FILE", stderr)
	id := fs.String("id", "", "file id (letters, digits, '.', '_', '-')")
	data := fs.String("data", app.DefaultConfig().Data, "data directory of strata serve")
	dir := fs.String("files-dir", "", "whole-file directory (default <data>/files)")
	s3 := fs.String("origin", "", "store into the bucket of strata serve --origin instead: s3://BUCKET/PREFIX[?endpoint=URL&region=R&path_style=true]")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *id == "" || fs.NArg() != 1 {
		return fmt.Errorf("%w: want --id ID and one FILE", errUsage)
	}
	t, where, err := app.OpenIngestFileStore(context.Background(), *s3, *data, *dir, slog.New(slog.NewTextHandler(stderr, nil)))
	if err != nil {
		return err
	}
	defer t.Close()
	src, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer src.Close()
	st, _ := src.Stat()
	fmt.Fprintf(stderr, "ingest: copying %s (%s) to %s\n", fs.Arg(0), bytesize.Format(st.Size()), where)
	m, err := t.Put(*id, &progressReader{r: src, total: st.Size(), w: stderr})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "stored %s: %s, %s/s, %.0f s\n", *id, bytesize.Format(m.Size), bytesize.Format(m.ByteRate), m.Duration)
	return nil
}

// progressReader prints progress in 10% steps while a copy runs.
type progressReader struct {
	r     io.Reader
	total int64
	done  int64
	last  int64
	w     io.Writer
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	if p.total > 0 {
		if pct := p.done * 10 / p.total; pct != p.last {
			p.last = pct
			fmt.Fprintf(p.w, "ingest: %d%%\n", pct*10)
		}
	}
	return n, err
}
