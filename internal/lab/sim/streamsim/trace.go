package streamsim

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/storage/model"
	"github.com/strata-media/strata/internal/wtrace"
)

// errEmptyTrace reports a trace with no writes.
var errEmptyTrace = errors.New("streamsim: trace has no writes")

// A trace is a write trace laid out on a drive: every device (file) of
// the trace gets its own region, in order of first appearance, aligned to
// the drive's write unit as a cache device or a preallocated file would be.
// A trace too small to fill the smallest drive is replayed as Copies
// independent instances side by side, each starting at a different point
// of the trace (several servers' worth of the same traffic).
type trace struct {
	Name    string
	Records []traceRecord
	Devices []traceDevice
	// Bytes is the volume of the writes; Footprint the space all copies'
	// regions take; Stride one copy's.
	Bytes, Footprint, Stride int64
	Copies                   int
	// Classes are the trace's classes, indexed by TraceRecord.Class.
	Classes []Class
}

// traceRecord is one write of a Trace: its place in its device, the
// device, class (index into Trace.Classes) and recorded stream.
type traceRecord struct {
	Off, Len   int64
	Dev, Class uint16
	Stream     uint8
}

// traceDevice is one device of a trace and where it lies.
type traceDevice struct {
	Name       string `json:"name"`
	Base, Size int64
	Bytes      int64 `json:"bytes"` // written
}

// maxTraceSpan is the largest device offset a trace may write: the
// paper's 256 GB drive.
const maxTraceSpan = 256e9

// readTrace reads a trace in the wtrace format from r.
func readTrace(name string, r io.Reader) (*trace, error) {
	t := &trace{Name: name}
	devs := map[string]int{}
	classes := map[[2]string]uint16{}
	err := wtrace.Read(r, func(rec wtrace.Record) error {
		if rec.Offset+rec.Length > maxTraceSpan {
			return fmt.Errorf("a write at %d+%d lies beyond %s, more than the model drive holds", rec.Offset, rec.Length, bytesize.Format(maxTraceSpan))
		}
		d, ok := devs[rec.Device]
		if !ok {
			d = len(t.Devices)
			devs[rec.Device] = d
			t.Devices = append(t.Devices, traceDevice{Name: rec.Device})
		}
		key := [2]string{rec.Device, rec.Class}
		c, ok := classes[key]
		if !ok {
			c = uint16(len(t.Classes))
			classes[key] = c
			t.Classes = append(t.Classes, ClassOf(rec.Device, rec.Class))
		}
		dev := &t.Devices[d]
		dev.Size = max(dev.Size, rec.Offset+rec.Length)
		dev.Bytes += rec.Length
		t.Bytes += rec.Length
		t.Records = append(t.Records, traceRecord{Off: rec.Offset, Len: rec.Length, Dev: uint16(d), Class: c, Stream: uint8(min(rec.Stream, 255))})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("streamsim: trace %s: %w", name, err)
	}
	if len(t.Records) == 0 {
		return nil, fmt.Errorf("%w: %s", errEmptyTrace, name)
	}
	if len(t.Devices) > 1<<16 || len(t.Classes) > 1<<16 {
		return nil, fmt.Errorf("streamsim: trace %s: too many devices or classes", name)
	}
	return t, nil
}

// openTrace reads the trace file at path.
func openTrace(path string) (*trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("streamsim: %w", err)
	}
	defer f.Close()
	return readTrace(filepath.Base(path), f)
}

// layout places the devices in unit-aligned regions, copy after copy.
func (t *trace) layout(unit int64) {
	base := int64(0)
	for i := range t.Devices {
		d := &t.Devices[i]
		d.Base = base
		base += roundUp(d.Size, unit)
	}
	t.Stride = base
	t.Footprint = base * int64(max(t.Copies, 1))
}

// sizeDrive lays t out on the smallest drive of the paper's geometry
// whose capacity it fills to at most fill, in as many copies as it takes
// to fill the smallest drive that much.
func (t *trace) sizeDrive(fill float64) (model.SSDParams, error) {
	t.Copies = 1
	t.layout(1 << 20)
	smallest, err := driveFor(0)
	if err != nil {
		return smallest, err
	}
	if need := fill * float64(smallest.Capacity); float64(t.Footprint) < need {
		t.Copies = int(need / float64(t.Footprint))
		t.layout(1 << 20)
	}
	var p model.SSDParams
	for range 4 {
		var err error
		if p, err = driveFor(int64(float64(t.Footprint) / fill)); err != nil {
			return p, err
		}
		t.layout(p.UnitSize())
		if float64(t.Footprint) <= fill*float64(p.Capacity) {
			return p, nil
		}
	}
	want := float64(t.Footprint) / fill
	if want > maxTraceSpan {
		return p, fmt.Errorf("streamsim: trace %s: %s at %.0f%% fill needs a drive over %s", t.Name,
			bytesize.Format(t.Footprint), 100*fill, bytesize.Format(maxTraceSpan))
	}
	return p.WithCapacity(roundUp(int64(want), p.PageSize)), nil
}

// traceReplayer issues a trace's writes in order, from the start again
// when it reaches the end (the run's volume decides when to stop); with
// several copies it takes one write of each in turn, copy c starting c/n
// of the way into the trace.
type traceReplayer struct {
	t    *trace
	next []int // per copy, the next record
	turn int
	Laps int // times copy 0 went through the trace
}

func newTraceReplayer(t *trace) *traceReplayer {
	r := &traceReplayer{t: t, next: make([]int, max(t.Copies, 1))}
	for c := range r.next {
		r.next[c] = c * len(t.Records) / len(r.next)
	}
	return r
}

// Next implements Thread.
func (r *traceReplayer) Next(time.Duration) (Op, status, time.Duration) {
	c := r.turn % len(r.next)
	r.turn++
	if r.next[c] == len(r.t.Records) {
		r.next[c] = 0
		if c == 0 {
			r.Laps++
		}
	}
	rec := r.t.Records[r.next[c]]
	r.next[c]++
	off := int64(c)*r.t.Stride + r.t.Devices[rec.Dev].Base + rec.Off
	return ready(Op{Kind: opWrite, Off: off, Len: rec.Len, Class: r.t.Classes[rec.Class], Stream: int(rec.Stream), Work: rec.Len})
}

// traceScenario replays t on a drive of the paper's geometry sized so
// that the trace's devices fill fill of it (the smallest drive is a
// quarter of a die's slice, 2 GB: a smaller trace runs in copies; the
// rest of the drive holds data never rewritten). Timestamps are ignored:
// the writes go in trace order, four at a time, as fast as the drive
// takes them.
func traceScenario(sc Scale, t *trace, fill float64) (*Scenario, error) {
	p, err := t.sizeDrive(fill)
	if err != nil {
		return nil, err
	}
	return &Scenario{
		Name: "trace:" + t.Name, Drive: p, Volume: sc.TraceVolume, AgedAt: 0.5,
		Window: volumeWindow(p, sc.TraceVolume), WorkUnit: "MB/s", WorkScale: 1e6,
		Build: func(ssd *model.SSD, trim bool) (*instance, error) {
			r := newTraceReplayer(t)
			return &instance{Run: []threadSpec{{r, 4}}, Err: noErr, Notes: func() map[string]float64 {
				return map[string]float64{"laps": float64(r.Laps), "trace_mb": float64(t.Bytes) / 1e6,
					"footprint_mb": float64(t.Footprint) / 1e6, "records": float64(len(t.Records)), "copies": float64(t.Copies)}
			}}, nil
		},
	}, nil
}

// DeviceNames lists the trace's devices, sorted.
func (t *trace) DeviceNames() []string {
	var out []string
	for _, d := range t.Devices {
		out = append(out, d.Name)
	}
	slices.Sort(out)
	return out
}
