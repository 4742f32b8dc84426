package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Write sends v as indented JSON with status code and the Cache-Control
// header cacheControl: the one JSON writer of the API, so that /stats,
// /videos, uploads and the image API answer alike. An encoding error
// after the header has gone out cannot be reported to the client; it is
// returned for logging.
func Write(w http.ResponseWriter, code int, cacheControl string, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", cacheControl)
	w.WriteHeader(code)
	return writeIndented(w, v)
}

// EncodeJSON writes v to w as Write does (indented, numbers in plain
// decimals), for answers that set their own header.
func EncodeJSON(w io.Writer, v any) error { return writeIndented(w, v) }

func writeIndented(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(PlainNumbers(b.Bytes()))
	return err
}

// maxFraction bounds the decimals of a number PlainNumbers rewrites:
// nanoseconds of a value in seconds; anything smaller is 0.
const maxFraction = 9

// PlainNumbers rewrites the numbers of the JSON text b that
// encoding/json writes in scientific notation (below 1e-6 and from 1e21
// on: an age of 4.9e-8 s, a byte counter of 1e21) as plain decimals, at
// most maxFraction of them ("0.000000049", "0"), so that no reader has to
// decode an exponent. Strings are left alone. It returns b itself when
// there is nothing to rewrite.
func PlainNumbers(b []byte) []byte {
	var out []byte
	last, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(b) && strings.IndexByte("0123456789.eE+-", b[j]) >= 0 {
				j++
			}
			num := b[i:j]
			if bytes.IndexAny(num, "eE") >= 0 {
				if f, err := strconv.ParseFloat(string(num), 64); err == nil {
					out = append(out, b[last:i]...)
					out = appendPlain(out, f)
					last = j
				}
			}
			i = j - 1
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// appendPlain appends f in plain decimals, at most maxFraction of them,
// trailing zeros trimmed.
func appendPlain(out []byte, f float64) []byte {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if dot := strings.IndexByte(s, '.'); dot >= 0 && len(s)-dot-1 > maxFraction {
		s = strings.TrimRight(strconv.FormatFloat(f, 'f', maxFraction, 64), "0")
		s = strings.TrimSuffix(s, ".")
		if s == "-0" {
			s = "0"
		}
	}
	return append(out, s...)
}
