package httpapi

import (
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// Access log formats (AccessLog.SetFormat).
const (
	// AccessLogJSON is one JSON object per line (AccessEntry).
	AccessLogJSON = "json"
	// AccessLogCombined is the "combined" text format of Apache and
	// nginx, with Strata's fields appended.
	AccessLogCombined = "combined"
)

// ParseAccessLogFormat checks an access log format name: json or
// combined.
func ParseAccessLogFormat(s string) (string, error) {
	switch s {
	case AccessLogJSON, AccessLogCombined:
		return s, nil
	}
	return "", fmt.Errorf("access log format %q: want json or combined", s)
}

// SetFormat sets the format of the lines (json or combined;
// ParseAccessLogFormat), before the log is used.
func (l *AccessLog) SetFormat(format string) error {
	f, err := ParseAccessLogFormat(format)
	if err != nil {
		return err
	}
	l.format = f
	return nil
}

// appendCombined appends e in the combined format, as nginx's
// log_format combined writes it, followed by Strata's fields:
//
//	10.0.0.7 - - [24/Nov/2026:01:02:03 +0000] "GET /videos/t/1.m4s HTTP/1.1" 200 524288 "-" "curl/8.5.0" rt=0.002 cache=HIT tier=ram
//
// then, for a request that reached an upstream, upstream_status (- for
// no answer), upstream_ms and upstream_bytes; request_id when the request
// had one. The address is the connection's host without its port; the
// query string is never logged; quotes, backslashes and control bytes in
// the quoted fields are escaped as \xHH (nginx's escape=default).
func appendCombined(b []byte, e *AccessEntry) []byte {
	host := e.RemoteAddr
	if i := lastColon(host); i >= 0 {
		host = host[:i]
	}
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	b = append(b, orDash(host)...)
	b = append(b, " - - ["...)
	b = e.Time.In(time.UTC).AppendFormat(b, "02/Jan/2006:15:04:05 -0700")
	b = append(b, "] \""...)
	b = appendEscaped(b, e.Method)
	b = append(b, ' ')
	b = appendEscaped(b, e.Path)
	b = append(b, ' ')
	b = appendEscaped(b, e.Proto)
	b = append(b, "\" "...)
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, e.Bytes, 10)
	b = append(b, " \""...)
	b = appendEscaped(b, orDash(e.Referer))
	b = append(b, "\" \""...)
	b = appendEscaped(b, orDash(e.UserAgent))
	b = append(b, "\" rt="...)
	b = strconv.AppendFloat(b, e.DurationMS/1000, 'f', 3, 64)
	b = append(b, " cache="...)
	b = appendEscaped(b, orDash(e.Cache))
	b = append(b, " tier="...)
	b = appendEscaped(b, orDash(e.Tier))
	if e.UpstreamBytes != nil {
		b = append(b, " upstream_status="...)
		if e.UpstreamStatus == 0 {
			b = append(b, '-')
		} else {
			b = strconv.AppendInt(b, int64(e.UpstreamStatus), 10)
		}
		b = append(b, " upstream_bytes="...)
		b = strconv.AppendInt(b, *e.UpstreamBytes, 10)
	}
	if e.UpstreamMS != nil {
		b = append(b, " upstream_ms="...)
		b = strconv.AppendFloat(b, *e.UpstreamMS, 'f', 3, 64)
	}
	if e.RequestID != "" {
		b = append(b, " request_id="...)
		b = appendEscaped(b, e.RequestID)
	}
	return b
}

// lastColon is the index of the port's colon in host:port, -1 if none.
func lastColon(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ':':
			return i
		case ']':
			return -1
		}
	}
	return -1
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// appendEscaped appends s with '"', '\\', spaces outside the printable
// ASCII range, control bytes and invalid UTF-8 escaped as \xHH, so that a
// field never ends early or splits a line.
func appendEscaped(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			if r, n := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError {
				b = append(b, s[i:i+n]...)
				i += n
				continue
			}
		}
		if c < 0x20 || c == 0x7f || c == '"' || c == '\\' || c >= 0x80 {
			b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
		} else {
			b = append(b, c)
		}
		i++
	}
	return b
}
