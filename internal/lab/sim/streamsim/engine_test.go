package streamsim

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/storage/model"
)

// testScale is a 1-die drive and short runs, for tests.
var testScale = Scale{Name: "test", Dies: 1, LSMDuration: 4 * time.Minute, Window: 15 * time.Second,
	CacheVolume: 1.5, RandVolume: 0.5, TraceVolume: 1.5}

func TestReplayDeterministic(t *testing.T) {
	sc, err := cassandraScenario(testScale, cassandraOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := replay(sc, Auto, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := replay(sc, Auto, true, false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two replays differ:\n%+v\n%+v", a.Aged, b.Aged)
	}
	if a.Aged.HostPages == 0 || a.Notes["updates"] == 0 {
		t.Fatalf("nothing happened: %+v %v", a.Aged, a.Notes)
	}
}

type stuck struct{}

func (stuck) Next(time.Duration) (Op, status, time.Duration) { return blocked() }

func TestEngineDeadlock(t *testing.T) {
	p, _ := drive(1)
	ssd, err := model.NewSSD(p)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(ssd, newMapping(Normal), true)
	if err := e.Run([]threadSpec{{stuck{}, 1}}, time.Hour, nil); !errors.Is(err, errDeadlock) {
		t.Fatalf("got %v, want ErrDeadlock", err)
	}
}

// counter issues n page writes in a row, then finishes.
type counter struct{ n, i int64 }

func (c *counter) Next(time.Duration) (Op, status, time.Duration) {
	if c.i == c.n {
		return Op{}, Finished, 0
	}
	c.i++
	return ready(Op{Kind: opWrite, Off: c.i * 8192, Len: 8192, Work: 1})
}

// TestEngineTrimOff: with TRIM off, trims never reach the drive.
func TestEngineTrimOff(t *testing.T) {
	p, _ := drive(1)
	for _, trim := range []bool{false, true} {
		ssd, err := model.NewSSD(p)
		if err != nil {
			t.Fatal(err)
		}
		e := newEngine(ssd, newMapping(Normal), trim)
		var q opQueue
		q.push(Op{Kind: opWrite, Off: 0, Len: 1 << 20})
		q.trims([]extent{{0, 1 << 20}})
		th := &queued{q: q}
		if err := e.Run([]threadSpec{{th, 1}}, time.Hour, nil); err != nil {
			t.Fatal(err)
		}
		if got := ssd.Stats().TrimmedPages > 0; got != trim {
			t.Fatalf("trim=%v: trimmed pages %d", trim, ssd.Stats().TrimmedPages)
		}
	}
}

type queued struct{ q opQueue }

func (t *queued) Next(time.Duration) (Op, status, time.Duration) {
	if op, ok := t.q.pop(); ok {
		return ready(op)
	}
	return Op{}, Finished, 0
}

// TestMeterCountsWork: every completed op's work lands in a window.
func TestMeterCountsWork(t *testing.T) {
	p, _ := drive(1)
	ssd, err := model.NewSSD(p)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(ssd, newMapping(Normal), true)
	m := newMeter(0, time.Millisecond, ssd)
	m.StartAged(0, ssd)
	e.SetMeter(m)
	if err := e.Run([]threadSpec{{&counter{n: 500}, 4}}, time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	m.Finish(ssd)
	var work int64
	for _, w := range m.Windows {
		work += w.Work
	}
	if work != 500 || m.All.Count() != 500 {
		t.Fatalf("work %d, latencies %d, want 500", work, m.All.Count())
	}
}
