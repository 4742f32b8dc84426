package front

import (
	"bytes"
	"net/http"
	"net/url"
)

// The Front's request parser: a strict subset of HTTP/1.1 (RFC 9112). It
// accepts what it can answer exactly as net/http would, and reports false
// for everything else, which then goes to net/http whole: it never has to
// be right about what it does not accept.

// headerEnd returns the length of the request header at the start of b
// (through its empty line), 0 if b does not hold all of it yet, and -1
// if b has a line ending in a bare LF (which net/http reads and the Front
// leaves to it).
func headerEnd(b []byte) int {
	from := 0
	for {
		i := bytes.IndexByte(b[from:], '\n')
		if i < 0 {
			return 0
		}
		i += from
		if i == 0 || b[i-1] != '\r' {
			return -1
		}
		if i >= 3 && b[i-2] == '\n' && b[i-3] == '\r' {
			return i + 1
		}
		from = i + 1
	}
}

// maxFrontFields bounds the header fields of a request the Front takes.
const maxFrontFields = 64

// parse reads the request header b (headerEnd's) into fc.req, and
// reports whether it is a request the Front takes: a GET or HEAD of an
// origin-form path of unreserved characters and "/", HTTP/1.1, one valid
// Host, fields net/http would accept, and nothing that gives the request
// a body or changes what the connection does next.
func (fc *frontConn) parse(b []byte) bool {
	var method string
	switch {
	case bytes.HasPrefix(b, []byte("GET /")):
		method, b = http.MethodGet, b[4:]
	case bytes.HasPrefix(b, []byte("HEAD /")):
		method, b = http.MethodHead, b[5:]
	default:
		return false
	}
	sp := bytes.IndexByte(b, ' ')
	if sp < 0 {
		return false
	}
	target := b[:sp]
	for _, c := range target {
		if !pathChar[c] {
			return false
		}
	}
	b, ok := bytes.CutPrefix(b[sp:], []byte(" HTTP/1.1\r\n"))
	if !ok {
		return false
	}

	clear(fc.hdr)
	fc.vals = fc.vals[:0]
	cur := fc.cur[:0] // this request's fields
	var host string
	hosts := 0
	for n := 0; ; n++ {
		eol := bytes.Index(b, []byte("\r\n"))
		if eol < 0 || n > maxFrontFields {
			return false
		}
		line := b[:eol]
		b = b[eol+2:]
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return false // no name, or a continuation line (obs-fold starts with white space: not a token)
		}
		name, value := line[:colon], trimOWS(line[colon+1:])
		for _, c := range name {
			if !tokenChar[c] {
				return false
			}
		}
		for _, c := range value {
			if c < ' ' && c != '\t' || c == 0x7f {
				return false
			}
		}
		key := fc.key(name)
		switch key {
		case "Content-Length", "Transfer-Encoding", "Expect", "Upgrade", "Http2-Settings", "Trailer":
			return false // a body, or a connection that is to change protocol
		case "Connection":
			if !bytes.EqualFold(value, []byte("keep-alive")) {
				return false // close, or hop-by-hop fields net/http acts on
			}
		case "Host":
			hosts++
			for _, c := range value {
				if !hostChar[c] {
					return false
				}
			}
		}
		v := fc.value(len(cur), key, value)
		cur = append(cur, headerLine{key, v})
		if key == "Host" {
			host = v
			continue // net/http keeps it in r.Host only
		}
		fc.vals = append(fc.vals, v)
		k := len(fc.vals)
		if old, ok := fc.hdr[key]; ok {
			fc.hdr[key] = append(old, v)
		} else {
			fc.hdr[key] = fc.vals[k-1 : k : k]
		}
	}
	if hosts != 1 {
		return false
	}
	if len(b) != 0 {
		return false // headerEnd's end is the empty line's
	}
	// net/http's fixPragmaCacheControl.
	if p, ok := fc.hdr["Pragma"]; ok && len(p) > 0 && p[0] == "no-cache" {
		if _, ok := fc.hdr["Cache-Control"]; !ok {
			fc.hdr["Cache-Control"] = []string{"no-cache"}
		}
	}
	fc.prev, fc.cur = cur, fc.prev

	path := fc.path(target)
	fc.url = url.URL{Path: path}
	r := fc.req
	*r = *fc.tmpl
	r.Method = method
	r.URL = &fc.url
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	r.Header = fc.hdr
	r.Body = http.NoBody
	r.Host = host
	r.RemoteAddr = fc.remote
	r.RequestURI = path
	return true
}

// key returns the canonical form of the field name b (as net/http's
// textproto), without allocating for the names players and caches send.
func (fc *frontConn) key(b []byte) string {
	var buf [64]byte
	if len(b) > len(buf) {
		return http.CanonicalHeaderKey(string(b))
	}
	c := buf[:len(b)]
	upper := true
	for i, x := range b {
		switch {
		case upper && 'a' <= x && x <= 'z':
			x -= 'a' - 'A'
		case !upper && 'A' <= x && x <= 'Z':
			x += 'a' - 'A'
		}
		c[i] = x
		upper = x == '-'
	}
	if k, ok := commonKeys[string(c)]; ok {
		return k
	}
	return string(c)
}

// value returns value as a string: the previous request's string if the
// field at the same place had the same name and value (a client sends
// the same fields on each request of a connection).
func (fc *frontConn) value(i int, key string, value []byte) string {
	if i < len(fc.prev) && fc.prev[i].key == key && fc.prev[i].value == string(value) {
		return fc.prev[i].value
	}
	return string(value)
}

// path returns target as a string, the previous request's if the same.
func (fc *frontConn) path(target []byte) string {
	if fc.url.Path == string(target) {
		return fc.url.Path
	}
	return string(target)
}

// trimOWS trims the optional white space around a field value.
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// validFieldName reports whether k is a token (RFC 9110 §5.1): net/http
// drops response fields whose name is not.
func validFieldName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !tokenChar[k[i]] {
			return false
		}
	}
	return true
}

// commonKeys are the interned field names of the requests players and
// caches send.
var commonKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"Accept", "Accept-Encoding", "Accept-Language", "Cache-Control", "Connection",
		"Cookie", "Dnt", "Host", "If-Modified-Since", "If-None-Match", "If-Range", "Origin", "Pragma", "Range",
		"Referer", "Sec-Ch-Ua", "Sec-Ch-Ua-Mobile", "Sec-Ch-Ua-Platform", "Sec-Fetch-Dest", "Sec-Fetch-Mode",
		"Sec-Fetch-Site", "User-Agent", "Via", "X-Forwarded-For", "X-Request-Id", "Content-Length",
		"Transfer-Encoding", "Expect", "Upgrade", "Http2-Settings", "Trailer", "If-Match", "If-Unmodified-Since",
		"Priority", "Te", "Forwarded"} {
		m[k] = k
	}
	return m
}()

// byte classes of the parser.
var tokenChar, pathChar, hostChar [256]bool

func init() {
	for c := 0; c < 256; c++ {
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		tokenChar[c] = alnum || c < 0x80 && bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), byte(c)) >= 0
		// Unreserved characters and "/": a path url.Parse leaves as it
		// is (RawPath empty, nothing to unescape). The rest (%, ?, and
		// the sub-delimiters) goes to net/http.
		pathChar[c] = alnum || c < 0x80 && bytes.IndexByte([]byte("-._~/"), byte(c)) >= 0
		hostChar[c] = alnum || c < 0x80 && bytes.IndexByte([]byte("-._:[]"), byte(c)) >= 0
	}
}
