package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/edgekey"
	"github.com/strata-media/strata/internal/sim/des"
	"github.com/strata-media/strata/internal/sim/flashstream"
	"github.com/strata-media/strata/internal/sim/policysim"
	"github.com/strata-media/strata/internal/tools/peers"
)

// simPeersPolicies are libCacheSim's policies run on the peers trace: its
// offline bounds and its best online ones.
const simPeersPolicies = "LRU,ARC,S3FIFO,Sieve,WTinyLFU,LHD,Belady,BeladySize"

// runSimPeers is strata sim peers: the request trace of one server's turn
// in scripts/peers/run.sh (same library, same strata bench seeds and
// rates), replayed through the tier core under each objective and, when
// python imports libcachesim, through libCacheSim's online policies and
// its offline Belady bounds, at the same RAM + flash budget.
func runSimPeers(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim peers", "--from RUN [--out DIR] [--steady N] [--python P]", stderr)
	out := fs.String("out", "sim-peers", "directory for the trace (oracleGeneral), libCacheSim's figures and report.md")
	from := fs.String("from", "", "required: a scripts/peers/run.sh result directory (or its strata.json), e.g. docs/results/2026-11-24-peers: "+
		"Strata's find-max trials and 80% rate give the trace, the peers' results the best peer's byte hit ratio")
	steady := fs.Int("steady", 0, "instead, N requests at the run's 80% rate from one seed after a warm-up of N/2 (a long run of the same law)")
	python := fs.String("python", "", "python with libcachesim (default .cache/lcs-venv/bin/python, then python3)")
	peerBHR := fs.Float64("peer-byte-hit", 0, "the best peer's byte hit ratio, for the max-rate ratio (default: from the peers' results beside --from)")
	ram := fs.Int64("ram", 192<<20, "RAM budget, bytes (run.sh: 192 MiB)")
	flash := fs.Int64("flash", 2<<30, "flash budget, bytes (run.sh: 2 GiB)")
	edgeKeys := fs.Bool("edge-keys", true, "replay the edge's tier keys (grouped by edgekey.Group, as strata serve does), not the paths")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	run, err := readSimPeersRun(*from, *peerBHR)
	if err != nil {
		return err
	}
	phases := run.phases(*steady)
	progress := policysim.Progress(stderr)
	tr, err := peers.BuildTrace(peers.DefaultLibrary(), phases)
	if err != nil {
		return err
	}
	progress("trace: %d requests (%d counted), %d objects", len(tr.Reqs), len(tr.Reqs)-tr.Counted, len(tr.Keys))
	keys := tr.Keys
	if *edgeKeys { // the keys the edge's engine gives the tier for these paths
		keys = make([]string, len(tr.Keys))
		for i, k := range tr.Keys {
			keys[i] = edgekey.Whole("/edge/", "http://127.0.0.1/", strings.TrimPrefix(k, "/"))
		}
	}
	t := &policysim.Trace{Workload: "peers", Cat: &des.Catalog{Keys: keys, Sizes: tr.Sizes}, Reqs: tr.Reqs, Times: tr.Times}
	sc := policysim.Scale{Name: "peers", RAM: *ram, SSD: *flash, Block: tier.DefaultBlockSize, Rate: 20, WarmRequests: tr.Counted}
	rows, belady, err := simPeersReplay(t, sc, progress)
	if err != nil {
		return err
	}
	lcs, err := simPeersLibCacheSim(*out, *python, sc, t, progress)
	if err != nil {
		return err
	}
	oracle, err := peers.Oracle(peers.DefaultLibrary(), 0.8, sc.Capacity())
	if err != nil {
		return err
	}
	md := simPeersReport(strings.TrimSpace("strata sim peers "+strings.Join(args, " ")), phases, tr, sc, rows, belady, lcs, oracle, run)
	if err := os.WriteFile(filepath.Join(*out, "report.md"), []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Fprint(stdout, md)
	return nil
}

// A simPeersRun is what sim peers takes from a run.sh result: Strata's
// find-max trials and 80% rate, and the best peer's byte hit ratio.
type simPeersRun struct {
	dir     string
	trials  []float64
	rate80  float64
	peer    string  // the best peer by byte hit ratio
	peerBHR float64 // its byte hit ratio
}

// readSimPeersRun reads the run.sh result from (a directory, or its
// strata.json); peerBHR, if not 0, stands for the peers' results.
func readSimPeersRun(from string, peerBHR float64) (simPeersRun, error) {
	if from == "" {
		return simPeersRun{}, fmt.Errorf("%w: --from is required: a scripts/peers/run.sh result directory, such as docs/results/2026-11-24-peers", errUsage)
	}
	dir := from
	if st, err := os.Stat(from); err == nil && !st.IsDir() {
		dir = filepath.Dir(from)
	}
	results, err := peers.Load(dir)
	if err != nil {
		return simPeersRun{}, err
	}
	run := simPeersRun{dir: dir, peer: "--peer-byte-hit", peerBHR: peerBHR}
	found := false
	for _, r := range results {
		if r.Server == "strata" {
			run.trials, run.rate80 = peers.RunTrials(r)
			found = true
		} else if m := peers.Compute(r); peerBHR == 0 && m.ByteHitRatio > run.peerBHR {
			run.peer, run.peerBHR = r.Server, m.ByteHitRatio
		}
	}
	switch {
	case !found:
		return run, fmt.Errorf("%w: --from %s: no strata.json", errUsage, from)
	case run.peerBHR <= 0:
		return run, fmt.Errorf("%w: --from %s: no peer's result with a byte hit ratio: give --peer-byte-hit", errUsage, from)
	}
	return run, nil
}

// phases are the phases of the trace: the run's, or a steady one of n
// requests at its 80% rate.
func (r simPeersRun) phases(steady int) []peers.Phase {
	if steady > 0 {
		d := time.Duration(float64(steady) / r.rate80 * float64(time.Second))
		return []peers.Phase{{Name: "warm", Rate: r.rate80, Duration: d / 2, Seed: 1},
			{Name: "steady", Rate: r.rate80, Duration: d, Seed: 7}}
	}
	return peers.RunPhases(r.trials, r.rate80)
}

// simPeersReplay replays t through the core: reinsert under each
// objective, tinylfu under requests and bytes, lru; and our Belady's hit
// ratio.
func simPeersReplay(t *policysim.Trace, sc policysim.Scale, progress func(string, ...any)) ([]policysim.Result, float64, error) {
	type run struct {
		p tier.BlockPolicy
		o tier.Objective
	}
	runs := []run{{tier.BlockReinsert, tier.ObjectiveRequests}, {tier.BlockReinsert, tier.ObjectiveBytes},
		{tier.BlockReinsert, tier.ObjectiveBalanced}, {tier.BlockTinyLFU, tier.ObjectiveRequests}, {tier.BlockTinyLFU, tier.ObjectiveBytes}, {tier.BlockLRU, tier.ObjectiveRequests}}
	rows := make([]policysim.Result, len(runs))
	var belady float64
	jobs := []func() error{func() error {
		belady = flashstream.BeladyHitRatio(t.Reqs, t.Cat.Sizes, sc.Capacity(), sc.WarmRequests)
		progress("our Belady: hit ratio %.3f", belady)
		return nil
	}}
	for i, r := range runs {
		jobs = append(jobs, func() error {
			// The live engine's threshold admission is left out (always
			// admit), as in strata sim policies: the policies differ
			// only in what they keep.
			res, err := policysim.ReplayWith(t, sc, tier.Options{RAMBytes: sc.RAM, BlockSize: sc.Block, DeviceSize: sc.SSD,
				BlockPolicy: r.p, Objective: r.o, Group: edgekey.Group, Admission: tier.Threshold{Max: 2}})
			rows[i] = res
			progress("%s: hit ratio %.3f, byte hit ratio %.3f", res.Policy, res.HitRatio, res.ByteHitRatio)
			return err
		})
	}
	return rows, belady, des.RunJobs(jobs, 2)
}

// simPeersLibCacheSim exports the trace and runs the libCacheSim script
// on it; nil figures when no python imports libcachesim.
func simPeersLibCacheSim(out, python string, sc policysim.Scale, t *policysim.Trace, progress func(string, ...any)) (*policysim.Yardstick, error) {
	manifest, err := policysim.ExportTraces(out, sc, 0, []*policysim.Trace{t})
	if err != nil {
		return nil, err
	}
	progress("trace exported: %s", manifest)
	py := policysim.FindPython(python)
	if py == "" {
		progress("no python with libcachesim: libCacheSim's figures left out")
		return nil, nil
	}
	js := filepath.Join(out, "libcachesim.json")
	progress("running %s with %s", policysim.Script, py)
	cmd := exec.Command(py, policysim.Script, manifest, "--json", js, "--policies", simPeersPolicies)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("sim peers: %s: %v\n%s", policysim.Script, err, b)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		return nil, err
	}
	var y struct {
		Workloads map[string]*policysim.Yardstick `json:"workloads"`
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return nil, err
	}
	return y.Workloads[t.Workload], nil
}

// simPeersReport is the Markdown report: every policy's hit and byte hit
// ratios, and the max rate they would allow against the best peer's where
// the origin link is the limit: the rate is link / (bytes per request x
// byte miss ratio), so the ratio is (1 - peer's) / (1 - its).
func simPeersReport(command string, phases []peers.Phase, tr *peers.Trace, sc policysim.Scale, rows []policysim.Result,
	belady float64, lcs *policysim.Yardstick, oracle []peers.OracleResult, run simPeersRun) string {
	peerBHR := run.peerBHR
	var b strings.Builder
	fmt.Fprintf(&b, "# The peers workload offline (strata sim peers)\n\nCommand: `%s`\n\n", command)
	var ph []string
	for _, p := range phases {
		ph = append(ph, fmt.Sprintf("%s %g req/s x %v seed %d", p.Name, p.Rate, p.Duration, p.Seed))
	}
	fmt.Fprintf(&b, "Trace: %d requests over %d objects (%s); the last phase's %d are counted. "+
		"Cache: RAM %d MiB + flash %d MiB (%d blocks of %d MiB), %.2f GiB in all.\n\n",
		len(tr.Reqs), len(tr.Keys), strings.Join(ph, ", "), len(tr.Reqs)-tr.Counted,
		sc.RAM>>20, sc.SSD>>20, sc.SSD/sc.Block, sc.Block>>20, float64(sc.Capacity())/(1<<30))
	fmt.Fprintf(&b, "Max rate vs peer: (1 - %.3f) / (1 - byte hit ratio), the best peer's byte hit ratio in the live run (%s, %s); "+
		"where the origin link is the limit, the max rate is link / (bytes per request x byte miss ratio).\n\n", peerBHR, run.peer, run.dir)
	b.WriteString("| policy | hit ratio | byte hit ratio | max rate vs peer | flash GB/h |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| core %s | %.3f | %.3f | %.2fx | %.1f |\n", r.Policy, r.HitRatio, r.ByteHitRatio, (1-peerBHR)/(1-r.ByteHitRatio), r.FlashGBPerHour)
	}
	fmt.Fprintf(&b, "| our Belady (offline) | %.3f | - | - | - |\n", belady)
	for _, o := range oracle {
		fmt.Fprintf(&b, "| static oracle, law known, worth per %s | %.3f | %.3f | %.2fx | - |\n",
			map[string]string{"requests": "request per byte", "bytes": "byte"}[o.Objective], o.HitRatio, o.ByteHitRatio, (1-peerBHR)/(1-o.ByteHitRatio))
	}
	if lcs != nil {
		names := make([]string, 0, len(lcs.Policies))
		for n := range lcs.Policies {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			p := lcs.Policies[n]
			fmt.Fprintf(&b, "| libCacheSim %s | %.3f | %.3f | %.2fx | - |\n", n, p.HitRatio, p.ByteHitRatio, (1-peerBHR)/(1-p.ByteHitRatio))
		}
	}
	return b.String()
}
