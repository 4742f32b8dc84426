package edge

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Purge by tag (Fastly's surrogate keys, Varnish's xkey, Cloudflare's
// Cache-Tag): an origin names what a response belongs to in its
// Surrogate-Key or Cache-Tag field (keys separated by spaces or commas),
// and POST /admin/purge?tag=KEY drops every stored response carrying KEY.
//
// The fields are stored with the response in its record's header block
// (record.go), so a record read back from flash after a restart still
// says its tags. A tag purge is two things:
//
//   - the responses the handler knows carry the tag (stored or read since
//     it started: the tag index) are dropped at once, durably, and
//     counted;
//   - a ban is recorded, the tag and the time: a stored response carrying
//     the tag whose request was sent before that time is dropped
//     when it is next looked up, instead of served (Varnish's ban list).
//     That covers the responses stored before a restart and not read
//     since. With Options.TagPurgeFile the bans are appended to a file,
//     synced before the purge answers, and read back at start.

// Header fields that carry a response's purge tags.
const (
	HeaderSurrogateKey = "Surrogate-Key"
	HeaderCacheTag     = "Cache-Tag"
)

// Bounds of the tag machinery.
const (
	// MaxTagLen is the longest tag: longer ones are ignored in
	// responses and refused in purges.
	MaxTagLen = 256
	// maxTagsPerResponse bounds the tags read from one response.
	maxTagsPerResponse = 128
	// maxIndexed bounds the (tag, response) pairs of the tag index; past
	// it the index starts over (the bans still catch what it forgot).
	maxIndexed = 1 << 20
	// MaxBans bounds the tags with a ban; past it the oldest ban is
	// forgotten, with a warning.
	MaxBans = 1 << 16
)

// ErrBadTag refuses a purge tag that is empty, too long, or has a space,
// comma or control character.
var ErrBadTag = errors.New("edge: a tag is 1 to 256 visible characters, without commas")

// validTag reports whether t can be a tag.
func validTag(t string) bool {
	if t == "" || len(t) > MaxTagLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c <= ' ' || c == ',' || c == 0x7f {
			return false
		}
	}
	return true
}

// tagsOf returns the purge tags a stored response's header names.
func tagsOf(h http.Header) []string {
	var out []string
	for _, name := range []string{HeaderSurrogateKey, HeaderCacheTag} {
		for _, line := range h[name] {
			for t := range strings.FieldsFuncSeq(line, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
				if len(out) == maxTagsPerResponse {
					return out
				}
				if validTag(t) {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// tagState is the handler's tag index and bans.
type tagState struct {
	nbans atomic.Int64 // len(bans), read without the lock on every lookup
	mu    sync.Mutex
	// index maps a tag to the variant key directories of the responses
	// known to carry it; indexed counts the pairs.
	index   map[string]map[string]struct{}
	indexed int
	// bans maps a tag to the time of its last purge.
	bans map[string]time.Time
	file string // "" without a file
}

// note records in the tag index that the response stored under the
// variant directory v carries its record's tags.
func (h *Handler) noteTags(v string, rec *record) {
	tags := tagsOf(rec.entry.Header)
	if len(tags) == 0 {
		return
	}
	ts := &h.tags
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.indexed+len(tags) > maxIndexed {
		ts.index, ts.indexed = map[string]map[string]struct{}{}, 0
	}
	for _, t := range tags {
		m := ts.index[t]
		if m == nil {
			m = map[string]struct{}{}
			ts.index[t] = m
		}
		if _, ok := m[v]; !ok {
			m[v] = struct{}{}
			ts.indexed++
		}
	}
}

// banned reports whether rec carries a tag purged after its request was
// sent: it must not be served.
func (h *Handler) banned(rec *record) bool {
	if h.tags.nbans.Load() == 0 {
		return false
	}
	tags := tagsOf(rec.entry.Header)
	if len(tags) == 0 {
		return false
	}
	ts := &h.tags
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range tags {
		if at, ok := ts.bans[t]; ok && rec.entry.RequestTime.Before(at) {
			return true
		}
	}
	return false
}

// PurgeTags drops every stored response carrying one of tags: those the
// tag index knows at once (counted in the result), the others when next
// looked up (the ban). It returns once the ban is durable (with
// TagPurgeFile) and the known responses' invalidation too.
func (h *Handler) PurgeTags(tags []string) (Purged, error) {
	for _, t := range tags {
		if !validTag(t) {
			return Purged{}, fmt.Errorf("%w: %q", ErrBadTag, clip(t))
		}
	}
	h.stats.purges.Add(1)
	now := h.opts.Now()
	ts := &h.tags
	ts.mu.Lock()
	if err := ts.appendBans(tags, now); err != nil {
		ts.mu.Unlock()
		return Purged{}, err
	}
	var dirs []string
	for _, t := range tags {
		ts.bans[t] = now
		for v := range ts.index[t] {
			dirs = append(dirs, v)
		}
		ts.indexed -= len(ts.index[t])
		delete(ts.index, t)
	}
	for len(ts.bans) > MaxBans {
		oldest, at := "", time.Time{}
		for t, a := range ts.bans {
			if oldest == "" || a.Before(at) {
				oldest, at = t, a
			}
		}
		delete(ts.bans, oldest)
		h.log.Warn("forgetting the oldest tag purge: too many tags purged", "tag", oldest, "purged_at", at, "max", MaxBans)
	}
	ts.nbans.Store(int64(len(ts.bans)))
	ts.mu.Unlock()
	var p Purged
	for _, v := range dirs {
		d, err := h.invalidateCounted(v)
		if err != nil {
			return p, err
		}
		p.Objects += d.Objects
		p.Bytes += d.Bytes
	}
	return p, nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// The ban file holds one line per purged tag:
//
//	<CRC-32C of the rest, 8 hex digits> <purge time, Unix ns> <tag>
//
// appended and synced before a purge answers; a line that does not
// check (a torn append, whose purge was never acknowledged) is skipped.
var banTable = crc32.MakeTable(crc32.Castagnoli)

func banLine(tag string, at time.Time) []byte {
	rest := strconv.FormatInt(at.UnixNano(), 10) + " " + tag
	return fmt.Appendf(nil, "%08x %s\n", crc32.Checksum([]byte(rest), banTable), rest)
}

// appendBans appends the bans of tags at now to the file, synced. The
// caller holds ts.mu.
func (ts *tagState) appendBans(tags []string, now time.Time) error {
	if ts.file == "" {
		return nil
	}
	f, err := os.OpenFile(ts.file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return fmt.Errorf("edge: recording a tag purge: %w", err)
	}
	var b []byte
	for _, t := range tags {
		b = append(b, banLine(t, now)...)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("edge: recording a tag purge: %w", err)
	}
	return nil
}

// loadBans reads the ban file, if any, into ts, and rewrites it when it
// holds many superseded lines. It returns the lines it skipped.
func (ts *tagState) loadBans() (skipped int, err error) {
	data, err := os.ReadFile(ts.file)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("edge: reading the tag purges: %w", err)
	}
	lines := 0
	// Line by line, however long: a bufio.Scanner stops at a line past
	// its buffer (a damaged file), and every purge after it was lost.
	for line := range bytes.Lines(data) {
		lines++
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		sum, rest, ok := strings.Cut(string(line), " ")
		ns, tag, ok2 := strings.Cut(rest, " ")
		want, err1 := strconv.ParseUint(sum, 16, 32)
		at, err2 := strconv.ParseInt(ns, 10, 64)
		if !ok || !ok2 || err1 != nil || err2 != nil || uint32(want) != crc32.Checksum([]byte(rest), banTable) || !validTag(tag) {
			skipped++
			continue
		}
		if t := time.Unix(0, at); t.After(ts.bans[tag]) {
			ts.bans[tag] = t
		}
	}
	ts.nbans.Store(int64(len(ts.bans)))
	if lines > 2*len(ts.bans)+1024 {
		return skipped, ts.rewriteBans()
	}
	return skipped, nil
}

// rewriteBans replaces the ban file with one line per ban, atomically.
func (ts *tagState) rewriteBans() error {
	var b []byte
	for t, at := range ts.bans {
		b = append(b, banLine(t, at)...)
	}
	tmp := ts.file + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return fmt.Errorf("edge: compacting the tag purges: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, ts.file)
	}
	if err == nil {
		if d, derr := os.Open(filepath.Dir(ts.file)); derr == nil {
			d.Sync() //nolint:errcheck // the rename is done; a lost sync keeps the old, longer file
			d.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("edge: compacting the tag purges: %w", err)
	}
	return nil
}
