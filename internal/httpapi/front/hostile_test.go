package front

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// fastOdd is a FastHandler that misbehaves in the ways a real one can
// (a file whose size changed between its stat and its read, a body on a
// 304, a Connection field of its own): the Front's answers to it must be
// net/http's, byte for byte.
type fastOdd struct {
	slow chan struct{} // /v/slow answers once it is closed
}

func (f fastOdd) ServeFast(w http.ResponseWriter, r *http.Request, c CORS) (string, int, *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/plain") // as every real FastHandler: the Front does not sniff
	switch r.URL.Path {
	case "/v/long": // more body than its Content-Length, in one write
		h.Set("Content-Length", "4")
		io.WriteString(w, "abcdSMUGGLED")
	case "/v/long2": // the same in two writes
		h.Set("Content-Length", "4")
		io.WriteString(w, "ab")
		io.WriteString(w, "cdSMUGGLED")
	case "/v/304": // a body on a status that has none
		h.Del("Content-Type")
		h.Set("Etag", `"x"`)
		w.WriteHeader(http.StatusNotModified)
		io.WriteString(w, "SMUGGLED")
		return "GET /v/{id}", http.StatusNotModified, nil
	case "/v/204":
		h.Del("Content-Type")
		w.WriteHeader(http.StatusNoContent)
		io.WriteString(w, "SMUGGLED")
		return "GET /v/{id}", http.StatusNoContent, nil
	case "/v/slow": // a busy answer
		<-f.slow
		h.Set("Content-Length", "4")
		io.WriteString(w, "slow")
	case "/v/badcl", "/v/spacecl", "/v/twocl", "/v/twocl2", "/v/negcl": // lengths net/http reads its way
		h["Content-Length"] = map[string][]string{"/v/badcl": {"abc"}, "/v/spacecl": {" 4"}, "/v/twocl": {"4", "4"},
			"/v/twocl2": {"4", "5"}, "/v/negcl": {"-1"}}[r.URL.Path]
		io.WriteString(w, "fast")
	case "/v/150k": // an answer the socket buffers hold only in part
		h.Set("Content-Length", strconv.Itoa(150_000))
		w.Write(make([]byte, 150_000))
	case "/v/big": // more than the socket buffers hold
		h.Set("Content-Length", strconv.Itoa(bigBody))
		w.Write(make([]byte, bigBody))
	case "/v/notype", "/v/notype-html", "/v/notype-gz": // net/http sniffs a type
		h.Del("Content-Type")
		h.Set("Content-Length", "13")
		if r.URL.Path == "/v/notype-gz" {
			h.Set("Content-Encoding", "gzip")
		}
		if r.URL.Path == "/v/notype-html" {
			io.WriteString(w, "<html>hi</html>"[:13])
		} else {
			io.WriteString(w, "\x89PNG\r\n\x1a\nabcde")
		}
	case "/v/panic": // a bug in a handler
		panic("fastOdd: a bug")
	case "/v/abort": // a handler giving up, as net/http's ErrAbortHandler asks
		panic(http.ErrAbortHandler)
	case "/v/close2", "/v/close3": // not close in net/http's reading
		h.Set("Connection", map[string]string{"/v/close2": "x close", "/v/close3": "Close"}[r.URL.Path])
		h.Set("Content-Length", "1")
		io.WriteString(w, "x")
	case "/v/close": // the handler closes the connection
		h.Set("Connection", "close")
		h.Set("Content-Length", "1")
		io.WriteString(w, "x")
	default:
		h.Set("Content-Length", "4")
		io.WriteString(w, "fast")
	}
	return "GET /v/{id}", http.StatusOK, nil
}

// bigBody is the length of /v/big's answer.
const bigBody = 64 << 20

// oddRoutes route /v/ to fastOdd, whose /v/slow answers wait for slow
// to close.
func oddRoutes(slow chan struct{}) []Route {
	return []Route{{Prefix: "/v/", Handler: fastOdd{slow: slow}}}
}

// general is the net/http handler behind the fast routes: what they hand
// back gets "general".
func general() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v/{id}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "general") })
	return mux
}

// serveBoth serves routes twice on 127.0.0.1, as the node does: with a
// Front in front of net/http, and net/http alone (the oracle), both with
// FastPath over general. It returns their addresses and a stop that
// shuts both down.
func serveBoth(t testing.TB, routes []Route, o Options) (front, plain string, fr *Front, stop func()) {
	t.Helper()
	lf, lp := listenPair(t)
	return serveBothOn(t, routes, o, lf, lp)
}

// listenPair listens twice on 127.0.0.1: for the Front and for net/http
// alone.
func listenPair(t testing.TB) (lf, lp net.Listener) {
	t.Helper()
	var err error
	if lf, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if lp, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	return lf, lp
}

// serveBothOn is serveBoth on the listeners given: lf the Front's, lp
// net/http's alone.
func serveBothOn(t testing.TB, routes []Route, o Options, lf, lp net.Listener) (front, plain string, fr *Front, stop func()) {
	t.Helper()
	o.Routes = routes
	h := FastPath(general(), o)
	quiet := slog.New(slog.DiscardHandler) // the panics the tests cause
	o.Logger = quiet
	fr = New(o)
	if fr == nil {
		t.Fatal("no front")
	}
	hf := &http.Server{Handler: fr.Wrap(h), ConnContext: fr.ConnContext,
		ReadHeaderTimeout: o.ReadHeader, IdleTimeout: o.Idle, WriteTimeout: o.Write, ErrorLog: slog.NewLogLogger(quiet.Handler(), slog.LevelError)}
	hp := &http.Server{Handler: h, ReadHeaderTimeout: o.ReadHeader, IdleTimeout: o.Idle, WriteTimeout: o.Write,
		ErrorLog: slog.NewLogLogger(quiet.Handler(), slog.LevelError)}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); fr.Serve(lf) }()            //nolint:errcheck
	go func() { defer wg.Done(); hf.Serve(fr.Listener()) }() //nolint:errcheck
	go func() { defer wg.Done(); hp.Serve(Lingering(lp)) }() //nolint:errcheck // as the node serves net/http alone
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			fr.Shutdown(ctx) //nolint:errcheck
			hf.Shutdown(ctx) //nolint:errcheck
			hp.Shutdown(ctx) //nolint:errcheck
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return lf.Addr().String(), lp.Addr().String(), fr, stop
}

func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

var wireDate = regexp.MustCompile(`Date: [^\r\n]*\r\n`)

// wire sends raw on a new connection and returns all it reads back until
// the server closes it (or 2 s of silence), the Date fields blanked.
func wire(t testing.TB, addr, raw string) string {
	t.Helper()
	// Bounded too: a server that stops accepting leaves a dial waiting
	// for its SYN's retries, which a fuzzing worker showed only as a
	// freeze (the input lost); failing, it is recorded.
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	io.Copy(&got, c) //nolint:errcheck // EOF, a reset or the deadline: what came is the answer
	return wireDate.ReplaceAllString(got.String(), "Date: <date>\r\n")
}

func req(path string, fields ...string) string {
	s := "GET " + path + " HTTP/1.1\r\nHost: a\r\n"
	for _, f := range fields {
		s += f + "\r\n"
	}
	return s + "\r\n"
}

// lastReq ends a pipelined burst: net/http answers it and closes.
var lastReq = req("/v/end", "Connection: close")

// TestFrontHostileHandlerAnswers: what a FastHandler writes past its
// Content-Length, or as the body of a 304 or 204, must not reach the
// wire (the client would read it as the answer to its next pipelined
// request: a response desync), and a Connection: close of its own ends
// the connection, exactly as net/http alone answers them.
func TestFrontHostileHandlerAnswers(t *testing.T) {
	front, plain, _, _ := serveBoth(t, oddRoutes(closed()), Options{ReadHeader: time.Second, Idle: time.Second, Write: time.Second})
	for _, path := range []string{"/v/long", "/v/long2", "/v/304", "/v/204", "/v/close"} {
		raw := req(path) + req("/v/ok") + lastReq
		got, want := wire(t, front, raw), wire(t, plain, raw)
		if got != want {
			t.Errorf("%s: the Front answered\n%q\nnet/http alone\n%q", path, got, want)
		}
		if strings.Contains(got, "SMUGGLED") {
			t.Errorf("%s: bytes past the answer's end on the wire", path)
		}
	}
}

// hostileRequests are requests the Front might read differently from
// net/http (smuggling, desync), each followed by more on the connection.
var hostileRequests = []struct{ name, raw string }{
	{"plain", req("/v/ok")},
	{"two hosts", "GET /v/ok HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"},
	{"no host", "GET /v/ok HTTP/1.1\r\n\r\n"},
	{"empty host", "GET /v/ok HTTP/1.1\r\nHost:\r\n\r\n"},
	{"host with userinfo", "GET /v/ok HTTP/1.1\r\nHost: u@a\r\n\r\n"},
	{"host with space", "GET /v/ok HTTP/1.1\r\nHost: a b\r\n\r\n"},
	{"space before colon", "GET /v/ok HTTP/1.1\r\nHost : a\r\n\r\n"},
	{"obs-fold", "GET /v/ok HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n"},
	{"obs-fold first", "GET /v/ok HTTP/1.1\r\n X-A: b\r\nHost: a\r\n\r\n"},
	{"NUL in value", "GET /v/ok HTTP/1.1\r\nHost: a\r\nX-A: b\x00c\r\n\r\n"},
	{"bare CR in value", "GET /v/ok HTTP/1.1\r\nHost: a\r\nX-A: b\rc\r\n\r\n"},
	{"obs-text in value", "GET /v/ok HTTP/1.1\r\nHost: a\r\nX-A: caf\xc3\xa9\xff\r\n\r\n"},
	{"non-token name", "GET /v/ok HTTP/1.1\r\nHost: a\r\nX\xffA: b\r\n\r\n"},
	{"empty name", "GET /v/ok HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n"},
	{"no colon", "GET /v/ok HTTP/1.1\r\nHost: a\r\nX-A\r\n\r\n"},
	{"bare LF", "GET /v/ok HTTP/1.1\nHost: a\n\n"},
	{"bare LF at the end", "GET /v/ok HTTP/1.1\r\nHost: a\r\n\n"},
	{"CR CR LF", "GET /v/ok HTTP/1.1\r\nHost: a\r\r\n\r\n"},
	{"leading empty line", "\r\nGET /v/ok HTTP/1.1\r\nHost: a\r\n\r\n"},
	{"content-length body", "GET /v/ok HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nGET /"},
	{"two content-lengths", "GET /v/ok HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\n"},
	{"chunked", "GET /v/ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
	{"chunked, CL", "GET /v/ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n"},
	{"lower-case te", "GET /v/ok HTTP/1.1\r\nHost: a\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"},
	{"expect", "GET /v/ok HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n"},
	{"connection close", "GET /v/ok HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"},
	{"connection keep-alive, close", "GET /v/ok HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, close\r\n\r\n"},
	{"connection Keep-Alive", "GET /v/ok HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive\r\n\r\n"},
	{"upgrade h2c", "GET /v/ok HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n"},
	{"HTTP/1.0", "GET /v/ok HTTP/1.0\r\nHost: a\r\n\r\n"},
	{"HTTP/1.0 keep-alive", "GET /v/ok HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\n\r\n"},
	{"HTTP/1.2", "GET /v/ok HTTP/1.2\r\nHost: a\r\n\r\n"},
	{"http/1.1", "GET /v/ok http/1.1\r\nHost: a\r\n\r\n"},
	{"two spaces", "GET  /v/ok HTTP/1.1\r\nHost: a\r\n\r\n"},
	{"space after version", "GET /v/ok HTTP/1.1 \r\nHost: a\r\n\r\n"},
	{"tab separator", "GET\t/v/ok HTTP/1.1\r\nHost: a\r\n\r\n"},
	{"lower-case method", "get /v/ok HTTP/1.1\r\nHost: a\r\n\r\n"},
	{"absolute form", "GET http://a/v/ok HTTP/1.1\r\nHost: a\r\n\r\n"},
	{"dot segments", "GET /v/../v/ok HTTP/1.1\r\nHost: a\r\n\r\n"},
	{"double slash", "GET //v/ok HTTP/1.1\r\nHost: a\r\n\r\n"},
	{"escape", "GET /v/%6fk HTTP/1.1\r\nHost: a\r\n\r\n"},
	{"query", "GET /v/ok?x=1 HTTP/1.1\r\nHost: a\r\n\r\n"},
	{"fragment", "GET /v/ok#x HTTP/1.1\r\nHost: a\r\n\r\n"},
	{"HEAD", "HEAD /v/ok HTTP/1.1\r\nHost: a\r\n\r\n"},
	{"HEAD 304", "HEAD /v/304 HTTP/1.1\r\nHost: a\r\n\r\n"},
	{"pragma", "GET /v/ok HTTP/1.1\r\nHost: a\r\nPragma: no-cache\r\n\r\n"},
	{"65 fields", "GET /v/ok HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-A: b\r\n", 64) + "\r\n"},
	{"header of 5 KiB", "GET /v/ok HTTP/1.1\r\nHost: a\r\nX-A: " + strings.Repeat("b", 5<<10) + "\r\n\r\n"},
	{"long name", "GET /v/ok HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("x-abc-", 20) + ": b\r\n\r\n"},
	{"PRI preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"},
	{"garbage", "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03"},
	{"pipelined, one bad", req("/v/ok") + "GET /v/ok HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" + req("/v/ok")},
	{"general then fast (reclaim)", req("/v/ok?q") + req("/v/ok") + req("/v/ok")},
	{"reclaim then smuggle", req("/v/ok?q") + "GET /v/ok HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nGET" + req("/v/ok")},
	{"HEAD reclaim", "HEAD /v/ok?q HTTP/1.1\r\nHost: a\r\n\r\n" + req("/v/ok")},
	{"304 reclaim", req("/v/304?q") + req("/v/ok")},
	{"wrong length reclaim", req("/v/long?q") + req("/v/ok")},
	{"close reclaim", req("/v/close?q") + req("/v/ok")},
	{"handler panics", req("/v/panic")},
	{"sniffed type", req("/v/notype") + req("/v/notype-html") + req("/v/notype-gz")},
	{"two lengths", req("/v/twocl") + req("/v/ok")},
	{"two lengths that differ", req("/v/twocl2") + req("/v/ok")}, // as net/http: the first is the length
	{"HEAD bad length", "HEAD /v/badcl HTTP/1.1\r\nHost: a\r\n\r\n" + req("/v/ok")},
	{"close as a token, reclaim", "GET /v/ HTTP/1.1\nHost:\nConneCtion:0 Close\n\n" + req("/v/ok")},
	{"close as a token, query", req("/v/ok?q", "Connection: x, y close") + req("/v/ok")},
	{"handler close as a token", req("/v/close2") + req("/v/ok")},
	{"handler Close", req("/v/close3") + req("/v/ok")},
	{"handler Close, HTTP/1.0", "GET /v/close3 HTTP/1.0\r\n\r\n"},
	{"handler panics, pipelined", req("/v/ok") + req("/v/panic") + req("/v/ok")},
	{"handler aborts", req("/v/abort")},
}

// TestFrontHostileRequests: the Front answers each hostile request (and
// the ones pipelined after it) byte for byte as net/http alone.
func TestFrontHostileRequests(t *testing.T) {
	front, plain, _, _ := serveBoth(t, oddRoutes(closed()), Options{ReadHeader: time.Second, Idle: time.Second, Write: time.Second})
	for _, c := range hostileRequests {
		raw := c.raw + lastReq
		got, want := wire(t, front, raw), wire(t, plain, raw)
		if got != want {
			t.Errorf("%s: the Front answered\n%q\nnet/http alone\n%q", c.name, got, want)
		}
	}
}

// FuzzFrontWire sends raw bytes (then a last request that closes) to the
// Front and to net/http alone, and wants the same bytes back from both.
//
//	go test -run '^$' -fuzz FuzzFrontWire -fuzztime 1m ./internal/httpapi/front
func FuzzFrontWire(f *testing.F) {
	for _, c := range hostileRequests {
		f.Add([]byte(c.raw))
	}
	front, plain, _, _ := serveBoth(f, oddRoutes(closed()), Options{ReadHeader: 300 * time.Millisecond,
		Idle: 300 * time.Millisecond, Write: time.Second})
	f.Fuzz(func(t *testing.T, raw []byte) {
		s := string(raw) + lastReq
		got, want := wire(t, front, s), wire(t, plain, s)
		if got != want {
			t.Errorf("the Front answered\n%q\nnet/http alone\n%q", got, want)
		}
	})
}

// TestFrontShutdown: a shutdown closes the idle connections of both
// servers (on the Front, reclaimed, left with net/http, half a header
// in), lets a busy answer finish whole (with Connection: close), and
// leaves no goroutine behind.
func TestFrontShutdown(t *testing.T) {
	before := runtime.NumGoroutine()
	slow := make(chan struct{})
	var running atomic.Int64
	var reclaims atomicCounter
	front, _, _, stop := serveBoth(t, oddRoutes(slow), Options{ReadHeader: 10 * time.Second, Idle: 10 * time.Second,
		Write: 10 * time.Second, Track: func(d int) { running.Add(int64(d)) }, Counters: Counters{Reclaims: &reclaims}})
	dial := func(raw string, answers int) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", front)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, raw)
		br := bufio.NewReader(c)
		for i := 0; i < answers; i++ {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
		}
		return c, br
	}
	var idle, plainIdle []*bufio.Reader
	for _, c := range []struct {
		raw     string
		answers int
	}{
		{req("/v/ok"), 1},                             // idle on the Front
		{req("/v/ok?q"), 1},                           // reclaimed
		{req("/v/ok?q") + req("/v/ok"), 2},            // reclaimed, then answered by the Front
		{"POST /v/ok HTTP/1.1\r\nHost: a\r\n\r\n", 1}, // left with net/http (405)
		{"GET /v/ok HTTP/1.1\r\nHo", 0},               // half a header
		{"", 0},                                       // nothing yet
	} {
		_, br := dial(c.raw, c.answers)
		if strings.HasPrefix(c.raw, "POST") {
			plainIdle = append(plainIdle, br) // closed once the Front has drained (serveHTTP's order)
		} else {
			idle = append(idle, br)
		}
	}
	// The two reclaimed connections are back on the Front (a connection
	// net/http still holds is closed by its Shutdown, which comes after
	// the Front's, after the busy answer).
	for reclaims.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	// The answers before are done (the Front counts an answer done after
	// its client may have read it): then a running answer is /v/slow's.
	for running.Load() != 0 {
		time.Sleep(time.Millisecond)
	}
	busy, bbr := dial(req("/v/slow"), 0)
	for running.Load() == 0 { // /v/slow is being answered
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	for i, br := range idle {
		if n, err := io.Copy(io.Discard, br); err != nil || n != 0 {
			t.Errorf("idle connection %d: %d bytes, %v; want a close", i, n, err)
		}
	}
	close(slow)
	for i, br := range plainIdle {
		if n, err := io.Copy(io.Discard, br); err != nil || n != 0 {
			t.Errorf("idle connection %d of net/http: %d bytes, %v; want a close", i, n, err)
		}
	}
	resp, err := http.ReadResponse(bbr, nil)
	if err != nil {
		t.Fatalf("busy answer: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if string(b) != "slow" || err != nil || !resp.Close {
		t.Errorf("busy answer: %q %v close %t", b, err, resp.Close)
	}
	busy.Close()
	<-done
	httpapitest.WaitGoroutines(t, before)
}

// atomicCounter is a Counter tests read.
type atomicCounter struct{ atomic.Int64 }

func (c *atomicCounter) Inc() { c.Add(1) }

// fastBreach is a FastHandler that breaks the contract where the Front
// refuses the answer: /b/te and /b/trailer frame their own body, /b/name
// sets a field name that is not a token, /b/600 a status past 599. /b/x
// sets a field as many as /b/name's, within the contract.
type fastBreach struct{}

func (fastBreach) ServeFast(w http.ResponseWriter, r *http.Request, c CORS) (string, int, *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/plain")
	h.Set("Content-Length", "4")
	status := http.StatusOK
	switch r.URL.Path {
	case "/b/te":
		h.Set("Transfer-Encoding", "chunked")
	case "/b/trailer":
		h.Set("Trailer", "X-A")
	case "/b/name":
		h["X A"] = []string{"b"}
	case "/b/x":
		h["X-A"] = []string{"b"}
	case "/b/600":
		status = 600
	}
	w.WriteHeader(status)
	io.WriteString(w, "fast")
	return "GET /b/{id}", status, nil
}

// TestFrontRefusesContractBreaches: an answer that breaks the FastHandler
// contract where writing it would put on the wire what net/http never
// sends is refused: the connection closes with nothing of it sent, and
// the request pipelined after it is not answered.
func TestFrontRefusesContractBreaches(t *testing.T) {
	routes := append(oddRoutes(closed()), Route{Prefix: "/b/", Handler: fastBreach{}})
	front, _, _, _ := serveBoth(t, routes, Options{ReadHeader: time.Second, Idle: time.Second, Write: time.Second})
	if got := wire(t, front, req("/b/ok")+lastReq); !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") {
		t.Fatalf("an answer within the contract: %q", got)
	}
	for _, path := range []string{"/b/te", "/b/trailer", "/b/name", "/b/600"} {
		if got := wire(t, front, req(path)+req("/v/ok")); got != "" {
			t.Errorf("%s: the Front sent %q, want nothing and a close", path, got)
		}
	}
	// After an answer within the contract on the same connection (whose
	// field names the Front has checked already): as many fields, or the
	// same ones, are checked again.
	for _, c := range [][2]string{{"/b/x", "/b/name"}, {"/b/ok", "/b/600"}, {"/b/ok", "/b/te"}} {
		got := wire(t, front, req(c[0])+req(c[1])+req("/v/ok"))
		if n := strings.Count(got, "HTTP/1.1 "); n != 1 || !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") {
			t.Errorf("%s then %s: %d answers, want the first alone: %q", c[0], c[1], n, got)
		}
	}
}

// TestFrontHandlerBadLength: a Content-Length of the handler's that is
// not a length (net/http drops it and chunks the body) never reaches the
// wire: the Front's answer is framed by the connection's end instead,
// and reads whole.
func TestFrontHandlerBadLength(t *testing.T) {
	front, _, _, _ := serveBoth(t, oddRoutes(closed()), Options{ReadHeader: time.Second, Idle: time.Second, Write: time.Second})
	for _, path := range []string{"/v/badcl", "/v/spacecl", "/v/negcl"} {
		got := wire(t, front, req(path)+req("/v/ok"))
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(got)), nil)
		if err != nil {
			t.Fatalf("%s: %v in %q", path, err, got)
		}
		b, err := io.ReadAll(resp.Body)
		if string(b) != "fast" || err != nil || strings.Contains(got, "Content-Length") || !resp.Close {
			t.Errorf("%s: %q", path, got)
		}
	}
}

// fastWait is a FastHandler that waits for its request's context to be
// done (an upstream that never answers), and reports that it was.
type fastWait struct{ started, cancelled chan struct{} }

func (f fastWait) ServeFast(w http.ResponseWriter, r *http.Request, c CORS) (string, int, *http.Request) {
	f.started <- struct{}{}
	select {
	case <-r.Context().Done():
		f.cancelled <- struct{}{}
	case <-time.After(20 * time.Second):
	}
	panic(http.ErrAbortHandler) // as a handler whose client has gone
}

// TestFrontHangUpCancels: a client that hangs up while a FastHandler
// waits cancels the request's context, on the Front as on net/http alone
// (its background read), whether it closes or only half-closes.
func TestFrontHangUpCancels(t *testing.T) {
	h := fastWait{started: make(chan struct{}, 1), cancelled: make(chan struct{}, 1)}
	front, plain, _, _ := serveBoth(t, []Route{{Prefix: "/w/", Handler: h}}, Options{ReadHeader: time.Second, Idle: time.Second, Write: time.Second})
	for _, addr := range []string{front, plain} {
		for _, half := range []bool{false, true} {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(c, req("/w/x"))
			<-h.started
			if half {
				c.(*net.TCPConn).CloseWrite()
			} else {
				c.Close()
			}
			select {
			case <-h.cancelled:
			case <-time.After(10 * time.Second):
				t.Errorf("front %t, half-close %t: the client hung up, the handler's context is not done", addr == front, half)
			}
			c.Close()
		}
	}
}

// promptWait is a Prompt FastHandler that waits 300 ms, or for its
// request's context to be done, and reports whether it was.
type promptWait struct{ started, cancelled chan bool }

func (f promptWait) Prompt() bool { return true }

func (f promptWait) ServeFast(w http.ResponseWriter, r *http.Request, c CORS) (string, int, *http.Request) {
	f.started <- true
	select {
	case <-r.Context().Done():
		f.cancelled <- true
	case <-time.After(300 * time.Millisecond):
		f.cancelled <- false
	}
	panic(http.ErrAbortHandler)
}

// TestFrontPromptUnwatched: the Front does not watch a Prompt handler's
// client (no timer per answer): its hang-up leaves the context as it
// was, where a handler that may wait for a peer has it cancelled
// (TestFrontHangUpCancels).
func TestFrontPromptUnwatched(t *testing.T) {
	h := promptWait{started: make(chan bool, 1), cancelled: make(chan bool, 1)}
	front, _, _, _ := serveBoth(t, []Route{{Prefix: "/p/", Handler: h}}, Options{ReadHeader: time.Second, Idle: time.Second, Write: time.Second})
	c, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, req("/p/x"))
	<-h.started
	c.Close()
	if <-h.cancelled {
		t.Error("a Prompt handler's context was cancelled by its client's hang-up: the Front watched it")
	}
}

// malformed are requests net/http refuses and closes on (400, 501, 431),
// the first two with more of the client's bytes behind them: a server
// that closes with those unread resets the connection.
var malformed = []struct{ name, raw string }{
	{"400", "GET /v/ok HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" + strings.Repeat("x", 20000)},
	{"501", "GET /v/ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n" + strings.Repeat("x", 20000)},
	{"431", "GET /v/ok HTTP/1.1\r\nHost: a\r\nX-A: " + strings.Repeat("b", 1<<20+8<<10) + "\r\n\r\n"},
}

// TestFrontLingeringClose: a client pipelines a large answer and a
// malformed request and reads only once the server is closing: the large
// answer arrives whole (a close with the client's bytes unread would
// reset the connection and cut it), on the Front (answered by the Front,
// or by net/http and taken back) as on net/http alone, and the two send
// the same bytes.
func TestFrontLingeringClose(t *testing.T) {
	lf, lp := listenPair(t)
	lf, fclosing := httpapitest.NotifyClose(lf)
	lp, pclosing := httpapitest.NotifyClose(lp)
	front, plain, _, _ := serveBothOn(t, oddRoutes(closed()), Options{ReadHeader: time.Second, Idle: time.Second, Write: 10 * time.Second}, lf, lp)
	for _, first := range []string{"/v/150k", "/v/150k?q"} { // the Front's answer; net/http's, taken back
		for _, bad := range malformed {
			var got [2]string
			for i, s := range []struct {
				addr    string
				closing <-chan struct{}
			}{{front, fclosing}, {plain, pclosing}} {
				got[i] = lazyRead(t, s.addr, req(first)+bad.raw, s.closing)
				resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(got[i])), nil)
				if err != nil {
					t.Fatalf("%s then %s, front %t: %v", first, bad.name, i == 0, err)
				}
				if n, err := io.Copy(io.Discard, resp.Body); n != 150_000 || err != nil {
					t.Errorf("%s then %s, front %t: %d bytes of 150000 (%v)", first, bad.name, i == 0, n, err)
				}
			}
			if got[0] != got[1] {
				t.Errorf("%s then %s: the Front answered\n%.300q\nnet/http alone\n%.300q", first, bad.name, got[0], got[1])
			}
		}
	}
}

// lazyRead sends raw on a new connection without reading, waits for the
// server to start closing it (closing), then reads all it sent, the Date
// fields blanked.
func lazyRead(t *testing.T, addr, raw string, closing <-chan struct{}) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go io.WriteString(c, raw) //nolint:errcheck // a reset ends it
	select {
	case <-closing:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not close the connection")
	}
	var got bytes.Buffer
	io.Copy(&got, c) //nolint:errcheck // the end or a reset: what came is the answer
	return wireDate.ReplaceAllString(got.String(), "Date: <date>\r\n")
}
