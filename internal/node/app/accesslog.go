package app

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/front"
	"github.com/strata-media/strata/internal/node/edge"
)

// openAccessLog opens the access log, if one is configured.
func (n *Node) openAccessLog(context.Context) error {
	if n.cfg.AccessLog == "" {
		return nil
	}
	out := n.opts.AccessOut
	if out == nil {
		out = os.Stdout
	}
	l, err := httpapi.OpenAccessLog(n.cfg.AccessLog, out)
	if err != nil {
		return err
	}
	if n.cfg.AccessLogFormat != "" {
		if err := l.SetFormat(n.cfg.AccessLogFormat); err != nil {
			l.Close()
			return fmt.Errorf("%w: access_log_format: %v", ErrConfig, err)
		}
	}
	n.access = l
	n.parts.push("access log", l.Close)
	return nil
}

// AccessLog is the node's access log, nil when it is off: the SIGHUP
// handler calls its Reopen after logrotate renamed the file.
func (n *Node) AccessLog() *httpapi.AccessLog { return n.access }

// handler is the node's root handler: the API behind the signed-URL
// guard, its manifests, playlists
// and JSON gzip-compressed (never the whole files, served as stored, nor
// the upstream responses the edge forwards, left as their origin sent
// them), and every request logged with what went on the wire.
func (n *Node) handler() http.Handler {
	// The plain reads of segments skip the layers that leave them as
	// they are (httpapi.FastPath); a path a signature guards never does.
	h := n.api.FastPath(n.general(), n.guard.guarded)
	// An HTTP/2 write may outlive its call: it gets a copy of a RAM
	// hit's mapped bytes (decision 0036).
	h = httpapi.CopyHTTP2Writes(h)
	if n.access != nil {
		h = n.access.Handler(h)
	}
	return h
}

// front is the Front of the node's plain listener (front.Front), nil
// if there is none (no_front, or no fast route).
func (n *Node) front(t TimeoutsConfig, track func(int)) *front.Front {
	if n.cfg.NoFront {
		return nil
	}
	return n.api.Front(httpapi.FrontOptions{ReadHeader: t.ReadHeader.Duration, Idle: t.Idle.Duration,
		Write: t.Write.Duration, Skip: n.guard.guarded, AccessLog: n.access, Track: track, Logger: n.log})
}

// general is the node's handler without the fast path: every request
// through every layer.
func (n *Node) general() http.Handler {
	return httpapi.Compress(n.guard.wrap(n.api.Handler()), httpapi.CompressOptions{SkipPrefixes: []string{"/files/"}, PassHeader: edge.HeaderCache})
}

// reopenAccessLog reopens the access log file, if any: on every reload,
// so that logrotate's rename-then-SIGHUP works.
func (n *Node) reopenAccessLog() {
	if n.access == nil {
		return
	}
	if err := n.access.Reopen(); err != nil {
		n.log.Error("reopening the access log", "path", n.cfg.AccessLog, "err", err)
	}
}
