package httpapi

import (
	"io"
	"net/http"
)

// A Fallback answers the GETs and HEADs of the paths it handles that no
// mounted module holds: edge mode's upstreams, under whatever route the
// path falls (a node's /files/{id} or /images/{id}/{variant} as much as a
// path no module claims).
type Fallback interface {
	http.Handler
	// Handles reports whether the fallback answers the escaped path.
	Handles(path string) bool
}

// SetFallback makes f the answer to a GET or HEAD that the module whose
// route matches answers 404, for the paths f handles: the local module
// first, then f, as the node's pull-through cache wants ("a path Strata
// does not hold is fetched from the upstream"). The local 404 is
// dropped unsent; f's answer carries the CORS fields of a public route.
// An answer the fallback gave from inside the module (one that called
// Relay: the videos module falls back itself) is never asked twice.
func (a *API) SetFallback(f Fallback) { a.fallback = f }

// fallsBack reports whether r may go to the fallback after its route.
func (a *API) fallsBack(r *http.Request) bool {
	return a.fallback != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		a.fallback.Handles(r.URL.EscapedPath())
}

// fallbackRoute labels, in the route metrics, the requests the fallback
// answered after a local 404.
const fallbackRoute = "fallback"

// serveWithFallback serves r by its route, then by the fallback if the
// route answered 404 of its own. It returns the route that answered and
// the status, for the route metrics.
func (a *API) serveWithFallback(w http.ResponseWriter, r *http.Request) (route string, status int) {
	pw := &problemWriter{ResponseWriter: w}
	lw := &localWriter{pw: pw, header: http.Header{}}
	a.mux.ServeHTTP(lw, r)
	if !lw.notFound {
		lw.pass(http.StatusOK) // a route that wrote nothing: an empty 200, as net/http sends
		pw.finish()
		return pw.route, pw.status
	}
	fw := &problemWriter{ResponseWriter: w}
	a.corsWrap(a.fallback).ServeHTTP(fw, r)
	fw.finish()
	return fallbackRoute, fw.status
}

// localWriter holds a route's header until its status is known: a 404
// is dropped with its body (the fallback answers instead), anything else
// goes out unchanged, a 404 relayed from the fallback included.
type localWriter struct {
	pw       *problemWriter
	header   http.Header
	decided  bool // the status is known
	notFound bool // it is 404: nothing is sent
}

func (l *localWriter) Header() http.Header { return l.header }

func (l *localWriter) WriteHeader(code int) {
	if l.decided {
		return
	}
	if code == http.StatusNotFound && !l.pw.relay { // a relayed 404 is the fallback's own
		l.decided, l.notFound = true, true
		return
	}
	l.pass(code)
}

// pass sends the header with code, once.
func (l *localWriter) pass(code int) {
	if l.decided {
		return
	}
	l.decided = true
	h := l.pw.Header()
	for k, v := range l.header {
		h[k] = v
	}
	l.header = h // later changes (trailers) reach the real header
	l.pw.WriteHeader(code)
}

func (l *localWriter) Write(b []byte) (int, error) {
	l.pass(http.StatusOK)
	if l.notFound {
		return len(b), nil
	}
	return l.pw.Write(b)
}

// ReadFrom keeps the sendfile path of file bodies.
func (l *localWriter) ReadFrom(r io.Reader) (int64, error) {
	l.pass(http.StatusOK)
	if l.notFound {
		return io.Copy(io.Discard, r)
	}
	return l.pw.ReadFrom(r)
}

// Flush sends the header and what is buffered, unless the answer is a
// dropped 404.
func (l *localWriter) Flush() {
	l.pass(http.StatusOK)
	if !l.notFound {
		l.pw.Flush()
	}
}

// Unwrap lets http.ResponseController and Relay reach the writers below.
func (l *localWriter) Unwrap() http.ResponseWriter { return l.pw }
