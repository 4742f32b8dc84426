package health

import (
	"fmt"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestDataDriven runs the scripts in testdata/ against one Monitor:
//
//	new [fail-after=<n>] [backoff=<dur>] [max-backoff=<dur>]
//	at <dur>                                   sets the time
//	admit <read|write>                         prints ok/refused and probe
//	ok <read|write> [probe]                    reports a success
//	fail <read|write> <io|nospace|timeout> [probe]
//	abort <read|write>
//	late <read|write> lag=<dur> deadline=<dur> [probe]
//	                                           a timeout, unless the process was starved
//	report                                     prints the health at the time
//
// Regenerate with go test -run TestDataDriven -rewrite.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var m *Monitor
		var now time.Duration
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			op := func(i int) Op {
				if d.CmdArgs[i].Key == "write" {
					return Write
				}
				return Read
			}
			probe := func(i int) bool { return len(d.CmdArgs) > i && d.CmdArgs[i].Key == "probe" }
			switch d.Cmd {
			case "new":
				var o Options
				for _, a := range d.CmdArgs {
					switch a.Key {
					case "fail-after":
						o.FailAfter, _ = strconv.Atoi(a.Vals[0])
					case "backoff":
						o.Backoff, _ = time.ParseDuration(a.Vals[0])
					case "max-backoff":
						o.MaxBackoff, _ = time.ParseDuration(a.Vals[0])
					}
				}
				m = New(o)
				return fmt.Sprintf("%+v\n", m.Options())
			case "at":
				now, _ = time.ParseDuration(d.CmdArgs[0].Key)
				return ""
			case "admit":
				ok, p := m.Admit(op(0), now)
				return fmt.Sprintf("ok=%v probe=%v\n", ok, p)
			case "ok":
				m.Succeeded(op(0), probe(1), now)
				return state(m, now)
			case "fail":
				k := map[string]Kind{"io": IOError, "nospace": NoSpace, "timeout": Timeout}[d.CmdArgs[1].Key]
				m.Failed(op(0), k, probe(2), now)
				return state(m, now)
			case "late":
				var lag, deadline time.Duration
				for _, a := range d.CmdArgs[1:] {
					switch a.Key {
					case "lag":
						lag, _ = time.ParseDuration(a.Vals[0])
					case "deadline":
						deadline, _ = time.ParseDuration(a.Vals[0])
					}
				}
				p := d.CmdArgs[len(d.CmdArgs)-1].Key == "probe"
				excused := m.Late(op(0), p, now, lag, deadline)
				return fmt.Sprintf("excused=%v\n", excused) + state(m, now)
			case "abort":
				m.Abort(op(0))
				return ""
			case "report":
				r := m.Report(now)
				return fmt.Sprintf("degraded=%v\nread %s\nwrite %s\n", r.Degraded, opLine(r.Read), opLine(r.Write))
			}
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		})
	})
}

func state(m *Monitor, now time.Duration) string {
	r := m.Report(now)
	return fmt.Sprintf("read %s\nwrite %s\n", opLine(r.Read), opLine(r.Write))
}

func opLine(r OpReport) string {
	s := fmt.Sprintf("degraded=%v fails=%d", r.Degraded, r.ConsecutiveFailures)
	if r.Degraded {
		s += fmt.Sprintf(" for=%v next-probe-in=%v", r.DegradedFor, r.NextProbeIn)
	}
	s += fmt.Sprintf(" ok=%d io=%d nospace=%d timeout=%d probes=%d recoveries=%d",
		r.Succeeded, r.Errors["io"], r.Errors["nospace"], r.Errors["timeout"], r.Probes, r.Recoveries)
	if r.Starved > 0 {
		s += fmt.Sprintf(" starved=%d", r.Starved)
	}
	return s
}

// The core imports nothing of this module and does no I/O.
func TestCoreImports(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	forbidden := map[string]bool{"os": true, "net": true, "syscall": true, "log": true, "log/slog": true, "sync": true}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/strata-media/strata/") || forbidden[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}
