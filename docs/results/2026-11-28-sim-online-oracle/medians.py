#!/usr/bin/env python3
"""Reinsert against the online oracle and libCacheSim's BeladySize, per seed and
median, from strata-lab sim policies --json results. Usage: medians.py
seed1/results.json seed2/results.json ..."""
import json
import statistics
import sys

reps = [json.load(open(p)) for p in sys.argv[1:]]
print("| workload | reinsert | online oracle | static oracle | BeladySize | reinsert / online oracle "
      "| online oracle / BeladySize | reinsert / BeladySize | per seed: reinsert / online, online / BeladySize |")
print("|---|---|---|---|---|---|---|---|---|")
for name in [w["name"] for w in reps[0]["workloads"]]:
    rows = []
    for r in reps:
        w = next(x for x in r["workloads"] if x["name"] == name)
        res = {x["policy"]: x for x in w["results"]}
        y = (w.get("yardstick") or {}).get("policies", {})
        rows.append(dict(seed=r["seed"], reinsert=res["reinsert"]["hit_ratio"],
                         online=w.get("online_oracle", 0), static=w.get("static_oracle", 0),
                         bsize=y.get("BeladySize", {}).get("hit_ratio", float("nan"))))
    med = lambda f: statistics.median(f(x) for x in rows)
    if not rows[0]["online"]:
        print("| %s | %.3f | - | - | %.3f | - | - | %.0f%% | law not fixed |" % (
            name, med(lambda x: x["reinsert"]), med(lambda x: x["bsize"]), 100 * med(lambda x: x["reinsert"] / x["bsize"])))
        continue
    per = "; ".join("s%d %.0f%%, %.0f%%" % (x["seed"], 100 * x["reinsert"] / x["online"], 100 * x["online"] / x["bsize"])
                    for x in rows)
    print("| %s | %.3f | %.3f | %.3f | %.3f | **%.0f%%** | **%.0f%%** | %.0f%% | %s |" % (
        name, med(lambda x: x["reinsert"]), med(lambda x: x["online"]), med(lambda x: x["static"]),
        med(lambda x: x["bsize"]), 100 * med(lambda x: x["reinsert"] / x["online"]),
        100 * med(lambda x: x["online"] / x["bsize"]), 100 * med(lambda x: x["reinsert"] / x["bsize"]), per))
