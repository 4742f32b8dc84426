package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/node/edge"
)

// reloadableKeys are the config keys Reload applies to a running node;
// every other key needs a restart.
var reloadableKeys = []string{"log_level", "threshold", "admin_token", "cors_origins",
	"tls_cert", "tls_key", "upstream", "signed_urls", "edge"}

// Reloaded says what a Reload did.
type Reloaded struct {
	// Changed are the config keys whose new values are in force.
	Changed []string
	// Ignored are the keys whose values changed but need a restart:
	// their old values stay in force.
	Ignored []string
}

// checkServing checks the keys of how the node serves: the log level,
// TLS, h2c and the signed URLs.
func (c *Config) checkServing() error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return fmt.Errorf("%w: --log-level %q: want debug, info, warn or error", ErrConfig, c.LogLevel)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return fmt.Errorf("%w: --tls-cert and --tls-key go together", ErrConfig)
	}
	if c.H2C && c.TLSCert != "" {
		return fmt.Errorf("%w: --h2c is for a plain listener; over TLS, HTTP/2 is negotiated", ErrConfig)
	}
	if err := checkAddr("--listen", c.Listen); err != nil {
		return err
	}
	if c.DebugAddr != "" {
		if err := checkAddr("--debug-addr", c.DebugAddr); err != nil {
			return err
		}
	}
	_, err := newSignedPolicy(c.SignedURLs)
	return err
}

// checkAddr checks a listen address's form, host:port with a port
// number or service name, so that --print-config refuses one that serve
// could not listen on ("8080" without its colon, a port past 65535).
func checkAddr(flag, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return fmt.Errorf("%w: %s %q: want host:port (\":8080\" for every interface): %v", ErrConfig, flag, addr, err)
	}
	return nil
}

// ServingDescription says how a node speaks HTTP.
type ServingDescription struct {
	// TLS: HTTPS with HTTP/2 and HTTP/1.1; H2C: HTTP/2 with prior
	// knowledge beside HTTP/1.1 on the plain listener.
	TLS, H2C bool
	// SignedPrefixes are the path prefixes whose reads need a signed
	// URL; SigningKeys counts the active keys.
	SignedPrefixes []string
	SigningKeys    int
}

// openServing prepares what Serve wraps the API in: the signed-URL guard
// and the TLS certificate.
func (n *Node) openServing(context.Context) error {
	p, err := newSignedPolicy(n.cfg.SignedURLs)
	if err != nil {
		return err
	}
	n.guard = &signedGuard{log: n.log.With("component", "signed-urls"), now: time.Now}
	n.guard.policy.Store(p)
	if n.cfg.TLSCert != "" {
		c, err := loadCert(n.cfg.TLSCert, n.cfg.TLSKey)
		if err != nil {
			return err
		}
		n.certs = &certStore{}
		n.certs.cert.Store(c)
	}
	n.live = n.cfg
	n.desc.Serving = ServingDescription{TLS: n.certs != nil, H2C: n.cfg.H2C,
		SignedPrefixes: n.cfg.SignedURLs.Prefixes, SigningKeys: len(n.cfg.SignedURLs.Keys)}
	return nil
}

// transport is how Serve speaks HTTP.
func (n *Node) transport() transport {
	t := transport{h2c: n.cfg.H2C}
	if n.certs != nil {
		t.tls = n.certs.config()
	}
	return t
}

// Reload puts the reloadable keys of cfg (resolved, as for Open) in force
// without dropping a connection: log level (with Options.Level), admission
// threshold, admin token, CORS origins, TLS certificate (read again even
// when its paths are the same, for a renewed certificate), upstream URLs
// and signed URLs. Requests in flight finish as they started. A key that
// needs a restart (sizes, paths, listen address, adding TLS or an
// upstream prefix) is reported in Ignored and keeps its old value. If a
// new value cannot be used (a certificate that does not load), nothing
// changes and the error says why. It logs what it did.
func (n *Node) Reload(cfg Config) (Reloaded, error) {
	n.reloadMu.Lock()
	defer n.reloadMu.Unlock()
	n.reopenAccessLog() // whatever the new configuration: logrotate renamed it
	r, apply, err := n.stageReload(&cfg)
	if err != nil {
		n.log.Error("config reload refused; the running configuration stays", "err", err)
		return Reloaded{}, err
	}
	for _, f := range apply {
		f()
	}
	if len(r.Ignored) > 0 {
		n.log.Warn("config keys changed that need a restart; their old values stay", "keys", r.Ignored)
	}
	if len(r.Changed) == 0 {
		n.log.Info("config reloaded; nothing to change")
	} else {
		n.log.Info("config reloaded", "changed", r.Changed)
	}
	if slices.Contains(r.Changed, "log_level") {
		n.opts.Level.Set(mustLevel(cfg.LogLevel)) // last, so that the lines above are seen
	}
	return r, nil
}

// stageReload checks cfg against the keys in force and returns what a
// reload changes and the functions that change it, which cannot fail.
func (n *Node) stageReload(cfg *Config) (Reloaded, []func(), error) {
	if err := cfg.checkServing(); err != nil {
		return Reloaded{}, nil, err
	}
	if err := cfg.checkUpstreams(); err != nil {
		return Reloaded{}, nil, err
	}
	old := &n.live
	var r Reloaded
	var apply []func()
	changed := func(key string, f func()) {
		r.Changed = append(r.Changed, key)
		apply = append(apply, f)
	}
	if err := n.stageUpstreams(cfg, old, &r, changed); err != nil {
		return Reloaded{}, nil, err
	}
	if err := n.stageEdge(cfg, old, &r, changed); err != nil {
		return Reloaded{}, nil, err
	}
	if old.LogLevel != cfg.LogLevel {
		if n.opts.Level == nil {
			r.Ignored = append(r.Ignored, "log_level")
		} else {
			lv := cfg.LogLevel
			changed("log_level", func() { old.LogLevel = lv })
		}
	}
	if old.Threshold != cfg.Threshold {
		th := cfg.Threshold
		changed("threshold", func() {
			n.eng.SetThreshold(th)
			if n.files != nil {
				n.files.SetThreshold(th)
			}
			old.Threshold = th
		})
	}
	if err := n.stageToken(cfg, old, changed); err != nil {
		return Reloaded{}, nil, err
	}
	if !slices.Equal(old.CORSOrigins, cfg.CORSOrigins) {
		origins := cfg.CORSOrigins
		changed("cors_origins", func() { n.api.SetCORSOrigins(origins); old.CORSOrigins = origins })
	}
	if err := n.stageTLS(cfg, old, &r, changed); err != nil {
		return Reloaded{}, nil, err
	}
	if !reflect.DeepEqual(old.SignedURLs, cfg.SignedURLs) {
		p, err := newSignedPolicy(cfg.SignedURLs)
		if err != nil {
			return Reloaded{}, nil, err
		}
		s := cfg.SignedURLs
		changed("signed_urls", func() { n.guard.policy.Store(p); old.SignedURLs = s })
	}
	for _, k := range diffKeys("", reflect.ValueOf(*old), reflect.ValueOf(*cfg)) {
		if top, _, _ := strings.Cut(k, "."); !slices.Contains(reloadableKeys, top) {
			r.Ignored = append(r.Ignored, k)
		}
	}
	return r, apply, nil
}

// stageUpstreams stages new upstream URLs. Adding or removing a prefix
// (or the edge) needs a restart: the routes are mounted at start.
func (n *Node) stageUpstreams(cfg, old *Config, r *Reloaded, changed func(string, func())) error {
	if reflect.DeepEqual(withUpstreamDefaults(old.Upstreams), withUpstreamDefaults(cfg.Upstreams)) {
		return nil
	}
	if n.edge == nil || len(cfg.Upstreams) == 0 {
		r.Ignored = append(r.Ignored, "upstream")
		return nil
	}
	ups := edgeUpstreams(cfg.Upstreams)
	switch err := n.edge.CheckUpstreams(ups); {
	case errors.Is(err, edge.ErrPrefixes):
		n.log.Warn("upstream prefixes changed; adding or removing one needs a restart", "err", err)
		r.Ignored = append(r.Ignored, "upstream")
		return nil
	case err != nil:
		return fmt.Errorf("%w: [[upstream]]: %w", ErrConfig, err)
	}
	list := cfg.Upstreams
	changed("upstream", func() {
		n.edge.SetUpstreams(ups) //nolint:errcheck // checked above; Reload is serialized
		old.Upstreams = list
	})
	return nil
}

// stageEdge stages new cache rules ([edge] and [[edge.rule]]); the slice
// size needs a restart (stored objects are sliced by it).
func (n *Node) stageEdge(cfg, old *Config, r *Reloaded, changed func(string, func())) error {
	if reflect.DeepEqual(old.Edge, cfg.Edge) || n.edge == nil {
		return nil
	}
	def, rules, err := cfg.Edge.Policies()
	if err != nil {
		return err
	}
	e := cfg.Edge
	if e.SliceSize != old.Edge.SliceSize {
		r.Ignored = append(r.Ignored, "edge.slice_size")
		e.SliceSize = old.Edge.SliceSize
	}
	if e.FillMemory != old.Edge.FillMemory {
		r.Ignored = append(r.Ignored, "edge.fill_memory")
		e.FillMemory = old.Edge.FillMemory
	}
	if e.MaxRelays != old.Edge.MaxRelays {
		r.Ignored = append(r.Ignored, "edge.max_relays")
		e.MaxRelays = old.Edge.MaxRelays
	}
	if reflect.DeepEqual(old.Edge, e) {
		return nil
	}
	changed("edge", func() {
		n.edge.SetRules(def, rules) //nolint:errcheck // checked by Policies; Reload is serialized
		old.Edge = e
	})
	return nil
}

// stageToken stages a new admin token: the configured one, or the one in
// the data directory's file, read again.
func (n *Node) stageToken(cfg, old *Config, changed func(string, func())) error {
	tok, _, err := adminToken(cfg)
	if err != nil {
		return fmt.Errorf("admin token: %w", err)
	}
	if tok != n.token {
		changed("admin_token", func() { n.api.SetAdminToken(tok); n.token = tok; old.AdminToken = cfg.AdminToken })
	}
	return nil
}

// stageTLS reads the certificate again, whether its paths changed or not
// (a renewal rewrites the same files). Turning TLS on or off needs a
// restart: the listener would change.
func (n *Node) stageTLS(cfg, old *Config, r *Reloaded, changed func(string, func())) error {
	if (old.TLSCert == "") != (cfg.TLSCert == "") {
		r.Ignored = append(r.Ignored, "tls_cert", "tls_key")
		return nil
	}
	if n.certs == nil {
		return nil
	}
	c, err := loadCert(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return err
	}
	if !sameCert(c, n.certs.cert.Load()) || old.TLSCert != cfg.TLSCert || old.TLSKey != cfg.TLSKey {
		certFile, keyFile := cfg.TLSCert, cfg.TLSKey
		changed("tls_cert", func() { n.certs.cert.Store(c); old.TLSCert, old.TLSKey = certFile, keyFile })
	}
	return nil
}

func mustLevel(s string) slog.Level {
	var l slog.Level
	l.UnmarshalText([]byte(s)) //nolint:errcheck // checked by checkServing
	return l
}

// diffKeys lists the config keys (dotted for tables) whose values differ
// between a and b, structs of toml-tagged fields.
func diffKeys(prefix string, a, b reflect.Value) []string {
	var keys []string
	for i := range a.NumField() {
		f := a.Type().Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		av, bv := a.Field(i), b.Field(i)
		if f.Type.Kind() == reflect.Struct && hasTOMLFields(f.Type) {
			keys = append(keys, diffKeys(prefix+tag+".", av, bv)...)
			continue
		}
		if !reflect.DeepEqual(av.Interface(), bv.Interface()) {
			keys = append(keys, prefix+tag)
		}
	}
	return keys
}

func hasTOMLFields(t reflect.Type) bool {
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("toml") != "" {
			return true
		}
	}
	return false
}
