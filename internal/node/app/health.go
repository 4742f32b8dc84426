package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/strata-media/strata/internal/node/feed"
	"github.com/strata-media/strata/internal/node/server"
	"github.com/strata-media/strata/internal/storage/origin"
)

// openHealth makes /healthz and /readyz: the flash devices' health, and checks that the capacity tier and every upstream are
// reachable, each run at most once per TTL. An upstream down while the node holds content degrades the node: it still
// serves what it holds.
func (n *Node) openHealth() *server.Health {
	checks := []server.ReadyCheck{{Name: "capacity", Check: capacityCheck(n.titles)}}
	for _, u := range n.cfg.Upstreams {
		// An edge holding content serves it through an upstream outage
		// (stale, keep-on-error): the load balancer must keep it.
		checks = append(checks, server.ReadyCheck{Name: "upstream " + u.Prefix, Check: upstreamCheck(append([]string{u.URL}, u.Backup...)...), Serves: n.holdsContent})
	}
	n.health = server.NewHealth(server.HealthOptions{Devices: n.deviceHealth, Checks: checks})
	return n.health
}

// holdsContent reports whether the segment engine holds anything to
// serve, in RAM or on flash (an edge's stored responses among them).
func (n *Node) holdsContent() bool {
	st := n.eng.Stats()
	return st.RAM.Segments > 0 || st.SSD.BlocksUsed > 0
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

// upstreamCheck checks that an upstream answers HTTP at all, its primary
// or one of its backups (urls, in order): any status will do (its base URL
// need not be an object), a connection that fails or times out will not.
func upstreamCheck(urls ...string) func(context.Context) error {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return func(ctx context.Context) error {
		var errs []error
		for _, url := range urls {
			req, err := http.NewRequestWithContext(ctx, http.MethodHead, url, nil)
			if err != nil {
				return err
			}
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				return nil
			}
			errs = append(errs, err)
		}
		if len(errs) == 1 {
			return fmt.Errorf("unreachable: %w", errs[0])
		}
		return fmt.Errorf("unreachable, backups included: %w", errors.Join(errs...))
	}
}
