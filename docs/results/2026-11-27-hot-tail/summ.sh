#!/bin/bash
# summ.sh DIR: one line per sample of DIR/samples/strata.jsonl, with deltas.
jq -r -s '
  . as $a | range(0; length) as $i | $a[$i] as $s | ($a[$i-1] // $s) as $p |
  [$s.clock, $s.phase,
   (if $s.stats.ssd.health.read.degraded then "DEGR" else "ok" end),
   "to=\($s.stats.ssd.health.read.errors.timeout)",
   "starv=\($s.stats.ssd.health.read.starved_timeouts // "-")",
   "skip+=\($s.stats.ssd.health.skipped_reads - $p.stats.ssd.health.skipped_reads)",
   "late=\($s.stats.ssd.health.late_reads)",
   "miss+=\($s.stats.edge.misses - $p.stats.edge.misses)",
   "hits+=\($s.stats.edge.hits - $p.stats.edge.hits)",
   "ssdhit+=\($s.stats.ssd.hits - $p.stats.ssd.hits)",
   "lw+=\($s.stats.origin.load_waits - $p.stats.origin.load_waits)",
   "oerr+=\($s.stats.origin.errors - $p.stats.origin.errors)",
   "hm=\(($s.stats.ssd.hit_memory.held_bytes/1048576)|floor)M",
   "busy+=\($s.stats.ssd.hit_memory.busy - $p.stats.ssd.hit_memory.busy)",
   "newbuf+=\($s.stats.ssd.hit_memory.new_buffers - $p.stats.ssd.hit_memory.new_buffers)",
   "gc+=\($s.go.NumGC - $p.go.NumGC)",
   "heap=\(($s.go.HeapAlloc/1048576)|floor)M",
   "gcfrac=\(($s.go.GCCPUFraction*1000|floor)/1000)",
   "gr=\($s.goroutines)",
   "lag=\($s.stats.ssd.sched_lag_ms // "-")", "busy=\(($s.stats.ssd.cpu_busy // 0)*100|floor)"] | join(" ")' "$1/samples/strata.jsonl"
