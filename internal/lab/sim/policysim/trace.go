package policysim

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/progress"
)

// Trace formats that strata-lab sim policies --trace reads.
const (
	// FormatOracle is libCacheSim's oracleGeneral binary format: 24-byte
	// little-endian records (uint32 timestamp, uint64 obj_id, uint32
	// obj_size, int64 next_access_vtime), as writeOracleGeneral writes them.
	FormatOracle = "oracle"
	// FormatCSV is "time,key,size" a line: time in seconds (a decimal
	// number), key any string (quoted as CSV quotes when it holds a comma),
	// size in bytes; an optional header line and '#' comments.
	FormatCSV = "csv"
	// FormatStrata is Strata's JSON access log (httpapi.AccessEntry): one
	// object a line, of which time, method, path, status and bytes are read
	// and every other field is ignored.
	FormatStrata = "strata"
	// FormatCombined is the combined log format of nginx and Apache
	// ($remote_addr - $remote_user [$time_local] "$request" $status
	// $body_bytes_sent "$http_referer" "$http_user_agent"), with anything
	// after it (Strata's key=value fields, nginx's $request_time...)
	// ignored; the common log format (without referer and user agent) too.
	FormatCombined = "combined"
)

// TraceFormats are the formats, in the order the flag's help names them.
var TraceFormats = []string{FormatOracle, FormatCSV, FormatStrata, FormatCombined}

// oracleRecord is the size of an oracleGeneral record.
const oracleRecord = 24

// A ReadTrace is a trace file read into a Trace, with what was left out.
type ReadTrace struct {
	*Trace `json:"-"`
	File   string `json:"file"`
	Format string `json:"format"`
	// Records are the lines (text formats) or records (oracle) read.
	Records int `json:"records"`
	// Skipped counts the records left out by reason (a request that is
	// not a whole or partial GET answered with a body, a zero size).
	Skipped map[string]int `json:"skipped,omitempty"`
	// Resized is the number of objects requested with more than one size;
	// each is given its largest.
	Resized int `json:"resized,omitempty"`
	// Reordered is the number of requests stamped before the one above
	// them (a log written as requests end), moved to its time.
	Reordered int `json:"reordered,omitempty"`
}

// Footprint is the bytes of all distinct objects requested.
func (r *ReadTrace) Footprint() int64 {
	var n int64
	for _, s := range r.Cat.Sizes {
		n += s
	}
	return n
}

// A TraceError is a bad or truncated trace: the file and where in it.
type TraceError struct {
	File string
	// Line is the 1-based line of a text format; 0 for oracle.
	Line int
	// Offset is the byte offset of the bad record in an oracle file.
	Offset int64
	Err    error
}

func (e *TraceError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("trace %s: line %d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("trace %s: byte offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *TraceError) Unwrap() error { return e.Err }

// OpenTrace reads the trace at path in format ("" to detect it from the
// content: see DetectFormat). A gzip-compressed file is read through
// gzip. say, if set, hears every million records.
func OpenTrace(path, format string, say progress.Func) (*ReadTrace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseTrace(f, path, format, say)
}

// ParseTrace is OpenTrace on r, named name in errors and the report.
func ParseTrace(r io.Reader, name, format string, say progress.Func) (*ReadTrace, error) {
	if say == nil {
		say = progress.Discard
	}
	br := bufio.NewReaderSize(r, 1<<16)
	head, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &TraceError{File: name, Offset: 0, Err: fmt.Errorf("gzip: %w", err)}
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 1<<16)
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return nil, &TraceError{File: name, Err: errors.New("zstd-compressed (as libCacheSim's .zst traces): decompress it first (zstd -d)")}
	}
	if format == "" {
		peek, err := br.Peek(4096)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, &TraceError{File: name, Err: err}
		}
		if format, err = DetectFormat(peek, name); err != nil {
			return nil, err
		}
	}
	b := newTraceBuilder(name, format, say)
	var err error
	switch format {
	case FormatOracle:
		err = b.oracle(br)
	case FormatCSV:
		err = b.csv(br)
	case FormatStrata, FormatCombined:
		err = b.lines(br, format)
	default:
		return nil, fmt.Errorf("trace %s: unknown format %q (want %s)", name, format, strings.Join(TraceFormats, ", "))
	}
	if err != nil {
		return nil, err
	}
	return b.finish()
}

// combinedLine matches a combined (or common) log line: address, ident,
// user, [time], "request", status, bytes, then "referer" "user agent" and
// anything else, not read.
var combinedLine = regexp.MustCompile(`^(\S+) (\S+) (\S+) \[([^\]]+)\] "((?:[^"\\]|\\.)*)" (\d{3}) (\d+|-)(?:\s|$)`)

// DetectFormat tells a trace's format from its first bytes: binary
// content is oracleGeneral; text whose first line (past '#' comments) is
// a JSON object is Strata's access log, one that parses as a combined log
// line is combined, one of three comma-separated fields is CSV. Anything
// else is an error asking for --format.
func DetectFormat(head []byte, name string) (string, error) {
	if len(head) == 0 {
		return "", &TraceError{File: name, Err: errors.New("empty")}
	}
	if !isText(head) {
		return FormatOracle, nil
	}
	for _, line := range strings.Split(string(head), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		switch {
		case strings.HasPrefix(line, "{"):
			return FormatStrata, nil
		case combinedLine.MatchString(line):
			return FormatCombined, nil
		case strings.Count(line, ",") >= 2:
			if r, err := csv.NewReader(strings.NewReader(line)).Read(); err == nil && len(r) == 3 {
				return FormatCSV, nil
			}
		}
		return "", &TraceError{File: name, Line: 1, Err: fmt.Errorf("cannot tell the format from %q: pass --format (%s)",
			clip(line, 80), strings.Join(TraceFormats, ", "))}
	}
	return "", &TraceError{File: name, Err: errors.New("no request in the first 4 KiB: pass --format")}
}

// isText reports whether b looks like text: valid UTF-8 (but for a rune
// cut at the end) without control bytes other than tab, CR and LF.
func isText(b []byte) bool {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return len(b)-i < utf8.UTFMax && !utf8.FullRune(b[i:])
		}
		if r < 0x20 && r != '\t' && r != '\r' && r != '\n' || r == 0x7f {
			return false
		}
		i += n
	}
	return true
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// traceBuilder collects requests as they are read.
type traceBuilder struct {
	rt    *ReadTrace
	say   progress.Func
	index map[string]int32
	sizes []int64
	first []int64 // the first size each object was seen with
	// resized marks objects seen with more than one size.
	resized map[int32]bool
	start   time.Time
	last    time.Duration
}

func newTraceBuilder(name, format string, say progress.Func) *traceBuilder {
	return &traceBuilder{rt: &ReadTrace{Trace: &Trace{Workload: "trace"}, File: name, Format: format,
		Skipped: map[string]int{}}, say: say, index: map[string]int32{}, resized: map[int32]bool{}}
}

// skip counts a record left out.
func (b *traceBuilder) skip(reason string) { b.rt.Skipped[reason]++ }

// record counts a record read.
func (b *traceBuilder) record() {
	b.rt.Records++
	if b.rt.Records%(1<<20) == 0 {
		b.say("trace %s: %d records read, %d requests", b.rt.File, b.rt.Records, len(b.rt.Reqs))
	}
}

// add appends a request of key, size bytes, at; sizes of 0 are skipped.
func (b *traceBuilder) add(key string, size int64, at time.Time) error {
	if size == 0 {
		b.skip("size 0")
		return nil
	}
	id, ok := b.index[key]
	if !ok {
		if len(b.sizes) >= math.MaxInt32 {
			return errors.New("more than 2^31 objects")
		}
		id = int32(len(b.sizes))
		b.index[key] = id
		b.rt.Cat.Keys = append(b.rt.Cat.Keys, key)
		b.sizes = append(b.sizes, size)
		b.first = append(b.first, size)
	} else if size != b.first[id] {
		b.resized[id] = true
		b.sizes[id] = max(b.sizes[id], size)
	}
	if len(b.rt.Reqs) == 0 {
		b.start = at
	}
	d := at.Sub(b.start)
	if d < b.last {
		b.rt.Reordered++
		d = b.last
	}
	b.last = d
	b.rt.Reqs = append(b.rt.Reqs, id)
	b.rt.Times = append(b.rt.Times, d)
	return nil
}

func (b *traceBuilder) finish() (*ReadTrace, error) {
	rt := b.rt
	if len(rt.Reqs) == 0 {
		return nil, &TraceError{File: rt.File, Line: max(rt.Records, 1), Err: fmt.Errorf("no request to replay in %d records (%s format; skipped: %v)",
			rt.Records, rt.Format, rt.Skipped)}
	}
	rt.Cat.Sizes = b.sizes
	rt.Resized = len(b.resized)
	if len(rt.Skipped) == 0 {
		rt.Skipped = nil
	}
	return rt, nil
}

// oracle reads oracleGeneral records; obj_id is the key (in decimal),
// next_access_vtime is not read (the replay computes its own).
func (b *traceBuilder) oracle(r io.Reader) error {
	b.rt.Cat = &des.Catalog{}
	var rec [oracleRecord]byte
	var off int64
	for {
		n, err := io.ReadFull(r, rec[:])
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, io.ErrUnexpectedEOF):
			return &TraceError{File: b.rt.File, Offset: off, Err: fmt.Errorf("truncated record: %d of %d bytes "+
				"(libCacheSim's oracleGeneral is %d-byte records: uint32 time, uint64 id, uint32 size, int64 next access)", n, oracleRecord, oracleRecord)}
		case err != nil:
			return &TraceError{File: b.rt.File, Offset: off, Err: err}
		}
		b.record()
		ts := binary.LittleEndian.Uint32(rec[0:])
		id := binary.LittleEndian.Uint64(rec[4:])
		size := binary.LittleEndian.Uint32(rec[12:])
		next := int64(binary.LittleEndian.Uint64(rec[16:]))
		if next < -1 {
			return &TraceError{File: b.rt.File, Offset: off, Err: fmt.Errorf("next access %d is not an index or -1: "+
				"not an oracleGeneral file (or misaligned)", next)}
		}
		if err := b.add(strconv.FormatUint(id, 10), int64(size), time.Unix(int64(ts), 0)); err != nil {
			return &TraceError{File: b.rt.File, Offset: off, Err: err}
		}
		off += oracleRecord
	}
}

// csv reads time,key,size lines.
func (b *traceBuilder) csv(r io.Reader) error {
	b.rt.Cat = &des.Catalog{}
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = 3
	cr.ReuseRecord = true
	first := true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return &TraceError{File: b.rt.File, Line: pe.Line, Err: fmt.Errorf("%v (want time,key,size)", pe.Err)}
			}
			return &TraceError{File: b.rt.File, Line: max(line, 1), Err: err}
		}
		b.record()
		ts, terr := strconv.ParseFloat(strings.TrimSpace(rec[0]), 64)
		size, serr := strconv.ParseInt(strings.TrimSpace(rec[2]), 10, 64)
		if first && terr != nil && serr != nil {
			first = false // a header line
			b.rt.Records--
			continue
		}
		first = false
		switch {
		case terr != nil || math.IsNaN(ts) || math.IsInf(ts, 0) || ts < 0 || ts > 1e12:
			return &TraceError{File: b.rt.File, Line: line, Err: fmt.Errorf("time %q is not a number of seconds", rec[0])}
		case serr != nil || size < 0:
			return &TraceError{File: b.rt.File, Line: line, Err: fmt.Errorf("size %q is not a number of bytes", rec[2])}
		case rec[1] == "":
			return &TraceError{File: b.rt.File, Line: line, Err: errors.New("empty key")}
		}
		sec, frac := math.Modf(ts)
		if err := b.add(rec[1], size, time.Unix(int64(sec), int64(frac*1e9))); err != nil {
			return &TraceError{File: b.rt.File, Line: line, Err: err}
		}
	}
}

// maxLine bounds a log line.
const maxLine = 1 << 20

// accessLine is what the replay reads of a Strata access log line; other
// fields (tier, cache, upstream_*, user_agent...) are ignored.
type accessLine struct {
	Time   *time.Time `json:"time"`
	Method string     `json:"method"`
	Path   *string    `json:"path"`
	Status int        `json:"status"`
	Bytes  *int64     `json:"bytes"`
}

// lines reads a Strata JSON or a combined access log.
func (b *traceBuilder) lines(r io.Reader, format string) error {
	b.rt.Cat = &des.Catalog{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		b.record()
		var err error
		if format == FormatStrata {
			err = b.strataLine(line)
		} else {
			err = b.combinedLine(line)
		}
		if err != nil {
			return &TraceError{File: b.rt.File, Line: n, Err: err}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("line longer than %d bytes", maxLine)
		}
		return &TraceError{File: b.rt.File, Line: n + 1, Err: err}
	}
	return nil
}

func (b *traceBuilder) strataLine(line []byte) error {
	var e accessLine
	if err := json.Unmarshal(line, &e); err != nil {
		return fmt.Errorf("not a JSON access log line: %v", err)
	}
	switch {
	case e.Time == nil:
		return errors.New(`no "time" field`)
	case e.Path == nil || *e.Path == "":
		return errors.New(`no "path" field`)
	case e.Bytes == nil:
		return errors.New(`no "bytes" field`)
	case *e.Bytes < 0:
		return fmt.Errorf("bytes %d", *e.Bytes)
	}
	return b.request(e.Method, *e.Path, e.Status, *e.Bytes, *e.Time)
}

func (b *traceBuilder) combinedLine(line []byte) error {
	m := combinedLine.FindSubmatch(line)
	if m == nil {
		return fmt.Errorf("not a combined log line: %q", clip(string(line), 120))
	}
	at, err := time.Parse("02/Jan/2006:15:04:05 -0700", string(m[4]))
	if err != nil {
		return fmt.Errorf("time [%s]: want [02/Jan/2006:15:04:05 -0700] ($time_local)", m[4])
	}
	req := strings.Fields(string(m[5]))
	if len(req) < 2 {
		b.skip("malformed request")
		return nil
	}
	status, _ := strconv.Atoi(string(m[6]))
	var n int64
	if string(m[7]) != "-" {
		if n, err = strconv.ParseInt(string(m[7]), 10, 64); err != nil {
			return fmt.Errorf("bytes %q", m[7])
		}
	}
	return b.request(req[0], req[1], status, n, at)
}

// request adds a logged request: a GET answered 200 or 206 with a body is
// a request of its path (without the query), of the largest body seen for
// that path; anything else is counted as skipped.
func (b *traceBuilder) request(method, target string, status int, n int64, at time.Time) error {
	switch {
	case method != "" && method != "GET":
		b.skip("method " + method)
		return nil
	case status != 0 && status != 200 && status != 206:
		b.skip("status " + strconv.Itoa(status))
		return nil
	case n == 0:
		b.skip("no body")
		return nil
	}
	if i := strings.IndexByte(target, '?'); i >= 0 {
		target = target[:i]
	}
	return b.add(target, n, at)
}

// skippedReasons are the reasons in a stable order.
func (r *ReadTrace) skippedReasons() []string {
	var out []string
	for k := range r.Skipped {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
