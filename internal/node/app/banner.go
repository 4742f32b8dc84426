package app

import (
	"fmt"
	"strings"

	"github.com/strata-media/strata/internal/banner"
	"github.com/strata-media/strata/internal/bytesize"
)

// A BannerField is a line of the start banner: its label and its text,
// which may run over several lines (indented under the text).
type BannerField struct{ Label, Text string }

// Banner returns the start banner's fields (strata serve prints them
// after its first line, or logs them as one JSON line).
func (d Description) Banner() []BannerField {
	const more = "\n             " // a continuation line, under the text
	var f []BannerField
	add := func(label, format string, args ...any) {
		f = append(f, BannerField{label, fmt.Sprintf(format, args...)})
	}
	add("data", "%s", d.Data)
	add("ram", "%s", bytesize.Format(d.RAMBytes))
	add("memory", "%s", d.Memory)
	flash := flashLine(d.Flash)
	if st := d.Engine.SSD; st.Enabled {
		flash += fmt.Sprintf(more+"%d blocks of %s, policy %s; recovered %d segments (%s)",
			st.Blocks, bytesize.Format(st.BlockSize), d.Policy, st.RecoveredSegments, bytesize.Format(st.RecoveredBytes))
	}
	add("flash", "%s", flash)
	capacity := fmt.Sprintf("%s (directory, %d titles)", d.Capacity.Dir, d.Capacity.Titles)
	if d.Capacity.S3 != "" {
		capacity = fmt.Sprintf("%s, %d titles", d.Capacity.S3, d.Capacity.Titles)
	}
	if s := d.Capacity.Synthetic; s != nil {
		capacity += fmt.Sprintf(more+"+ synthetic library: %d titles, %s (%s)", s.Titles, bytesize.Format(s.Bytes), s.File)
	}
	add("capacity", "%s", capacity)
	for _, u := range d.Upstreams {
		add("edge", "%s -> %s (purge: POST /admin/purge?path=%s)", u.Prefix, u.URL, u.Prefix)
	}
	add("images", "%s", imagesLine(d.Images, d.ImagesOff))
	add("files", "%s", filesLine(d.Files))
	if d.AdminTokenFile == "" {
		add("admin", "bearer token from the configuration")
	} else {
		add("admin", "bearer token in %s", d.AdminTokenFile)
	}
	if s := servingLine(d.Serving); s != "" {
		add("http", "%s", s)
	}
	add(strings.TrimSpace(banner.Listening), "%s", d.URL)
	add("try", "curl %s/videos", d.URL)
	add("watch", "%s/watch", d.URL)
	return f
}

func flashLine(f FlashDescription) string {
	if f.Disabled {
		return "none (--no-flash)"
	}
	s := fmt.Sprintf("%s (%s", f.Path, bytesize.Format(f.Size))
	if !f.BlockDevice {
		s += " file"
	}
	if f.Direct {
		s += ", O_DIRECT"
	}
	if f.PageCache {
		s += ", hits from the page cache"
	} else if f.PageCacheEnds {
		s += ", hits' headers and ends from the page cache"
	}
	s += ")\n             write hint: " + f.WriteHint
	if f.UtilizationDevice == "" {
		return s + "\n             utilization: unavailable (" + f.UtilizationErr + ")"
	}
	return s + "\n             utilization: /dev/" + f.UtilizationDevice + " io_ticks\n             " + f.WriteStreams
}

func imagesLine(d *ImagesDescription, off string) string {
	if d == nil {
		return "none (" + off + ")"
	}
	sync := "synced"
	if d.NoSync {
		sync = "NOT synced (--images-no-sync)"
	}
	return fmt.Sprintf("LSM %s (flash), value log %s (capacity)\n             variants >= %s in the value log; uploads %s; ladder %s",
		d.LSM, d.VLog, bytesize.Format(d.SizeThreshold), sync, d.Ladder)
}

func filesLine(d FilesDescription) string {
	// The rates as the config file writes them ("400MB/s", not 381.5 MiB/s).
	s := fmt.Sprintf("%s, streams up to %s/s from disk", d.Dir, bytesize.Exact(d.DiskBandwidth))
	if d.Flash != "" {
		s += fmt.Sprintf("; flash copies in %s (%s), up to %s/s", d.Flash, bytesize.Format(d.FlashSize), bytesize.Exact(d.FlashBandwidth))
	}
	return s
}

// servingLine is the banner's http line, "" for plain HTTP/1.1 without
// signed URLs: the protocols, and the prefixes that need signed URLs.
func servingLine(s ServingDescription) string {
	var parts []string
	switch {
	case s.TLS:
		parts = append(parts, "TLS, HTTP/2 and HTTP/1.1")
	case s.H2C:
		parts = append(parts, "HTTP/1.1 and h2c")
	}
	if len(s.SignedPrefixes) > 0 {
		parts = append(parts, fmt.Sprintf("signed URLs for reads under %s (keys: %d)", strings.Join(s.SignedPrefixes, " "), s.SigningKeys))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ")
}
