package main

import (
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/strata-media/strata/internal/node/app"
)

// servingFlags registers the flags of how strata serve speaks HTTP: TLS,
// h2c and the prefixes that need signed URLs (their keys are in the
// config file only, never on a command line).
func servingFlags(fs *flag.FlagSet, c *app.Config) {
	fs.StringVar(&c.TLSCert, "tls-cert", c.TLSCert, "PEM certificate chain: serve HTTPS (and HTTP/2) on --listen; read again on SIGHUP")
	fs.StringVar(&c.TLSKey, "tls-key", c.TLSKey, "PEM private key of --tls-cert")
	fs.BoolVar(&c.H2C, "h2c", c.H2C, "also serve HTTP/2 without TLS (prior knowledge) on the plain listener, for a TLS-terminating load balancer")
	fs.Var((*commaList)(&c.SignedURLs.Prefixes), "signed-urls-prefixes",
		"path prefixes whose reads need a signed URL, comma-separated (keys: [[signed_urls.keys]] in the config file)")
}

// reloader is how strata serve reloads its configuration: on each SIGHUP
// it parses the config file and the flags again (load) and hands the
// result to the running node.
type reloader struct {
	signals <-chan os.Signal
	load    func() (app.Config, error)
}

// notifyHUP starts catching SIGHUP (whose default is to end the process)
// and returns the reloader of args and a function that stops catching it.
func notifyHUP(args []string, stderr io.Writer) (*reloader, func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGHUP)
	return &reloader{signals: c, load: func() (app.Config, error) { return loadServeConfig(args, stderr) }},
		func() { signal.Stop(c) }
}

// run reloads n on each signal until stop is closed; done is closed when
// it returns.
func (r *reloader) run(n *app.Node, log *slog.Logger, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case <-stop:
			return
		case <-r.signals:
		}
		log.Info("SIGHUP: reloading the configuration")
		cfg, err := r.load()
		if err != nil {
			log.Error("config reload refused; the running configuration stays", "err", err)
			continue
		}
		n.Reload(cfg) //nolint:errcheck // Reload logs what it did or why not
	}
}

// watch runs r for n until the returned function is called (nil r: no
// reloads).
func (r *reloader) watch(n *app.Node, log *slog.Logger) (stop func()) {
	if r == nil {
		return func() {}
	}
	stopc, done := make(chan struct{}), make(chan struct{})
	go r.run(n, log, stopc, done)
	return func() { close(stopc); <-done }
}
