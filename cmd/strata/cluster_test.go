package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// clusterObjects is how many URLs the cluster test's upstream serves, and
// clusterObjectSize the size of each: together more than a node's RAM, so
// the nodes move them to flash.
const (
	clusterObjects    = 24
	clusterObjectSize = 192 << 10
	clusterFillers    = 128 // at most, asked of a node to push its objects to flash
)

// Three strata serve --upstream processes behind nginx hashing the URL
// consistently (docs/cluster.md), all in front of one upstream that counts
// the requests of each path:
//
//   - every URL is fetched once from the upstream and cached on exactly
//     one node: its second request through the balancer is a hit of the
//     same node, and the nodes' edge counters add up to one miss and one
//     hit per URL;
//   - a node killed with SIGKILL: its URLs are served by the others, from
//     the upstream, and the other URLs stay hits;
//   - the node restarted on its data directory recovers its flash cache
//     and serves its URLs from ssd again, without an upstream request.
//
// It runs with STRATA_CLUSTER_TESTS=1 (make test sets it) and needs nginx,
// installed with apt-get where it is missing.
func TestClusterConsistentHash(t *testing.T) {
	if os.Getenv("STRATA_CLUSTER_TESTS") != "1" {
		t.Skip("set STRATA_CLUSTER_TESTS=1 to run three nodes behind nginx (make test does)")
	}
	nginx := lookNginx(t)
	up := newCountingUpstream(t)
	bin := buildStrata(t)
	nodes := make([]*clusterNode, 3)
	for i := range nodes {
		nodes[i] = &clusterNode{bin: bin, data: t.TempDir(), addr: freeAddr(t), upstream: up.srv.URL}
		nodes[i].start(t)
	}
	lb := startBalancer(t, nginx, nodes)

	// 1. Each URL on exactly one node.
	owner := map[string]int{} // URL path -> index of the node that holds it
	perNode := make([]int, len(nodes))
	for _, p := range up.paths {
		first, second := lb.get(t, p, up), lb.get(t, p, up)
		if first.cache != "MISS" || second.cache != "HIT" || first.node != second.node {
			t.Fatalf("%s: %s on %s, then %s on %s; want MISS then HIT on one node", p,
				first.cache, first.node, second.cache, second.node)
		}
		i := nodeIndex(t, nodes, first.node)
		owner[p] = i
		perNode[i]++
		// A RAM of 1 MiB holds a few objects: let the monitor (20 ms)
		// start this one towards flash before the next insert can push
		// it out of RAM. Without the pause a burst evicts an object the
		// monitor never saw (evict-ahead's lost chance, counted as
		// ram.evicted_unsaved), and its next request is a miss: that is
		// the cache's right, not the property tested here.
		time.Sleep(60 * time.Millisecond)
	}
	for i, n := range nodes {
		edge := getStats(t, n.url())["edge"]
		if edge["misses"] != float64(perNode[i]) || edge["hits"] != float64(perNode[i]) ||
			edge["upstream_requests"] != float64(perNode[i]) {
			t.Fatalf("node %d holds %d URLs but its edge counters say %v", i, perNode[i], edge)
		}
	}
	for _, p := range up.paths {
		if n := up.count(p); n != 1 {
			t.Fatalf("%s: %d upstream requests, want 1", p, n)
		}
	}
	t.Logf("URLs per node: %v", perNode)

	// 2. Kill the node holding the most URLs: the others serve its share,
	// from the upstream; everything else stays a hit. Before, it serves
	// other objects (asked of it directly) until what it holds has left
	// its small RAM for flash, as it does under load: a SIGKILL loses RAM.
	victim := 0
	for i := range perNode {
		if perNode[i] > perNode[victim] {
			victim = i
		}
	}
	nodes[victim].pushToFlash(t, up, owner, victim)
	nodes[victim].kill(t)
	for _, p := range up.paths {
		r := lb.get(t, p, up)
		if r.node == nodes[victim].addr {
			t.Fatalf("%s served by the killed node", p)
		}
		want, wantCount := "HIT", 1
		if owner[p] == victim {
			want, wantCount = "MISS", 2
		}
		if r.cache != want || up.count(p) != wantCount {
			t.Fatalf("%s with node %d down: %s on %s, %d upstream requests; want %s, %d",
				p, victim, r.cache, r.node, up.count(p), want, wantCount)
		}
	}

	// 3. Restart it on its data directory: its URLs come back to it and
	// are served from flash, with no upstream request.
	nodes[victim].start(t)
	st := getStats(t, nodes[victim].url())
	if st["ssd"]["recovered_segments"] < float64(perNode[victim]) {
		t.Fatalf("node %d recovered %v objects from flash, held %d", victim, st["ssd"]["recovered_segments"], perNode[victim])
	}
	for _, p := range up.paths {
		if owner[p] != victim {
			continue
		}
		r := lb.get(t, p, up)
		if r.node != nodes[victim].addr || r.cache != "HIT" || r.tier != "ssd" || up.count(p) != 2 {
			t.Fatalf("%s after the restart: %s %s on %s, %d upstream requests; want a HIT from ssd on %s, 2",
				p, r.cache, r.tier, r.node, up.count(p), nodes[victim].addr)
		}
	}
	if edge := getStats(t, nodes[victim].url())["edge"]; edge["upstream_requests"] != 0 {
		t.Fatalf("the restarted node asked its upstream: %v", edge)
	}
}

// lookNginx returns nginx's path, installing it with apt-get where it is
// missing.
func lookNginx(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	for _, args := range [][]string{{"update", "-qq"}, {"install", "-y", "-qq", "nginx"}} {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nginx is missing and apt-get %s failed: %v\n%s", args[0], err, out)
		}
	}
	p, err := exec.LookPath("nginx")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// countingUpstream serves clusterObjects objects, fresh for an hour with a
// strong validator, and counts the requests of each path.
type countingUpstream struct {
	srv   *httptest.Server
	paths []string
	body  map[string][]byte
	mu    sync.Mutex
	n     map[string]int // requests per path; guarded by mu
}

func newCountingUpstream(t *testing.T) *countingUpstream {
	u := &countingUpstream{body: map[string][]byte{}, n: map[string]int{}}
	for i := range clusterObjects {
		p := fmt.Sprintf("/title-%d/seg-%02d.m4s", i%4, i)
		u.paths = append(u.paths, p)
		u.body[p] = bytes.Repeat([]byte{byte(i + 1)}, clusterObjectSize)
	}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.n[r.URL.Path]++
		u.mu.Unlock()
		b, ok := u.body[r.URL.Path]
		if strings.HasPrefix(r.URL.Path, "/filler/") {
			b, ok = bytes.Repeat([]byte{0xf}, clusterObjectSize), true
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Header().Set("ETag", strconv.Quote(r.URL.Path))
		w.Header().Set("Content-Type", "video/iso.segment")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *countingUpstream) count(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.n[path]
}

// A clusterNode is one strata serve --upstream process.
type clusterNode struct {
	bin, data, addr string
	// upstream is the origin of the prefix /, as --upstream; "" for none
	// (the [[upstream]] tables of a --config in args).
	upstream string
	// args are more flags, after start's own: a flag given twice takes its
	// last value. stderr, when not nil, gets the node's server log (the
	// test's stderr otherwise).
	args   []string
	stderr io.Writer
	cmd    *exec.Cmd
}

func (n *clusterNode) url() string { return "http://" + n.addr }

// start runs the node on its data directory and address; its RAM (1 MiB)
// holds a few objects only, so what it caches moves to flash, all of RAM
// being the monitor room and admission never refusing.
func (n *clusterNode) start(t *testing.T) {
	t.Helper()
	args := []string{"serve", "--data", n.data, "--listen", n.addr,
		"--no-images", "--ram", "1MiB", "--flash-size", "32MiB", "--block-size", "1MiB", "--files-flash-size", "0",
		"--monitor-period", "20ms", "--monitor-room", "1", "--threshold", "1.01", "--log-level", "warn"}
	if n.upstream != "" {
		args = append(args, "--upstream", "/="+n.upstream+"/")
	}
	n.cmd = exec.Command(n.bin, append(args, n.args...)...)
	out, err := n.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	n.cmd.Stderr = os.Stderr
	if n.stderr != nil {
		n.cmd.Stderr = n.stderr
	}
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd := n.cmd
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// It prints its address once it listens.
	buf := make([]byte, 4096)
	var seen []byte
	for !bytes.Contains(seen, []byte("listening ")) {
		k, err := out.Read(buf)
		if err != nil {
			t.Fatalf("node %s exited before it listened: %v\n%s", n.addr, err, seen)
		}
		seen = append(seen, buf[:k]...)
	}
	go io.Copy(io.Discard, out)
}

// kill stops the node with SIGKILL.
func (n *clusterNode) kill(t *testing.T) {
	t.Helper()
	if err := n.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	n.cmd.Wait()
}

// pushToFlash asks the node for filler objects, at most clusterFillers,
// until every URL it holds (owner[path] == me) is served from its flash:
// newer objects push older ones out of RAM, through the ring, onto flash
// in whole blocks. It looks at the URLs only every fillersPerCheck
// fillers, more than its RAM holds: a look is a hit, which keeps a URL
// still in RAM at the head of the pool.
func (n *clusterNode) pushToFlash(t *testing.T, up *countingUpstream, owner map[string]int, me int) {
	t.Helper()
	const fillersPerCheck = 8 // a filler is larger than 1/8 of the node's 1 MiB of RAM
	for i := range clusterFillers {
		if i%fillersPerCheck == 0 {
			onFlash := true
			for _, p := range up.paths {
				if owner[p] == me && n.tierOf(t, p) != "ssd" {
					onFlash = false
					break
				}
			}
			if onFlash {
				t.Logf("node %s: every object it holds is on flash after %d fillers", n.addr, i)
				return
			}
		}
		n.tierOf(t, fmt.Sprintf("/filler/%d", i))
		time.Sleep(50 * time.Millisecond) // the feed writes whole blocks at its own pace
	}
	st := getStats(t, n.url())
	t.Fatalf("node %s: its objects are not all on flash after %d fillers: ram %v ring %v ssd %v", n.addr, clusterFillers, st["ram"], st["ring"], st["ssd"])
}

// tierOf GETs path of the node itself and returns the tier that served it.
func (n *clusterNode) tierOf(t *testing.T, path string) string {
	t.Helper()
	resp, err := http.Get(n.url() + path)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s of node %s: %d", path, n.addr, resp.StatusCode)
	}
	return resp.Header.Get("X-Strata-Tier")
}

// freeAddr returns a 127.0.0.1 address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// balancer is nginx in front of the nodes.
type balancer struct{ addr string }

// clusterNginxConf is docs/cluster.md's load balancer: %s are the
// temporary prefix (twice), the nodes' server lines and the listen address.
const clusterNginxConf = `worker_processes 1;
error_log %s/error.log warn;
pid %s/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    upstream strata {
        # Each URL to one node, and most URLs to the same node when one
        # joins or leaves (ketama).
        hash $request_uri consistent;
%s    }
    server {
        listen %s;
        location / {
            proxy_pass http://strata;
            # A refused connection tries the next node on the ring.
            proxy_next_upstream error timeout;
            # Which node answered, for the test.
            add_header X-Node $upstream_addr always;
        }
    }
}
`

func startBalancer(t *testing.T, nginx string, nodes []*clusterNode) *balancer {
	t.Helper()
	dir := nginxDir(t, "strata-lb-")
	var servers strings.Builder
	for _, n := range nodes {
		// max_fails=0: a node that failed is tried again at the next
		// request, so a restarted node gets its URLs back at once.
		fmt.Fprintf(&servers, "        server %s max_fails=0;\n", n.addr)
	}
	lb := &balancer{addr: freeAddr(t)}
	runNginx(t, nginx, dir, fmt.Appendf(nil, clusterNginxConf, dir, dir, servers.String(), lb.addr), lb.addr)
	return lb
}

// nginxDir is a fresh prefix directory for an nginx of a test, removed
// when the test ends.
func nginxDir(t *testing.T, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755) // nginx's workers may run as another user
	return dir
}

// runNginx runs nginx with the configuration conf in its prefix directory
// dir until the test ends, and waits until it listens on addr.
func runNginx(t *testing.T, nginx, dir string, conf []byte, addr string) {
	t.Helper()
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, conf, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"client_body_temp", "proxy_temp", "fastcgi_temp", "uwsgi_temp", "scgi_temp"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
	}
	cmd := exec.Command(nginx, "-c", path, "-p", dir+"/", "-g", "daemon off;")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// SIGTERM, not SIGKILL: nginx's master stops its workers before it
	// exits; killed, it would leave them serving the port.
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	for range 300 { // bounded readiness poll
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("nginx never listened on %s", addr)
}

// lbResult is what one request through the balancer said.
type lbResult struct{ node, cache, tier string }

// get fetches path through the balancer and checks the body.
func (b *balancer) get(t *testing.T, path string, up *countingUpstream) lbResult {
	t.Helper()
	resp, err := http.Get("http://" + b.addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(body, up.body[path]) {
		t.Fatalf("GET %s through nginx: %d, %d bytes, %v", path, resp.StatusCode, len(body), err)
	}
	return lbResult{node: resp.Header.Get("X-Node"), cache: resp.Header.Get("X-Strata-Cache"), tier: resp.Header.Get("X-Strata-Tier")}
}

func nodeIndex(t *testing.T, nodes []*clusterNode, addr string) int {
	t.Helper()
	for i, n := range nodes {
		if n.addr == addr {
			return i
		}
	}
	t.Fatalf("answered by %q, not a node", addr)
	return -1
}
