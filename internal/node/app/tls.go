package app

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net/http"
	"sync/atomic"
)

// certStore holds the TLS certificate in force; a reload replaces it and
// the handshakes that follow use the new one (tls.Config.GetCertificate),
// while the connections already open keep theirs.
type certStore struct {
	cert atomic.Pointer[tls.Certificate]
}

// loadCert reads a PEM certificate chain and its key.
func loadCert(certFile, keyFile string) (*tls.Certificate, error) {
	c, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	return &c, nil
}

// sameCert reports whether a and b hold the same chain.
func sameCert(a, b *tls.Certificate) bool {
	if a == nil || b == nil || len(a.Certificate) != len(b.Certificate) {
		return a == b
	}
	for i := range a.Certificate {
		if !bytes.Equal(a.Certificate[i], b.Certificate[i]) {
			return false
		}
	}
	return true
}

// config is the listener's TLS configuration: TLS 1.2 and later, the
// certificate in force. http.Server adds h2 to its protocols.
func (s *certStore) config() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return s.cert.Load(), nil
		},
	}
}

// transport is how the listener speaks HTTP: TLS (with HTTP/2 and
// HTTP/1.1 negotiated by ALPN) when tls is set, else plain HTTP/1.1 and,
// with h2c, HTTP/2 with prior knowledge.
type transport struct {
	tls *tls.Config
	h2c bool
}

// protocols is the server's http.Protocols; nil: net/http's default
// (HTTP/1.1, and HTTP/2 over TLS).
func (t transport) protocols() *http.Protocols {
	if !t.h2c {
		return nil
	}
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}
