package streamsim

import "github.com/strata-media/strata/internal/storage/model"

// lsmDrive is an LSM scenario's drive at sc and the options of the file
// system on it, after defaults sets the workload's options for the scale.
func lsmDrive(sc Scale, defaults func(scale float64, page int64)) (model.SSDParams, fsOptions, error) {
	p, err := drive(sc.Dies)
	if err != nil {
		return p, fsOptions{}, err
	}
	defaults(sc.factor(), p.PageSize)
	var fso fsOptions
	fso.ensureDefaults(sc.factor(), p.PageSize)
	return p, fso, nil
}

// cassandraScenario is MS §4's experiment: YCSB updates into a
// Cassandra-like store on ext4 on the multi-streamed SSD, after loading a
// data set of o.Fill of the file system.
func cassandraScenario(sc Scale, o cassandraOptions) (*Scenario, error) {
	p, fso, err := lsmDrive(sc, o.ensureDefaults)
	if err != nil {
		return nil, err
	}
	probe, err := newFileSystem(p.Capacity, fso)
	if err != nil {
		return nil, err
	}
	keys := cassandraKeys(o, probe.DataBytes())
	d := newDistinct(keys, o.ZipfExponent, o.Fields)
	return &Scenario{
		Name: "cassandra", Drive: p, Duration: sc.LSMDuration, AgedAt: 0.5,
		Window: sc.Window, WorkUnit: "updates/s",
		Build: func(ssd *model.SSD, trim bool) (*instance, error) {
			fs, err := newFileSystem(ssd.Size(), fso)
			if err != nil {
				return nil, err
			}
			c := newCassandra(o, fs, d, float64(keys))
			return &instance{
				Load:  []threadSpec{{&loader{c: c, plan: c.loadPlan()}, 8}},
				Run:   c.Threads(),
				Err:   c.Err,
				Notes: c.notes,
			}, nil
		},
	}, nil
}

// notes are the workload's figures for the report.
func (c *cassandra) notes() map[string]float64 {
	s := c.Stats
	return map[string]float64{
		"updates": float64(s.Updates), "flushes": float64(s.Flushes), "compactions": float64(s.Compactions),
		"keys": c.keys, "max_sstables": float64(s.MaxTables), "sstables": float64(len(c.tables)),
		"fs_free_share": float64(c.fs.FreeBytes()) / float64(c.fs.DataBytes()),
	}
}

// imageStoreScenario is the image store's LSM traffic on flash: uploads
// into Badger's memtable and WAL, flushes to L0, leveled compaction, with
// the retention deleting the oldest image per new one.
func imageStoreScenario(sc Scale, o imageStoreOptions) (*Scenario, error) {
	p, fso, err := lsmDrive(sc, o.ensureDefaults)
	if err != nil {
		return nil, err
	}
	return &Scenario{
		Name: "imagestore", Drive: p, Duration: sc.LSMDuration, AgedAt: 0.5,
		Window: sc.Window, WorkUnit: "uploads/s",
		Build: func(ssd *model.SSD, trim bool) (*instance, error) {
			fs, err := newFileSystem(ssd.Size(), fso)
			if err != nil {
				return nil, err
			}
			s := newLeveled(o, fs)
			run := []threadSpec{{&lsmFlusher{s: s}, 4}, {&journal{fs: fs}, 1}}
			for range o.Uploaders {
				run = append(run, threadSpec{&uploader{s: s}, 1})
			}
			for range o.Compactors {
				run = append(run, threadSpec{&lsmCompactor{s: s}, 2})
			}
			return &instance{Load: []threadSpec{{&imgLoader{s: s, plan: s.loadPlan()}, 8}},
				Run: run, Err: s.Err, Notes: s.notes}, nil
		},
	}, nil
}
