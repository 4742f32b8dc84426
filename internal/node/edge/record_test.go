package edge

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/httpcache"
)

func sampleRecord() *record {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	return &record{
		entry: httpcache.Entry{
			Status:       200,
			Header:       http.Header{"Etag": {`"v1"`}, "Cache-Control": {"max-age=60", "public"}, "Empty": {}},
			RequestTime:  t0,
			ResponseTime: t0.Add(20 * time.Millisecond),
			Lifetime:     time.Minute,
			Heuristic:    true,
			Variant:      `accept-encoding="gzip"`,
		},
		id:       0xfeedface,
		offset:   1 << 20,
		complete: 3 << 20,
		body:     bytes.Repeat([]byte("slice"), 100),
	}
}

// A record decodes to what was encoded, headers, times and body included.
func TestRecordRoundTrip(t *testing.T) {
	r := sampleRecord()
	got, err := decodeRecord(r.encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, r)
	}
}

// Every flipped byte and every truncation is detected as ErrCorrupt.
func TestRecordCorruption(t *testing.T) {
	b := sampleRecord().encode()
	for i := range b {
		c := bytes.Clone(b)
		c[i] ^= 0x10
		if _, err := decodeRecord(c); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: err %v", i, err)
		}
	}
	for n := range len(b) {
		if _, err := decodeRecord(b[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: err %v", n, err)
		}
	}
}

// FuzzDecodeRecord checks that decoding never panics and that what decodes
// encodes back to the same bytes.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(sampleRecord().encode())
	f.Add([]byte("SEC1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			return
		}
		if got := r.encode(); !bytes.Equal(got, b) {
			// Header blocks that decode may still differ in field order
			// or duplicate names; only a clean re-decode is required.
			if _, err := decodeRecord(got); err != nil {
				t.Fatalf("re-encoding does not decode: %v", err)
			}
		}
	})
}
