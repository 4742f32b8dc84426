package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// outageSegments is how many segments the outage test warms through the
// balancer: enough that each of three nodes holds some whatever ports the
// ring hashes (one of three left empty: 3*(2/3)^30, 2 runs in 10^5).
const (
	outageSegments    = 30
	outageSegmentSize = 48 << 10
	outageCold        = 6 // segments the origin has and no node was asked
	outageTTL         = time.Second
)

// fileOrigin is nginx serving a directory of files with its own
// validators and no freshness information, stopped and started again on
// the same address.
type fileOrigin struct {
	nginx, dir, addr string
	conf             []byte
	files            map[string][]byte // URL path -> body
}

// startFileOrigin runs nginx serving files (URL path -> body).
func startFileOrigin(t *testing.T, nginx string, files map[string][]byte) *fileOrigin {
	t.Helper()
	root := nginxDir(t, "strata-origin-root-")
	for p, b := range files {
		path := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := &fileOrigin{nginx: nginx, dir: nginxDir(t, "strata-origin-"), addr: freeAddr(t), files: files}
	o.conf = fmt.Appendf(nil, bareNginxConf, o.dir, o.dir, filepath.Join(o.dir, "access.log"), o.addr, root)
	o.start(t)
	return o
}

func (o *fileOrigin) url() string        { return "http://" + o.addr }
func (o *fileOrigin) start(t *testing.T) { runNginx(t, o.nginx, o.dir, o.conf, o.addr) }
func (o *fileOrigin) stop(t *testing.T)  { stopNginx(t, o.nginx, o.dir, o.addr) }

// answer is what one request said.
type answer struct {
	status             int
	cache, node, ctype string
	body               []byte
}

func fetchAnswer(t *testing.T, url string) answer {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return answer{status: resp.StatusCode, cache: resp.Header.Get("X-Strata-Cache"), node: resp.Header.Get("X-Node"),
		ctype: resp.Header.Get("Content-Type"), body: body}
}

// readiness is /readyz's status and its upstream check's.
func readiness(t *testing.T, n *clusterNode) (status int, state string, upstreamDegraded bool) {
	t.Helper()
	resp, err := http.Get(n.url() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rd struct {
		Status string
		Checks []struct {
			Name     string
			Degraded bool
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&rd); err != nil {
		t.Fatalf("/readyz of %s: %v", n.addr, err)
	}
	for _, c := range rd.Checks {
		if c.Name == "upstream /" {
			upstreamDegraded = c.Degraded
		}
	}
	return resp.StatusCode, rd.Status, upstreamDegraded
}

// waitReadiness polls n's /readyz (bounded: its checks are reused for
// 5 s) until it answers 200 with the state want, and fails the test
// otherwise.
func waitReadiness(t *testing.T, n *clusterNode, want string) {
	t.Helper()
	var code int
	var state string
	for deadline := time.Now().Add(8 * time.Second); ; {
		var degraded bool
		code, state, degraded = readiness(t, n)
		if code == http.StatusOK && state == want && degraded == (want == "degraded") {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("/readyz of node %s: %d %q, want 200 %q", n.addr, code, state, want)
}

// waitLog waits (bounded) until the server log at path holds line, and
// reports whether it does.
func waitLog(path, line string) bool {
	for i := 0; i < 100; i++ {
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(line)) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// Three edge nodes behind nginx's hash $request_uri consistent, in front
// of nginx serving files without freshness information ([edge]
// default_ttl 1 s here; keep_on_error left at its default). The origin
// stops once the tier holds every segment and their freshness has run
// out:
//
//   - every segment is still answered, by the node that holds it, 200
//     with its bytes, marked STALE;
//   - every node's /readyz stays 200, "degraded" (its upstream check
//     failed, the node serves without it): the balancer keeps them all;
//   - a segment no node holds answers 502 or 504, a problem;
//   - every node logs that its upstream fails.
//
// The origin comes back on the same address: every segment is
// revalidated (REVALIDATED, nginx's 304), the cold ones are fetched, and
// every node logs the recovery and is ready again.
func TestClusterOriginOutage(t *testing.T) {
	if os.Getenv("STRATA_CLUSTER_TESTS") != "1" {
		t.Skip("set STRATA_CLUSTER_TESTS=1 to run three nodes behind nginx (make test does)")
	}
	nginx := lookNginx(t)
	files := map[string][]byte{}
	var segs, cold []string
	for i := range outageSegments + outageCold {
		p := fmt.Sprintf("/live/seg-%02d.m4s", i)
		if i >= outageSegments {
			p = fmt.Sprintf("/live/cold-%02d.m4s", i)
			cold = append(cold, p)
		} else {
			segs = append(segs, p)
		}
		b := make([]byte, outageSegmentSize)
		for j := range b {
			b[j] = byte(i*31 + j*7)
		}
		files[p] = b
	}
	origin := startFileOrigin(t, nginx, files)
	bin := buildStrata(t)
	nodes := make([]*clusterNode, 3)
	logs := make([]string, len(nodes))
	for i := range nodes {
		logs[i] = filepath.Join(t.TempDir(), "server.log")
		f, err := os.Create(logs[i])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		// RAM for every segment: the property is the outage's, not the
		// tiers'. Info: the recoveries are logged at that level.
		nodes[i] = &clusterNode{bin: bin, data: t.TempDir(), addr: freeAddr(t), upstream: origin.url(), stderr: f,
			args: []string{"--ram", "16MiB", "--edge-default-ttl", outageTTL.String(), "--log-level", "info"}}
		nodes[i].start(t)
	}
	lb := startBalancer(t, nginx, nodes)
	through := func(p string) answer { t.Helper(); return fetchAnswer(t, "http://"+lb.addr+p) }

	// 1. The tier warms: each segment fetched once, held by one node.
	owner := map[string]string{}
	held := make([]int, len(nodes))
	for _, p := range segs {
		a := through(p)
		if a.status != 200 || a.cache != "MISS" || !bytes.Equal(a.body, files[p]) {
			t.Fatalf("warming %s: %d %s, %d bytes", p, a.status, a.cache, len(a.body))
		}
		owner[p] = a.node
		held[nodeIndex(t, nodes, a.node)]++
	}
	warmed := time.Now()
	for i, k := range held {
		if k == 0 {
			t.Fatalf("node %d holds none of the %d segments (%v): the outage would not be seen on it", i, len(segs), held)
		}
	}
	t.Logf("segments per node: %v", held)

	// 2. The origin stops; the copies expire.
	origin.stop(t)
	time.Sleep(time.Until(warmed.Add(outageTTL + 200*time.Millisecond))) // freshness, on the nodes' real clocks
	for _, p := range segs {
		a := through(p)
		if a.status != 200 || a.cache != "STALE" || a.node != owner[p] || !bytes.Equal(a.body, files[p]) {
			t.Fatalf("%s with the origin down: %d %s from %s, %d bytes; want 200 STALE from %s with its bytes",
				p, a.status, a.cache, a.node, len(a.body), owner[p])
		}
	}
	for i, n := range nodes {
		if got := getStats(t, n.url())["edge"]["stale_served"]; got != float64(held[i]) {
			t.Fatalf("node %d served %v stale answers, holds %d segments", i, got, held[i])
		}
	}
	for _, p := range cold {
		a := through(p)
		var pr struct {
			Status int    `json:"status"`
			Title  string `json:"title"`
		}
		if (a.status != http.StatusBadGateway && a.status != http.StatusGatewayTimeout) ||
			a.ctype != "application/problem+json" || json.Unmarshal(a.body, &pr) != nil || pr.Status != a.status {
			t.Fatalf("%s (never cached) with the origin down: %d %q %q; want 502 or 504, a problem", p, a.status, a.ctype, a.body)
		}
	}
	for i, n := range nodes {
		waitReadiness(t, n, "degraded")
		if !waitLog(logs[i], `msg="edge upstream failing"`) {
			t.Fatalf("node %d logged no upstream failure:\n%s", i, readLog(logs[i]))
		}
		if strings.Contains(readLog(logs[i]), "edge upstream recovered") {
			t.Fatalf("node %d logged a recovery with its origin down", i)
		}
	}

	// 3. The origin returns: the edges revalidate what they hold, fetch
	// what they did not, and log the recovery.
	origin.start(t)
	for _, p := range segs {
		a := through(p)
		if a.status != 200 || a.cache != "REVALIDATED" || a.node != owner[p] || !bytes.Equal(a.body, files[p]) {
			t.Fatalf("%s after the origin returned: %d %s from %s, %d bytes; want 200 REVALIDATED from %s",
				p, a.status, a.cache, a.node, len(a.body), owner[p])
		}
	}
	for _, p := range cold {
		if a := through(p); a.status != 200 || a.cache != "MISS" || !bytes.Equal(a.body, files[p]) {
			t.Fatalf("%s after the origin returned: %d %s, %d bytes; want 200 MISS", p, a.status, a.cache, len(a.body))
		}
	}
	for i, n := range nodes {
		if !waitLog(logs[i], `msg="edge upstream recovered"`) {
			t.Fatalf("node %d logged no recovery:\n%s", i, readLog(logs[i]))
		}
		if got := getStats(t, n.url())["edge"]["revalidated"]; got != float64(held[i]) {
			t.Fatalf("node %d: %v revalidated, holds %d segments", i, got, held[i])
		}
		waitReadiness(t, n, "ready")
	}
}

func readLog(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

// upstreamStats returns node n's edge counters of each upstream server,
// by name ("primary", "backup 1").
func upstreamStats(t *testing.T, n *clusterNode) map[string]struct {
	Requests, Errors uint64
	Failing          bool
} {
	t.Helper()
	resp, err := http.Get(n.url() + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Edge struct {
			Upstreams []struct {
				Server           string
				Requests, Errors uint64
				Failing          bool
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	out := map[string]struct {
		Requests, Errors uint64
		Failing          bool
	}{}
	for _, u := range st.Edge.Upstreams {
		out[u.Server] = struct {
			Requests, Errors uint64
			Failing          bool
		}{u.Requests, u.Errors, u.Failing}
	}
	return out
}

// A node whose upstream has a primary and a backup (nginx both, the same
// files), keep_on_error off so that no stale copy hides an error: with
// the primary stopped, four clients asking for segments the node never
// stored (each request a miss: its query string is new) get every answer
// from the backup, not one error, while the primary is probed after each
// fail_timeout and fails again; /readyz stays ready (the backup answers).
// The primary returns: the traffic goes back to it after a probe, the
// node logs its recovery, and the backup is asked no more.
func TestEdgeFailoverToBackup(t *testing.T) {
	if os.Getenv("STRATA_CLUSTER_TESTS") != "1" {
		t.Skip("set STRATA_CLUSTER_TESTS=1 to run a node in front of two nginx origins (make test does)")
	}
	const failTimeout = time.Second
	nginx := lookNginx(t)
	files := map[string][]byte{}
	var segs []string
	for i := range 8 {
		p := fmt.Sprintf("/vod/seg-%d.m4s", i)
		b := make([]byte, 32<<10)
		for j := range b {
			b[j] = byte(i*13 + j*3)
		}
		files[p], segs = b, append(segs, p)
	}
	primary, backup := startFileOrigin(t, nginx, files), startFileOrigin(t, nginx, files)
	conf := filepath.Join(t.TempDir(), "strata.toml")
	os.WriteFile(conf, fmt.Appendf(nil, "[edge]\nkeep_on_error = \"0s\"\n[[upstream]]\nprefix = \"/\"\nurl = %q\nbackup = [%q]\nfail_timeout = %q\n",
		primary.url()+"/", backup.url()+"/", failTimeout.String()), 0o644)
	logPath := filepath.Join(t.TempDir(), "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	n := &clusterNode{bin: buildStrata(t), data: t.TempDir(), addr: freeAddr(t), stderr: logFile,
		args: []string{"--config", conf, "--ram", "16MiB", "--log-level", "info"}}
	n.start(t)

	var seq atomic.Int64
	// get asks for a segment under a query string never asked before: a
	// miss, sent upstream. It returns "" or what was wrong.
	get := func() string {
		p := segs[int(seq.Add(1))%len(segs)]
		url := fmt.Sprintf("%s%s?r=%d", n.url(), p, seq.Load())
		resp, err := http.Get(url)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("X-Strata-Cache") != "MISS" || !bytes.Equal(body, files[p]) {
			return fmt.Sprintf("GET %s: %d %s, %d bytes, %v", url, resp.StatusCode, resp.Header.Get("X-Strata-Cache"), len(body), err)
		}
		return ""
	}
	// load runs four clients for d and returns the requests they made
	// and the first error, if any.
	load := func(d time.Duration) (int, string) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		total, first := 0, ""
		end := time.Now().Add(d)
		for range 4 {
			wg.Go(func() {
				for time.Now().Before(end) {
					e := get()
					mu.Lock()
					total++
					if e != "" && first == "" {
						first = e
					}
					mu.Unlock()
					time.Sleep(10 * time.Millisecond) // a player's pace, not a benchmark's
				}
			})
		}
		wg.Wait()
		return total, first
	}

	// 1. The primary answers everything.
	if k, e := load(300 * time.Millisecond); e != "" || k == 0 {
		t.Fatalf("with both servers up: %d requests, %s", k, e)
	}
	if st := upstreamStats(t, n); st["primary"].Requests == 0 || st["primary"].Errors != 0 || st["backup 1"].Requests != 0 {
		t.Fatalf("with both servers up: %+v, want the primary only", st)
	}

	// 2. The primary stops: through two fail_timeouts and more, every
	// request is answered, by the backup.
	primary.stop(t)
	k, e := load(2*failTimeout + 500*time.Millisecond)
	if e != "" {
		t.Fatalf("with the primary down, %d requests: %s", k, e)
	}
	st := upstreamStats(t, n)
	if st["backup 1"].Requests == 0 || st["backup 1"].Errors != 0 || !st["primary"].Failing || st["primary"].Errors < 2 {
		t.Fatalf("with the primary down, %d requests, no error: %+v; want the backup answering and the primary failing, probed again", k, st)
	}
	if code, state, _ := readiness(t, n); code != 200 || state != "ready" {
		t.Fatalf("/readyz with the backup answering: %d %q, want 200 ready", code, state)
	}
	if !waitLog(logPath, `msg="edge upstream failing"`) {
		t.Fatalf("no upstream failure logged:\n%s", readLog(logPath))
	}
	t.Logf("primary down: %d requests, no error; %+v", k, st)

	// 3. The primary returns: once a probe finds it (bounded: a
	// fail_timeout and some), the traffic is its again.
	primary.start(t)
	for i := 0; ; i++ {
		if e := get(); e != "" {
			t.Fatalf("with the primary back: %s", e)
		}
		if !upstreamStats(t, n)["primary"].Failing {
			break
		}
		if i == 200 {
			t.Fatalf("the primary is still failing after its return: %+v", upstreamStats(t, n))
		}
		time.Sleep(20 * time.Millisecond)
	}
	before := upstreamStats(t, n)
	if k, e := load(300 * time.Millisecond); e != "" || k == 0 {
		t.Fatalf("after the primary's return: %d requests, %s", k, e)
	}
	if after := upstreamStats(t, n); after["backup 1"].Requests != before["backup 1"].Requests || after["primary"].Requests <= before["primary"].Requests {
		t.Fatalf("after the primary's recovery: %+v then %+v; want the primary only", before, after)
	}
	if !waitLog(logPath, `msg="edge upstream recovered"`) {
		t.Fatalf("no recovery logged:\n%s", readLog(logPath))
	}
	for _, line := range strings.Split(readLog(logPath), "\n") {
		if strings.Contains(line, "edge upstream recovered") && !strings.Contains(line, primary.addr) {
			t.Fatalf("a recovery of another server than the primary %s: %s", primary.addr, line)
		}
	}
}
