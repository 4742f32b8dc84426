#!/usr/bin/env python3
"""Medians over the seeds of strata-lab sim policies --json results: the
BENCHMARKS.md table. Usage: medians.py seed1/results.json seed2/results.json ..."""
import json
import statistics
import sys

BELADY = {"Belady", "BeladySize"}
reps = [json.load(open(p)) for p in sys.argv[1:]]
names = [w["name"] for w in reps[0]["workloads"]]
print("| workload | LRU | tinylfu | reinsert (default) | libCacheSim best online | BeladySize "
      "| reinsert / BeladySize | flash GB/h LRU -> reinsert | per seed: reinsert / BeladySize, reinsert - best online |")
print("|---|---|---|---|---|---|---|---|---|")
for name in names:
    rows = []
    for r in reps:
        w = next(x for x in r["workloads"] if x["name"] == name)
        res = {x["policy"]: x for x in w["results"]}
        y = w.get("yardstick") or {"policies": {}}
        online = {k: v["hit_ratio"] for k, v in y["policies"].items() if k not in BELADY}
        best = max(online, key=online.get) if online else None
        rows.append(dict(
            seed=r["seed"], lru=res["lru"]["hit_ratio"], tinylfu=res["tinylfu"]["hit_ratio"],
            reinsert=res["reinsert"]["hit_ratio"], best=best, besthr=online.get(best, float("nan")),
            bsize=y["policies"].get("BeladySize", {}).get("hit_ratio", float("nan")),
            wl=res["lru"]["flash_gb_per_hour"], wr=res["reinsert"]["flash_gb_per_hour"]))
    med = lambda k: statistics.median(x[k] for x in rows)
    bests = sorted({x["best"] for x in rows if x["best"]})
    per = "; ".join("s%d %.0f%%, %+.3f" % (x["seed"], 100 * x["reinsert"] / x["bsize"], x["reinsert"] - x["besthr"])
                    for x in rows)
    print("| %s | %.3f | %.3f | **%.3f** | %.3f %s | %.3f | **%.0f%%** | %.1f -> %.1f | %s |" % (
        name, med("lru"), med("tinylfu"), med("reinsert"), med("besthr"), "/".join(bests), med("bsize"),
        100 * statistics.median(x["reinsert"] / x["bsize"] for x in rows), med("wl"), med("wr"), per))
