package app

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/signedurl"
)

// syncBuffer is a log destination the test reads while the node writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// servedNode serves cfg with a log the test reads and a level Reload
// sets, until the test ends.
func servedNode(t *testing.T, cfg Config) (*Node, *syncBuffer, *slog.LevelVar) {
	t.Helper()
	logs, level := &syncBuffer{}, new(slog.LevelVar)
	n, err := Open(context.Background(), cfg, Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: level})), Level: level})
	if err != nil {
		t.Fatal(err)
	}
	runNode(t, n)
	return n, logs, level
}

func do(t *testing.T, c *http.Client, method, u string, body io.Reader, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestReloadWithRequestInFlight is the acceptance test of reload: the config of a
// running node changes (admin token, CORS, upstream URL, threshold, log
// level) while an upload is half sent; the upload completes, and the
// requests after the reload see every change. A key that needs a restart
// is reported and left alone; an invalid new config changes nothing.
func TestReloadWithRequestInFlight(t *testing.T) {
	a, b := newTestUpstream(t), newTestUpstream(t)
	cfg := testConfig(t)
	cfg.AdminToken, cfg.CORSOrigins = "one", nil
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/cdn/", URL: a.URL + "/a/"}}
	n, logs, level := servedNode(t, cfg)
	base := n.Description().URL
	c := &http.Client{}

	// The upload in flight: headers and half the body sent, authorized
	// by the old token.
	pr, pw := io.Pipe()
	half := bytes.Repeat([]byte("x"), 1<<20)
	uploaded := make(chan *http.Response, 1)
	go func() {
		req, _ := http.NewRequest("PUT", base+"/files/inflight.bin", pr)
		req.ContentLength = 2 * int64(len(half))
		req.Header.Set("Authorization", "Bearer one")
		resp, err := c.Do(req)
		if err != nil {
			t.Error(err)
			close(uploaded)
			return
		}
		resp.Body.Close()
		uploaded <- resp
	}()
	if _, err := pw.Write(half); err != nil {
		t.Fatal(err)
	}
	waitUpload(t, cfg.Files.Dir)

	next := cfg
	next.AdminToken, next.CORSOrigins = "two", []string{"https://player.example"}
	next.Upstreams = []UpstreamConfig{{Prefix: "/cdn/", URL: b.URL + "/b/"}}
	next.Threshold, next.LogLevel = 0.9, "warn"
	next.RAM = cfg.RAM * 2 // needs a restart
	r, err := n.Reload(next)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"admin_token", "cors_origins", "upstream", "threshold", "log_level"} {
		if !slices.Contains(r.Changed, k) {
			t.Errorf("%s not in Changed %v", k, r.Changed)
		}
	}
	if !slices.Equal(r.Ignored, []string{"ram"}) {
		t.Errorf("Ignored %v, want [ram]", r.Ignored)
	}
	if !strings.Contains(logs.String(), "config reloaded") || !strings.Contains(logs.String(), "need a restart") {
		t.Errorf("the reload was not logged:\n%s", logs)
	}
	if level.Level() != slog.LevelWarn {
		t.Errorf("log level %v after reloading warn", level.Level())
	}

	if _, err := pw.Write(half); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if resp := <-uploaded; resp == nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("the upload in flight during the reload: %v", resp)
	}
	if resp, body := do(t, c, "GET", base+"/files/inflight.bin", nil); resp.StatusCode != 200 || len(body) != 2*len(half) {
		t.Fatalf("the uploaded file: %d, %d bytes", resp.StatusCode, len(body))
	}

	if resp, _ := do(t, c, "PUT", base+"/files/y", strings.NewReader("y"), "Authorization", "Bearer one"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("old token after the reload: %d", resp.StatusCode)
	}
	if resp, _ := do(t, c, "PUT", base+"/files/y", strings.NewReader("y"), "Authorization", "Bearer two"); resp.StatusCode != http.StatusCreated {
		t.Errorf("new token after the reload: %d", resp.StatusCode)
	}
	resp, body := do(t, c, "GET", base+"/cdn/x", nil, "Origin", "https://player.example")
	if resp.Header.Get("Access-Control-Allow-Origin") != "https://player.example" {
		t.Errorf("CORS after the reload: %v", resp.Header)
	}
	if string(body) != "upstream bytes of /b/x" || a.requests("/a/x") != 0 {
		t.Errorf("the edge fetched %q (old upstream asked %d times)", body, a.requests("/a/x"))
	}

	// A new upstream prefix needs a restart: reported, the others stay.
	moved := next
	moved.Upstreams = []UpstreamConfig{{Prefix: "/elsewhere/", URL: a.URL + "/a/"}}
	if r, err := n.Reload(moved); err != nil || !slices.Equal(r.Ignored, []string{"upstream", "ram"}) {
		t.Fatalf("Reload with a new prefix: %+v, %v", r, err)
	}
	if _, body := do(t, c, "GET", base+"/cdn/z", nil); string(body) != "upstream bytes of /b/z" {
		t.Fatalf("after an ignored prefix change: %q", body)
	}

	// An invalid config: nothing changes, not even its valid keys.
	bad := next
	bad.CORSOrigins = nil
	bad.SignedURLs = SignedURLsConfig{Prefixes: []string{"/files/"}, Keys: []SignedURLKey{{ID: "k", Secret: "short"}}}
	if _, err := n.Reload(bad); err == nil {
		t.Fatal("a key with a short secret was accepted")
	}
	if resp, _ := do(t, c, "GET", base+"/cdn/x", nil, "Origin", "https://player.example"); resp.Header.Get("Access-Control-Allow-Origin") == "" {
		t.Error("a refused reload changed CORS")
	}
	if !strings.Contains(logs.String(), "config reload refused") {
		t.Errorf("the refusal was not logged:\n%s", logs)
	}
}

// waitUpload waits until an upload's body is being written into dir: its
// handler runs, past the token check.
func waitUpload(t *testing.T, dir string) {
	t.Helper()
	for range 1000 {
		m, _ := filepath.Glob(filepath.Join(dir, ".upload-*"))
		for _, p := range m {
			if st, err := os.Stat(p); err == nil && st.Size() > 0 {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the upload never reached its handler")
}

// writeCert writes a self-signed ECDSA certificate for 127.0.0.1 with the
// given serial number to dir/cert.pem and dir/key.pem, and returns it.
func writeCert(t *testing.T, dir string, serial int64) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "strata test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{"cert.pem": {Type: "CERTIFICATE", Bytes: der}, "key.pem": {Type: "EC PRIVATE KEY", Bytes: kb}} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, _ := x509.ParseCertificate(der)
	return cert
}

func tlsClient(certs ...*x509.Certificate) *http.Client {
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
}

// TestTLSHTTP2AndCertificateReload: the node serves HTTP/2 over TLS with
// the configured certificate; a reload after the files were rewritten
// (a renewal) serves the new certificate on new connections while an
// open connection goes on working.
func TestTLSHTTP2AndCertificateReload(t *testing.T) {
	dir := t.TempDir()
	first := writeCert(t, dir, 1)
	cfg := testConfig(t)
	cfg.TLSCert, cfg.TLSKey = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	n, _, _ := servedNode(t, cfg)
	base := n.Description().URL
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("URL %s", base)
	}
	old := tlsClient(first)
	resp, _ := do(t, old, "GET", base+"/videos", nil)
	if resp.StatusCode != 200 || resp.Proto != "HTTP/2.0" || resp.TLS.PeerCertificates[0].SerialNumber.Int64() != 1 {
		t.Fatalf("GET /videos: %d %s, serial %v", resp.StatusCode, resp.Proto, resp.TLS.PeerCertificates[0].SerialNumber)
	}
	if resp, err := http.Get(strings.Replace(base, "https", "http", 1) + "/videos"); err == nil && resp.StatusCode != http.StatusBadRequest {
		t.Errorf("plain HTTP on the TLS listener: %d", resp.StatusCode)
	}

	second := writeCert(t, dir, 2)
	r, err := n.Reload(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Changed, []string{"tls_cert"}) {
		t.Fatalf("Changed %v, want [tls_cert]", r.Changed)
	}
	resp, _ = do(t, tlsClient(second), "GET", base+"/videos", nil)
	if got := resp.TLS.PeerCertificates[0].SerialNumber.Int64(); got != 2 || resp.Proto != "HTTP/2.0" {
		t.Fatalf("after the reload: serial %d, %s", got, resp.Proto)
	}
	resp, _ = do(t, old, "GET", base+"/videos", nil) // the kept-alive HTTP/2 connection
	if resp.StatusCode != 200 || resp.TLS.PeerCertificates[0].SerialNumber.Int64() != 1 {
		t.Fatalf("the connection open before the reload: %d, serial %v", resp.StatusCode, resp.TLS.PeerCertificates[0].SerialNumber)
	}

	// A key that does not match: refused, the second certificate stays.
	os.WriteFile(cfg.TLSKey, []byte("not a key"), 0o600)
	if _, err := n.Reload(cfg); err == nil {
		t.Fatal("a broken key file was accepted")
	}
	resp, _ = do(t, tlsClient(second), "GET", base+"/videos", nil)
	if got := resp.TLS.PeerCertificates[0].SerialNumber.Int64(); got != 2 {
		t.Fatalf("after a refused reload: serial %d", got)
	}
}

// h2cClient speaks only HTTP/2 with prior knowledge over plain TCP.
func h2cClient() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: p}}
}

// TestH2C: with h2c, the plain listener answers HTTP/2 with prior
// knowledge and HTTP/1.1; without it, the HTTP/2 client fails.
func TestH2C(t *testing.T) {
	cfg := testConfig(t)
	n, _, _ := servedNode(t, cfg)
	req, _ := http.NewRequest("GET", n.Description().URL+"/videos", nil)
	if resp, err := h2cClient().Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("HTTP/2 without --h2c: %s", resp.Proto)
	}

	cfg = testConfig(t)
	cfg.H2C = true
	n, _, _ = servedNode(t, cfg)
	resp, _ := do(t, h2cClient(), "GET", n.Description().URL+"/videos", nil)
	if resp.StatusCode != 200 || resp.Proto != "HTTP/2.0" {
		t.Fatalf("h2c: %d %s", resp.StatusCode, resp.Proto)
	}
	resp, _ = do(t, &http.Client{}, "GET", n.Description().URL+"/videos", nil)
	if resp.StatusCode != 200 || resp.Proto != "HTTP/1.1" {
		t.Fatalf("HTTP/1.1 beside h2c: %d %s", resp.StatusCode, resp.Proto)
	}
}

// TestSignedURLs: reads under a guarded prefix need a valid signature
// (403 otherwise, the reason in the log only); the signature parameters
// do not reach the edge's cache keys; rotating the keys by reload retires
// the old key's URLs.
func TestSignedURLs(t *testing.T) {
	up := newTestUpstream(t)
	k1 := SignedURLKey{ID: "k1", Secret: "first secret, 16+ bytes"}
	k2 := SignedURLKey{ID: "k2", Secret: "second secret, 16+ bytes"}
	cfg := testConfig(t)
	cfg.AdminToken = "tok"
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/cdn/", URL: up.URL + "/"}}
	cfg.SignedURLs = SignedURLsConfig{Prefixes: []string{"/files/", "/cdn/paid/"}, Keys: []SignedURLKey{k1}}
	n, logs, _ := servedNode(t, cfg)
	base := n.Description().URL
	c := &http.Client{}
	if resp, _ := do(t, c, "PUT", base+"/files/f.bin", strings.NewReader("file bytes"), "Authorization", "Bearer tok"); resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT (not a read, not guarded): %d", resp.StatusCode)
	}
	sign := func(k SignedURLKey, p, prefix string, exp time.Duration) string {
		u, _ := url.Parse(base + p)
		return signedurl.SignURL(signedurl.Key{ID: k.ID, Secret: k.Secret}, u, prefix, time.Now().Add(exp)).String()
	}
	refused := func(u, reason string) {
		t.Helper()
		resp, body := do(t, c, "GET", u, nil)
		if resp.StatusCode != http.StatusForbidden || strings.Contains(string(body), reason) {
			t.Fatalf("GET %s: %d %s", u, resp.StatusCode, body)
		}
		if !strings.Contains(logs.String(), reason) {
			t.Fatalf("the log does not say %q:\n%s", reason, logs)
		}
	}
	accepted := func(u, want string) {
		t.Helper()
		if resp, body := do(t, c, "GET", u, nil); resp.StatusCode != 200 || string(body) != want {
			t.Fatalf("GET %s: %d %s", u, resp.StatusCode, body)
		}
	}
	refused(base+"/files/f.bin", "no signature")
	accepted(sign(k1, "/files/f.bin", "", time.Hour), "file bytes")
	accepted(sign(k1, "/files/f.bin", "/files/", time.Hour), "file bytes")
	refused(sign(k1, "/files/f.bin", "", -time.Second), "expired")
	tampered := strings.Replace(sign(k1, "/files/f.bin", "/files/", time.Hour), "prefix=%2Ffiles%2F", "prefix=%2F", 1)
	refused(tampered, "bad signature")
	accepted(base+"/cdn/free/x", "upstream bytes of /free/x")
	refused(base+"/cdn/free/../paid/x", "no signature")

	// Two signatures of one edge object: one upstream request, the
	// parameters stripped before the cache key is made.
	accepted(sign(k1, "/cdn/paid/x", "/cdn/paid/", time.Hour), "upstream bytes of /paid/x")
	accepted(sign(k1, "/cdn/paid/x", "", 2*time.Hour), "upstream bytes of /paid/x")
	if got := up.requests("/paid/x"); got != 1 {
		t.Fatalf("the upstream was asked %d times for two signed URLs of one object", got)
	}

	// Rotation: k2 added first, then k1 retired.
	cfg.SignedURLs.Keys = []SignedURLKey{k2, k1}
	if r, err := n.Reload(cfg); err != nil || !slices.Equal(r.Changed, []string{"signed_urls"}) {
		t.Fatalf("Reload: %v %v", r, err)
	}
	accepted(sign(k1, "/files/f.bin", "", time.Hour), "file bytes")
	accepted(sign(k2, "/files/f.bin", "", time.Hour), "file bytes")
	cfg.SignedURLs.Keys = []SignedURLKey{k2}
	if _, err := n.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	refused(sign(k1, "/files/f.bin", "", time.Hour), "unknown key")
	accepted(sign(k2, "/files/f.bin", "", time.Hour), "file bytes")
}
