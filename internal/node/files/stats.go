package files

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/feed"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/storage/space"
)

// Stats describe the whole-file tier, as GET /stats shows it under "files".
type Stats struct {
	Admitted map[string]int64 `json:"admitted"` // streams by source: flash, disk
	Rejected int64            `json:"rejected"`
	// Reserved and Capacity are the bytes/s promised to streams on each
	// device, and the budgets.
	Reserved       map[string]int64 `json:"reserved_bps"`
	Capacity       map[string]int64 `json:"capacity_bps"`
	ResidentFiles  int              `json:"resident_files"`
	Copying        int              `json:"copying"`
	Installed      uint64           `json:"copies_installed"`
	Evicted        uint64           `json:"copies_evicted"`
	BlocksWritten  uint64           `json:"blocks_written"`
	FlashBytes     int64            `json:"flash_bytes"`
	FlashReads     uint64           `json:"flash_piece_reads"`
	FlashFallbacks uint64           `json:"flash_fallbacks"`
	Uploads        uint64           `json:"uploads"`
	// With the files in a bucket: the pieces read from RAM, and the
	// requests sent to the bucket (a cache in front of it spares them).
	RAMHits        uint64             `json:"ram_piece_hits,omitempty"`
	RAMBytes       int64              `json:"ram_bytes,omitempty"`
	BucketRequests *origin.S3Requests `json:"bucket_requests,omitempty"`
	// Mechanism is what serves streams besides the disk: lfu, interval
	// or both; Served the bytes of file bodies sent, by where they were
	// read (ram: interval buffers; disk: the capacity tier).
	Mechanism Mechanism         `json:"mechanism"`
	Served    map[string]uint64 `json:"served_bytes"`
	Intervals *IntervalStats    `json:"intervals,omitempty"`
}

// Health returns the health of the flash copies' device, and false
// without a flash tier.
func (t *Tier) Health() (feed.DeviceReport, bool) {
	if t.health == nil {
		return feed.DeviceReport{}, false
	}
	return t.health.Report(), true
}

// Stats returns a snapshot.
func (t *Tier) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := &t.mu.adm
	s := Stats{
		Admitted: map[string]int64{"flash": a.Admitted[1], "disk": a.Admitted[2]},
		Rejected: a.Refused,
		Reserved: map[string]int64{"flash": a.Flash.Reserved(), "disk": a.Disk.Reserved()},
		Capacity: map[string]int64{"flash": a.Flash.Capacity, "disk": a.Disk.Capacity},
		Copying:  len(t.mu.copying), Installed: t.stats.installed.Load(), Evicted: t.stats.evicted.Load(),
		BlocksWritten: t.stats.blocksWritten.Load(), FlashReads: t.stats.flashReads.Load(),
		FlashFallbacks: t.stats.flashFallbacks.Load(), Uploads: t.stats.uploads.Load(),
		Mechanism: t.opts.Mechanism, Intervals: t.intervalStatsLocked(),
		Served: map[string]uint64{"ram": t.stats.servedRAM.Load(), "flash": t.stats.servedFlash.Load(), "disk": t.stats.servedDisk.Load()},
	}
	if t.ram != nil {
		r := t.opts.Bucket.Requests()
		s.RAMHits, s.RAMBytes, s.BucketRequests = t.stats.ramHits.Load(), t.ram.used(), &r
	}
	if t.mu.lfu != nil {
		s.ResidentFiles = len(t.mu.lfu.Resident())
		s.FlashBytes = t.mu.core.Occupancy().SSDBytes
	}
	return s
}

// Mount registers GET/HEAD /files/{id}, PUT /files/{id} behind the admin
// token, the tier's "files" section of /stats and its metrics.
func (t *Tier) Mount(m *httpapi.Mounter) {
	m.Handle("GET /files/{id}", http.HandlerFunc(t.Serve))
	m.HandleAdmin("PUT /files/{id}", http.HandlerFunc(t.servePut))
	m.Stats("files", func() any { return t.Stats() })
	m.Metrics(t.Collector())
}

// checkSpace refuses an upload of a declared length above the directory's
// free space; a bucket has no such bound.
func (t *Tier) checkSpace(n int64) error {
	if t.cap.remote() {
		return nil
	}
	return space.Check(t.opts.FreeSpace, t.opts.Dir, n)
}

// MaxUpload bounds a PUT body.
const MaxUpload = 64 << 30

func (t *Tier) servePut(w http.ResponseWriter, r *http.Request) {
	if !httpapi.CheckLength(w, r, MaxUpload) {
		return
	}
	id := r.PathValue("id")
	if err := t.checkSpace(r.ContentLength); err != nil {
		httpapi.CloseAfter(w)
		httpapi.Error(w, http.StatusInsufficientStorage, fmt.Sprintf("no room for a file of %d bytes", r.ContentLength))
		return
	}
	m, err := t.PutTyped(id, r.Header.Get("Content-Type"), httpapi.Body(w, r, MaxUpload))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		httpapi.Error(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("file too large: more than %d bytes", tooBig.Limit))
		return
	case space.IsNoSpace(err):
		t.log.Error("files: upload failed", "id", httpapi.ClipID(id), "err", err)
		httpapi.Error(w, http.StatusInsufficientStorage, "the files directory is full; nothing was stored")
		return
	case errors.Is(err, ident.ErrInvalid):
		httpapi.Error(w, http.StatusBadRequest, err.Error())
		return
	case err != nil:
		// The error names paths under the files directory: logged only.
		t.log.Error("files: upload failed", "id", httpapi.ClipID(id), "err", err)
		httpapi.Error(w, http.StatusInternalServerError, "files: the upload could not be stored; see the server log")
		return
	}
	httpapi.Write(w, http.StatusCreated, "no-store", m) //nolint:errcheck // the status is sent
}
