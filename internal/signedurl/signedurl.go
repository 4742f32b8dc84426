// Package signedurl signs and checks URLs that grant reads of a path
// prefix until an expiry: an HMAC-SHA256 over the prefix and the expiry,
// the scheme of nginx's secure_link and of CDN token authentication,
// with several active keys named by id so that keys rotate.
//
// A signed URL carries four query parameters:
//
//	exp     expiry, Unix seconds (decimal)
//	prefix  the path prefix the signature covers ('/' first); absent:
//	        the signature covers exactly the request path
//	kid     the id of the key that signed
//	sig     lowercase hex of HMAC-SHA256(secret, exp + "\n" + prefix)
//
// so that, with a shell:
//
//	printf '%s\n%s' "$exp" "$prefix" | openssl dgst -sha256 -hmac "$secret" -r | cut -d' ' -f1
//
// prints sig. The package does no I/O and reads no clock: the time is
// passed in.
package signedurl

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// The query parameters of a signed URL.
const (
	ParamExpires   = "exp"
	ParamPrefix    = "prefix"
	ParamKeyID     = "kid"
	ParamSignature = "sig"
)

// Limits on what a request may carry, so that checking a hostile URL
// costs little.
const (
	// MaxPrefix bounds the signed prefix, bytes.
	MaxPrefix = 1024
	// MaxKeyID bounds a key id, bytes.
	MaxKeyID = 64
	// MinSecret is the shortest accepted secret, bytes.
	MinSecret = 16
)

// Why a URL is refused. The client is told none of this (it answers 403
// alike); the log is.
var (
	ErrMissing      = errors.New("signedurl: no signature")
	ErrMalformed    = errors.New("signedurl: malformed signature parameters")
	ErrExpired      = errors.New("signedurl: expired")
	ErrUnknownKey   = errors.New("signedurl: unknown key id")
	ErrBadSignature = errors.New("signedurl: bad signature")
	ErrOutside      = errors.New("signedurl: path outside the signed prefix")
	ErrKey          = errors.New("signedurl: invalid key")
)

// A Key is one signing key: an id, sent in the URL, and a secret, never
// sent.
type Key struct {
	ID     string
	Secret string
}

// Check reports whether k can sign: a printable id without spaces and a
// secret of at least MinSecret bytes.
func (k Key) Check() error {
	if k.ID == "" || len(k.ID) > MaxKeyID || strings.ContainsFunc(k.ID, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return fmt.Errorf("%w: id %q must be 1 to %d printable ASCII characters", ErrKey, k.ID, MaxKeyID)
	}
	if len(k.Secret) < MinSecret {
		return fmt.Errorf("%w: the secret of key %q is shorter than %d bytes", ErrKey, k.ID, MinSecret)
	}
	return nil
}

// mac is HMAC-SHA256(secret, exp + "\n" + prefix).
func mac(secret, exp, prefix string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(exp))
	m.Write([]byte{'\n'})
	m.Write([]byte(prefix))
	return m.Sum(nil)
}

// Signature is the sig parameter of a URL that grants reads of the paths
// under prefix until expires, signed with k.
func Signature(k Key, prefix string, expires time.Time) string {
	return hex.EncodeToString(mac(k.Secret, strconv.FormatInt(expires.Unix(), 10), prefix))
}

// SignURL returns u with the signature parameters added to its query,
// granting reads of the paths under prefix until expires; an empty prefix
// grants u's path only (no prefix parameter is sent).
func SignURL(k Key, u *url.URL, prefix string, expires time.Time) *url.URL {
	s := *u
	q := s.Query()
	signed := prefix
	if prefix == "" {
		signed = Clean(u.Path)
	} else {
		q.Set(ParamPrefix, prefix)
	}
	q.Set(ParamExpires, strconv.FormatInt(expires.Unix(), 10))
	q.Set(ParamKeyID, k.ID)
	q.Set(ParamSignature, Signature(k, signed, expires))
	s.RawQuery = q.Encode()
	return &s
}

// A Verifier checks signed URLs against a set of keys.
type Verifier struct {
	keys map[string]Key
}

// NewVerifier returns a verifier accepting signatures of any of keys.
func NewVerifier(keys []Key) (*Verifier, error) {
	v := &Verifier{keys: make(map[string]Key, len(keys))}
	for _, k := range keys {
		if err := k.Check(); err != nil {
			return nil, err
		}
		if _, dup := v.keys[k.ID]; dup {
			return nil, fmt.Errorf("%w: two keys with id %q", ErrKey, k.ID)
		}
		v.keys[k.ID] = k
	}
	return v, nil
}

// Check reports whether the query q grants a read of the request path p
// (decoded, as url.URL.Path) at now. It returns nil or one of the errors
// above, wrapped with the key id when one was named.
func (v *Verifier) Check(p string, q url.Values, now time.Time) error {
	exp, kid, sig := q.Get(ParamExpires), q.Get(ParamKeyID), q.Get(ParamSignature)
	if exp == "" && kid == "" && sig == "" {
		return ErrMissing
	}
	prefix, hasPrefix := q.Get(ParamPrefix), q.Has(ParamPrefix)
	if len(exp) > 19 || len(kid) > MaxKeyID || len(prefix) > MaxPrefix || len(sig) != 2*sha256.Size {
		return ErrMalformed
	}
	expires, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || expires < 0 {
		return ErrMalformed
	}
	want, err := hex.DecodeString(sig)
	if err != nil {
		return ErrMalformed
	}
	k, ok := v.keys[kid]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownKey, kid)
	}
	clean := Clean(p)
	if !hasPrefix {
		prefix = clean
	}
	if !hmac.Equal(mac(k.Secret, exp, prefix), want) {
		return fmt.Errorf("%w (key %q)", ErrBadSignature, kid)
	}
	if !strings.HasPrefix(clean, prefix) {
		return fmt.Errorf("%w %q (key %q)", ErrOutside, prefix, kid)
	}
	if now.Unix() >= expires {
		return fmt.Errorf("%w at %s (key %q)", ErrExpired, time.Unix(expires, 0).UTC().Format(time.RFC3339), kid)
	}
	return nil
}

// Clean is p without dot segments or doubled slashes (a trailing
// slash kept), so that "/free/../paid/x" is checked as "/paid/x", the
// path the router serves.
func Clean(p string) string {
	if p == "" {
		return "/"
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// Strip removes the signature parameters from a raw query, keeping the
// others in their order, so that what serves the request (and caches
// keyed by the query) sees the URL without them.
func Strip(rawQuery string) string {
	if rawQuery == "" {
		return ""
	}
	var kept []string
	for part := range strings.SplitSeq(rawQuery, "&") {
		name, _, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			switch n {
			case ParamExpires, ParamPrefix, ParamKeyID, ParamSignature:
				continue
			}
		}
		kept = append(kept, part)
	}
	return strings.Join(kept, "&")
}

// PathUnder reports whether the request path p is under prefix, as Check
// decides it.
func PathUnder(p, prefix string) bool { return strings.HasPrefix(Clean(p), prefix) }
