package streamsim

import (
	"strings"
	"testing"
)

// cassandraExp is a Cassandra experiment with Normal and Multi-Data runs
// (with TRIM) of the given aged throughput, erase WAF and commit-log tail.
func cassandraExp(name string, normal, multi summary) *experiment {
	return &experiment{Name: name, Runs: []*RunResult{
		{Mapping: Normal, Trim: true, Aged: normal},
		{Mapping: MultiData, Trim: true, Aged: multi},
	}}
}

// The unpaced-drive and data-set-size notes state what the numbers say,
// both ways.
func TestNotesFollowNumbers(t *testing.T) {
	paced := cassandraExp("cassandra",
		summary{Throughput: 70, Norm: 0.7, EraseWAF: 1.3, LogP999ms: 30, LogP9999ms: 40},
		summary{Throughput: 100, Norm: 1, EraseWAF: 1.0, LogP999ms: 20, LogP9999ms: 25})
	for _, c := range []struct {
		name    string
		unpaced *experiment
		fill20  summary
		want    []string
	}{
		{"tails cut, gains alike, size matters",
			cassandraExp("cassandra-unpaced",
				summary{Throughput: 70, Norm: 0.7, EraseWAF: 1.3, LogP999ms: 300, LogP9999ms: 400},
				summary{Throughput: 100, Norm: 1, EraseWAF: 1.0, LogP999ms: 30, LogP9999ms: 40}),
			summary{Norm: 0.9, EraseWAF: 1.1},
			[]string{"Multi-Data cuts the commit log's p99.9 by 90%", "cuts its p99.99 by 90%", "gains do not depend on it",
				"decides how much Normal loses (its share of fresh spans 70% to 90%)"}},
		{"tails raised, gains differ, size does not matter",
			cassandraExp("cassandra-unpaced",
				summary{Throughput: 70, Norm: 0.7, EraseWAF: 1.3, LogP999ms: 30, LogP9999ms: 40},
				summary{Throughput: 77, Norm: 0.77, EraseWAF: 1.3, LogP999ms: 60, LogP9999ms: 40}),
			summary{Norm: 0.72, EraseWAF: 1.3},
			[]string{"Multi-Data raises the commit log's p99.9 by 100%", "gains depend on it", "by at most 5 points"}},
	} {
		r := &Report{Experiments: []*experiment{paced, c.unpaced,
			cassandraExp("cassandra-fill20", c.fill20, summary{Norm: 1, EraseWAF: 1})}}
		v, ok := reportVerdict(r)
		if !ok {
			t.Fatal("no verdict")
		}
		got := unpacedNote(r, v) + "\n" + sensitivityNote(r)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: notes lack %q:\n%s", c.name, w, got)
			}
		}
	}
}
