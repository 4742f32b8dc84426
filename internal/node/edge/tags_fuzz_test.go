package edge

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzTagsOf: the purge tags of a response's Surrogate-Key and Cache-Tag
// fields are its space-, comma- or tab-separated tokens that can be tags
// (validTag), in order, at most maxTagsPerResponse (the reference below);
// written back as one field they read the same.
func FuzzTagsOf(f *testing.F) {
	f.Add("title-1 seg", "a,b,,c")
	f.Add("  \t,", "x\x00y z")
	f.Add(strings.Repeat("t ", 200), "")
	f.Add("\xff\xfe bad", strings.Repeat("x", 300))
	f.Fuzz(func(t *testing.T, sk, ct string) {
		h := http.Header{}
		for _, v := range strings.Split(sk, "\n") {
			h.Add(HeaderSurrogateKey, v)
		}
		h.Add(HeaderCacheTag, ct)
		got := tagsOf(h)
		var want []string
		for _, line := range slices.Concat(h[HeaderSurrogateKey], h[HeaderCacheTag]) {
			for _, tok := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
				if validTag(tok) && len(want) < maxTagsPerResponse {
					want = append(want, tok)
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("tags of %q, %q: %q, want %q", sk, ct, got, want)
		}
		for _, tag := range got {
			if !validTag(tag) || len(tag) > MaxTagLen {
				t.Fatalf("tag %q is not a tag", tag)
			}
		}
		back := tagsOf(http.Header{HeaderCacheTag: {strings.Join(got, ", ")}})
		if !slices.Equal(back, got) {
			t.Fatalf("written back: %q, read %q", got, back)
		}
	})
}

// FuzzBanFile: whatever the purge file holds (torn appends, garbage,
// lines of any length), loading it never fails but on I/O, keeps only
// bans of valid tags, and every well-formed line written after the
// garbage (banLine) is read back: a damaged line never hides a purge.
func FuzzBanFile(f *testing.F) {
	f.Add([]byte("0000 1 x\n"), "title-1", int64(1))
	f.Add([]byte("deadbeef 17 tag\nnot a line"), "a", int64(1e18))
	f.Add(bytes.Repeat([]byte("x"), 70<<10), "after-a-long-line", int64(5))
	f.Add([]byte{}, "t", int64(-3))
	f.Fuzz(func(t *testing.T, garbage []byte, tag string, ns int64) {
		if !validTag(tag) {
			return
		}
		at := time.Unix(0, ns)
		data := slices.Concat(garbage, []byte("\n"), banLine(tag, at), []byte("\n"))
		file := filepath.Join(t.TempDir(), "bans")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		ts := tagState{bans: map[string]time.Time{}, file: file}
		if _, err := ts.loadBans(); err != nil {
			t.Fatalf("loading: %v", err)
		}
		for b := range ts.bans {
			if !validTag(b) {
				t.Fatalf("ban of %q, not a tag", b)
			}
		}
		if got, ok := ts.bans[tag]; !ok || got.Before(at) {
			t.Fatalf("the ban of %q at %d after %d bytes of garbage: read %v, %v", tag, ns, len(garbage), got, ok)
		}
		if int(ts.nbans.Load()) != len(ts.bans) {
			t.Fatalf("nbans %d, %d bans", ts.nbans.Load(), len(ts.bans))
		}
	})
}
