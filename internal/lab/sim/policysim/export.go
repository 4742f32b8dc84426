package policysim

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
)

// writeOracleGeneral writes t in libCacheSim's oracleGeneral binary format,
// one 24-byte little-endian record a request:
//
//	uint32 timestamp          seconds since the trace began
//	uint64 obj_id             segment index + 1
//	uint32 obj_size           segment bytes
//	int64  next_access_vtime  index of the next request of the object, -1 if none
//
// (libCacheSim's ORACLE_GENERAL_TRACE; the next-access field is what its
// Belady and BeladySize read.)
func writeOracleGeneral(w io.Writer, t *Trace, rate float64) error {
	next := nextAccess(t.Reqs)
	bw := bufio.NewWriterSize(w, 1<<20)
	var rec [24]byte
	for i, seg := range t.Reqs {
		binary.LittleEndian.PutUint32(rec[0:], uint32(t.at(i, rate).Seconds()))
		binary.LittleEndian.PutUint64(rec[4:], uint64(seg)+1)
		binary.LittleEndian.PutUint32(rec[12:], uint32(t.Cat.Sizes[seg]))
		binary.LittleEndian.PutUint64(rec[16:], uint64(next[i]))
		if _, err := bw.Write(rec[:]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// nextAccess gives, for each request, the index of the next request of the
// same segment, -1 if none.
func nextAccess(reqs []int32) []int64 {
	next := make([]int64, len(reqs))
	last := make(map[int32]int64)
	for i := len(reqs) - 1; i >= 0; i-- {
		if j, ok := last[reqs[i]]; ok {
			next[i] = j
		} else {
			next[i] = -1
		}
		last[reqs[i]] = int64(i)
	}
	return next
}

// Manifest describes exported traces for scripts/policies-libcachesim.py.
type Manifest struct {
	Scale     string          `json:"scale"`
	Seed      uint64          `json:"seed"`
	Workloads []manifestEntry `json:"workloads"`
}

// A manifestEntry is one exported trace.
type manifestEntry struct {
	Name      string `json:"name"`
	Trace     string `json:"trace"`      // file name, beside the manifest
	CacheSize int64  `json:"cache_size"` // bytes: RAM + flash data blocks
	Warm      int    `json:"warm"`       // requests not counted
	Requests  int    `json:"requests"`
}

// ExportTraces writes each trace as <workload>.oracleGeneral into dir with
// manifest.json, and returns the manifest's path.
func ExportTraces(dir string, sc Scale, seed uint64, traces []*Trace) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	m := Manifest{Scale: sc.Name, Seed: seed}
	for _, t := range traces {
		name := t.Workload + ".oracleGeneral"
		if err := writeFile(filepath.Join(dir, name), func(w io.Writer) error { return writeOracleGeneral(w, t, sc.Rate) }); err != nil {
			return "", err
		}
		m.Workloads = append(m.Workloads, manifestEntry{Name: t.Workload, Trace: name, CacheSize: sc.capacity(),
			Warm: sc.warm(len(t.Reqs)), Requests: len(t.Reqs)})
	}
	path := filepath.Join(dir, "manifest.json")
	return path, writeFile(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	})
}

func writeFile(path string, fill func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
