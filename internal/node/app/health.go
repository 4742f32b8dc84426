package app

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/strata-media/strata/internal/node/feed"
	"github.com/strata-media/strata/internal/node/server"
	"github.com/strata-media/strata/internal/storage/origin"
)

// openHealth makes /healthz and /readyz: the flash devices' health, and checks that the capacity tier and every upstream are
// reachable, each run at most once per TTL.
func (n *Node) openHealth() *server.Health {
	checks := []server.ReadyCheck{{Name: "capacity", Check: capacityCheck(n.titles)}}
	for _, u := range n.cfg.Upstreams {
		checks = append(checks, server.ReadyCheck{Name: "upstream " + u.Prefix, Check: upstreamCheck(u.URL)})
	}
	n.health = server.NewHealth(server.HealthOptions{Devices: n.deviceHealth, Checks: checks})
	return n.health
}

// deviceHealth lists the flash devices' health: the segment cache's and
// the whole-file copies'.
func (n *Node) deviceHealth() []feed.DeviceReport {
	var ds []feed.DeviceReport
	if r, ok := n.eng.Health(); ok {
		ds = append(ds, r)
	}
	if n.files != nil {
		if r, ok := n.files.Health(); ok {
			ds = append(ds, r)
		}
	}
	return ds
}

// capacityCheck checks the titles' capacity tier cheaply: the bucket
// exists and accepts the credentials (S3), or the directory is there.
func capacityCheck(titles capacityOrigin) func(context.Context) error {
	if c, ok := titles.(interface{ Check(context.Context) error }); ok {
		return c.Check
	}
	if d, ok := titles.(*origin.Dir); ok {
		return func(context.Context) error {
			fi, err := os.Stat(d.Root())
			if err == nil && !fi.IsDir() {
				err = fmt.Errorf("%s is not a directory", d.Root())
			}
			return err
		}
	}
	return func(ctx context.Context) error { _, err := titles.Catalog(ctx); return err }
}

// upstreamCheck checks that an upstream answers HTTP at all: any status
// will do (its base URL need not be an object), a connection that fails
// or times out will not.
func upstreamCheck(url string) func(context.Context) error {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("unreachable: %w", err)
		}
		resp.Body.Close()
		return nil
	}
}
