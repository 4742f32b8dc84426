package signedurl

import (
	"errors"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	now  = time.Unix(1_800_000_000, 0)
	k1   = Key{ID: "2026a", Secret: "0123456789abcdef-one"}
	k2   = Key{ID: "2026b", Secret: "0123456789abcdef-two"}
	base = &url.URL{Path: "/videos/paid/720p/1.m4s"}
)

func verifier(t *testing.T, keys ...Key) *Verifier {
	t.Helper()
	v, err := NewVerifier(keys)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// check signs u with k for prefix and checks path p with v at when.
func check(v *Verifier, k Key, prefix, p string, when time.Time) error {
	s := SignURL(k, &url.URL{Path: p}, prefix, now.Add(time.Hour))
	return v.Check(p, s.Query(), when)
}

func TestAcceptAndRefuse(t *testing.T) {
	v := verifier(t, k1)
	signed := SignURL(k1, base, "/videos/paid/", now.Add(time.Hour))
	q := signed.Query()
	if err := v.Check(base.Path, q, now); err != nil {
		t.Fatalf("a fresh signature was refused: %v", err)
	}
	if err := v.Check("/videos/paid/1080p/9.m4s", q, now); err != nil {
		t.Fatalf("another path under the prefix was refused: %v", err)
	}
	cases := []struct {
		name string
		path string
		edit func(url.Values)
		when time.Time
		want error
	}{
		{"expired", base.Path, nil, now.Add(time.Hour), ErrExpired},
		{"long expired", base.Path, nil, now.Add(24 * time.Hour), ErrExpired},
		{"outside the prefix", "/videos/free/1.m4s", nil, now, ErrOutside},
		{"dot segments out of the prefix", "/videos/paid/../other/1.m4s", nil, now, ErrOutside},
		{"tampered signature", base.Path, func(q url.Values) {
			s := []byte(q.Get(ParamSignature))
			s[0] ^= 1
			q.Set(ParamSignature, string(s))
		}, now, ErrBadSignature},
		{"expiry moved", base.Path, func(q url.Values) {
			q.Set(ParamExpires, strconv.FormatInt(now.Add(48*time.Hour).Unix(), 10))
		}, now, ErrBadSignature},
		{"prefix widened", "/videos/free/1.m4s", func(q url.Values) { q.Set(ParamPrefix, "/videos/") }, now, ErrBadSignature},
		{"prefix dropped", base.Path, func(q url.Values) { q.Del(ParamPrefix) }, now, ErrBadSignature},
		{"unknown key", base.Path, func(q url.Values) { q.Set(ParamKeyID, "old") }, now, ErrUnknownKey},
		{"no signature", base.Path, func(q url.Values) {
			for _, p := range []string{ParamExpires, ParamKeyID, ParamSignature, ParamPrefix} {
				q.Del(p)
			}
		}, now, ErrMissing},
		{"short signature", base.Path, func(q url.Values) { q.Set(ParamSignature, "abcd") }, now, ErrMalformed},
		{"expiry not a number", base.Path, func(q url.Values) { q.Set(ParamExpires, "soon") }, now, ErrMalformed},
		{"huge prefix", base.Path, func(q url.Values) { q.Set(ParamPrefix, "/"+strings.Repeat("a", MaxPrefix)) }, now, ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := signed.Query()
			if c.edit != nil {
				c.edit(q)
			}
			if err := v.Check(c.path, q, c.when); !errors.Is(err, c.want) {
				t.Fatalf("Check = %v, want %v", err, c.want)
			}
		})
	}
}

func TestExactPath(t *testing.T) {
	v := verifier(t, k1)
	if err := check(v, k1, "", base.Path, now); err != nil {
		t.Fatalf("exact-path signature refused: %v", err)
	}
	s := SignURL(k1, base, "", now.Add(time.Hour))
	if s.Query().Has(ParamPrefix) {
		t.Fatalf("an exact-path URL carries a prefix: %s", s)
	}
	if err := v.Check("/videos/paid/720p/2.m4s", s.Query(), now); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("exact-path signature used for another path: %v", err)
	}
}

// TestRotation: during a rotation both keys are active; once the old one
// is removed from the configuration, its URLs are refused as unknown.
func TestRotation(t *testing.T) {
	both, onlyNew := verifier(t, k2, k1), verifier(t, k2)
	for _, k := range []Key{k1, k2} {
		if err := check(both, k, "/videos/", base.Path, now); err != nil {
			t.Errorf("key %s refused while both are active: %v", k.ID, err)
		}
	}
	if err := check(onlyNew, k1, "/videos/", base.Path, now); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("retired key: %v, want ErrUnknownKey", err)
	}
	if err := check(onlyNew, k2, "/videos/", base.Path, now); err != nil {
		t.Errorf("new key refused: %v", err)
	}
	// A secret changed under the same id: the old URLs no longer verify.
	changed := verifier(t, Key{ID: k1.ID, Secret: "another secret of 16+ bytes"})
	if err := check(changed, k1, "/videos/", base.Path, now); !errors.Is(err, ErrBadSignature) {
		t.Errorf("old secret under a reused id: %v, want ErrBadSignature", err)
	}
}

func TestKeyCheck(t *testing.T) {
	for _, k := range []Key{{ID: "", Secret: k1.Secret}, {ID: "a b", Secret: k1.Secret}, {ID: "a", Secret: "short"}} {
		if _, err := NewVerifier([]Key{k}); !errors.Is(err, ErrKey) {
			t.Errorf("key %+v accepted: %v", k, err)
		}
	}
	if _, err := NewVerifier([]Key{k1, k1}); !errors.Is(err, ErrKey) {
		t.Errorf("duplicate ids accepted: %v", err)
	}
}

func TestStrip(t *testing.T) {
	for in, want := range map[string]string{
		"":                                  "",
		"exp=1&kid=a&sig=00&prefix=%2Fv%2F": "",
		"a=1&exp=1&b=2&sig=00":              "a=1&b=2",
		"expiry=1&kid=a&%73ig=00&x":         "expiry=1&x",
	} {
		if got := Strip(in); got != want {
			t.Errorf("Strip(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOpenSSL checks the documented shell line against the package: an
// operator's script computes the same signature.
func TestOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("no openssl")
	}
	exp := now.Add(time.Hour)
	prefix := "/videos/paid/"
	script := `printf '%s\n%s' "$1" "$2" | openssl dgst -sha256 -hmac "$3" -r | cut -d' ' -f1`
	out, err := exec.Command("sh", "-c", script, "sh", strconv.FormatInt(exp.Unix(), 10), prefix, k1.Secret).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), Signature(k1, prefix, exp); got != want {
		t.Fatalf("openssl says %s, Signature says %s", got, want)
	}
}

func FuzzCheck(f *testing.F) {
	s := SignURL(k1, base, "/videos/", now.Add(time.Hour))
	f.Add(base.Path, s.RawQuery)
	f.Add("/x/../y", "exp=99&kid=2026a&sig=zz&prefix=/")
	v, _ := NewVerifier([]Key{k1})
	f.Fuzz(func(t *testing.T, p, raw string) {
		q, _ := url.ParseQuery(raw)
		err := v.Check(p, q, now)
		if err == nil && !strings.HasPrefix(Clean(p), q.Get(ParamPrefix)) {
			t.Fatalf("accepted %q outside prefix %q", p, q.Get(ParamPrefix))
		}
		Strip(raw)
	})
}
