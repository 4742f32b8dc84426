package peers

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/edgekey"
	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/lab/sim/flashstream"
	"github.com/strata-media/strata/internal/lab/sim/policysim"
	"github.com/strata-media/strata/internal/progress"
)

// The side-by-side benchmark offline (strata-lab sim peers): the request
// trace of one server's turn in scripts/peers/run.sh (same library, same
// strata bench seeds and rates), replayed through the tier core under
// each objective and, when python imports libcachesim, through
// libCacheSim's online policies and its offline Belady bounds, at the
// same RAM + flash budget.

// libCacheSimPolicies are libCacheSim's policies run on the trace: its
// offline bounds and its best online ones.
const libCacheSimPolicies = "LRU,ARC,S3FIFO,Sieve,WTinyLFU,LHD,Belady,BeladySize"

// OfflineOptions are an offline replay's settings.
type OfflineOptions struct {
	Run liveRun
	// Steady, if not 0, replays Steady requests at the run's 80% rate
	// from one seed after a warm-up of Steady/2, instead of the run's
	// phases.
	Steady     int
	RAM, Flash int64 // the cache's budgets, bytes
	// EdgeKeys replays the edge's tier keys (edgekey.Whole, grouped by
	// edgekey.Group, as strata serve does) instead of the paths.
	EdgeKeys bool
	Out      string // directory of the exported trace, libCacheSim's figures, report.md
	Python   string // python with libcachesim ("": look for one)
	Command  string // the command line, for the report
	Progress progress.Func
}

// Offline builds the trace, replays it and writes the Markdown report
// into o.Out, which it returns.
func Offline(o OfflineOptions) (string, error) {
	phases := o.Run.phases(o.Steady)
	tr, err := buildTrace(defaultLibrary(), phases)
	if err != nil {
		return "", err
	}
	o.Progress("trace: %d requests (%d counted), %d objects", len(tr.Reqs), len(tr.Reqs)-tr.Counted, len(tr.Keys))
	keys := tr.Keys
	if o.EdgeKeys { // the keys the edge's engine gives the tier for these paths
		keys = make([]string, len(tr.Keys))
		for i, k := range tr.Keys {
			keys[i] = edgekey.Whole("/edge/", "http://127.0.0.1/", strings.TrimPrefix(k, "/"))
		}
	}
	t := &policysim.Trace{Workload: "peers", Cat: &des.Catalog{Keys: keys, Sizes: tr.Sizes}, Reqs: tr.Reqs, Times: tr.Times}
	sc := policysim.Scale{Name: "peers", RAM: o.RAM, SSD: o.Flash, Block: tier.DefaultBlockSize, Rate: 20, WarmRequests: tr.Counted}
	rows, belady, err := replayCore(t, sc, o.Progress)
	if err != nil {
		return "", err
	}
	lcs, err := replayLibCacheSim(o.Out, o.Python, sc, t, o.Progress)
	if err != nil {
		return "", err
	}
	oracle, err := Oracle(defaultLibrary(), 0.8, sc.Capacity())
	if err != nil {
		return "", err
	}
	md := offlineReport(o.Command, phases, tr, sc, rows, belady, lcs, oracle, o.Run)
	return md, os.WriteFile(filepath.Join(o.Out, "report.md"), []byte(md), 0o644)
}

// A liveRun is what the offline replay takes from a run.sh result:
// Strata's find-max trials and 80% rate, and the best peer's byte hit
// ratio.
type liveRun struct {
	Dir     string
	Trials  []trialRun
	Rate80  float64
	Peer    string  // the best peer by byte hit ratio
	PeerBHR float64 // its byte hit ratio
}

// ErrIncomplete reports a run.sh result without what the replay needs.
var ErrIncomplete = errors.New("peers: incomplete run")

// ReadRun reads the run.sh result from (a directory, or its
// strata.json); peerBHR, if not 0, stands for the peers' results.
func ReadRun(from string, peerBHR float64) (liveRun, error) {
	dir := from
	if st, err := os.Stat(from); err == nil && !st.IsDir() {
		dir = filepath.Dir(from)
	}
	results, err := Load(dir)
	if err != nil {
		return liveRun{}, err
	}
	run := liveRun{Dir: dir, Peer: "given", PeerBHR: peerBHR}
	found := false
	for _, r := range results {
		if r.Server == "strata" {
			run.Trials, run.Rate80 = runTrials(r)
			found = true
		} else if m := Compute(r); peerBHR == 0 && m.ByteHitRatio > run.PeerBHR {
			run.Peer, run.PeerBHR = r.Server, m.ByteHitRatio
		}
	}
	switch {
	case !found:
		return run, fmt.Errorf("%w: %s: no strata.json", ErrIncomplete, from)
	case run.PeerBHR <= 0:
		return run, fmt.Errorf("%w: %s: no peer's result with a byte hit ratio", ErrIncomplete, from)
	}
	return run, nil
}

// phases are the phases of the trace: the run's, or a steady one of n
// requests at its 80% rate.
func (r liveRun) phases(steady int) []phase {
	if steady > 0 {
		d := time.Duration(float64(steady) / r.Rate80 * float64(time.Second))
		return []phase{{Name: "warm", Rate: r.Rate80, Duration: d / 2, Seed: 1},
			{Name: "steady", Rate: r.Rate80, Duration: d, Seed: 7}}
	}
	return runPhases(r.Trials, r.Rate80)
}

// replayCore replays t through the core: reinsert under each
// objective, tinylfu under requests and bytes, lru; and our Belady's hit
// ratio.
func replayCore(t *policysim.Trace, sc policysim.Scale, progress func(string, ...any)) ([]policysim.Result, float64, error) {
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
			// admit), as in strata-lab sim policies: the policies differ
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

// replayLibCacheSim exports the trace and runs the libCacheSim script
// on it; nil figures when no python imports libcachesim.
func replayLibCacheSim(out, python string, sc policysim.Scale, t *policysim.Trace, progress func(string, ...any)) (*policysim.Yardstick, error) {
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
	cmd := exec.Command(py, policysim.Script, manifest, "--json", js, "--policies", libCacheSimPolicies)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("peers: %s: %v\n%s", policysim.Script, err, b)
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

// offlineReport is the Markdown report: every policy's hit and byte hit
// ratios, and the max rate they would allow against the best peer's where
// the origin link is the limit: the rate is link / (bytes per request x
// byte miss ratio), so the ratio is (1 - peer's) / (1 - its).
func offlineReport(command string, phases []phase, tr *trace, sc policysim.Scale, rows []policysim.Result,
	belady float64, lcs *policysim.Yardstick, oracle []oracleResult, run liveRun) string {
	peerBHR := run.PeerBHR
	var b strings.Builder
	fmt.Fprintf(&b, "# The peers workload offline (strata-lab sim peers)\n\nCommand: `%s`\n\n", command)
	var ph []string
	for _, p := range phases {
		ph = append(ph, fmt.Sprintf("%s %g req/s x %v seed %d", p.Name, p.Rate, p.Duration, p.Seed))
	}
	fmt.Fprintf(&b, "Trace: %d requests over %d objects (%s); the last phase's %d are counted. "+
		"Cache: RAM %d MiB + flash %d MiB (%d blocks of %d MiB), %.2f GiB in all.\n\n",
		len(tr.Reqs), len(tr.Keys), strings.Join(ph, ", "), len(tr.Reqs)-tr.Counted,
		sc.RAM>>20, sc.SSD>>20, sc.SSD/sc.Block, sc.Block>>20, float64(sc.Capacity())/(1<<30))
	fmt.Fprintf(&b, "Max rate vs peer: (1 - %.3f) / (1 - byte hit ratio), the best peer's byte hit ratio in the live run (%s, %s); "+
		"where the origin link is the limit, the max rate is link / (bytes per request x byte miss ratio).\n\n", peerBHR, run.Peer, run.Dir)
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
