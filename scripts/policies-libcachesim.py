#!/usr/bin/env python3
"""Replay strata-lab sim policies' exported traces through libCacheSim.

The independent yardstick of the flash policies: the same oracleGeneral traces that
`strata-lab sim policies --export DIR` writes (one per workload, with
manifest.json giving the total cache size and the warm-up) run through
libCacheSim's object-level policies at that cache size. Each policy
replays the warm-up uncounted and then the rest on the same cache, so
its ratios cover the requests strata counts.

Usage:
    policies-libcachesim.py MANIFEST [--json OUT] [--policies LRU,ARC,...]

Prints a table per workload; --json writes the figures in the form
`strata-lab sim policies --yardstick OUT` reads. Needs libcachesim (0.3.5:
pip install libcachesim==0.3.5).
"""
import argparse
import json
import os
import sys

POLICIES = ["LRU", "ARC", "S3FIFO", "Sieve", "WTinyLFU", "LHD", "BeladySize"]


def replay(lcs, path, policy, cache_size, warm):
    """Hit and byte hit ratios of policy over the requests after warm."""
    reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = getattr(lcs, policy)(cache_size=cache_size)
    if warm > 0:
        cache.process_trace(reader, 0, warm)
    miss, byte_miss = cache.process_trace(reader, warm, -1)
    return {"hit_ratio": 1 - miss, "byte_hit_ratio": 1 - byte_miss}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("manifest")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--policies", default=",".join(POLICIES))
    args = ap.parse_args(argv)
    import libcachesim as lcs

    with open(args.manifest) as f:
        manifest = json.load(f)
    base = os.path.dirname(os.path.abspath(args.manifest))
    policies = [p for p in args.policies.split(",") if p]
    missing = [p for p in policies if not hasattr(lcs, p)]
    if missing:
        print("libcachesim lacks %s; skipped" % ", ".join(missing), file=sys.stderr)
        policies = [p for p in policies if p not in missing]
    out = {
        "libcachesim": getattr(lcs, "__version__", "unknown"),
        "scale": manifest["scale"],
        "seed": manifest["seed"],
        "workloads": {},
    }
    for w in manifest["workloads"]:
        path = os.path.join(base, w["trace"])
        res = {p: replay(lcs, path, p, w["cache_size"], w["warm"]) for p in policies}
        out["workloads"][w["name"]] = {
            "cache_size": w["cache_size"],
            "requests": w["requests"] - w["warm"],
            "policies": res,
        }
        print("%s (cache %d bytes, %d requests counted)" % (w["name"], w["cache_size"], w["requests"] - w["warm"]))
        print("  %-12s %9s %14s" % ("policy", "hit ratio", "byte hit ratio"))
        for p in policies:
            print("  %-12s %9.3f %14.3f" % (p, res[p]["hit_ratio"], res[p]["byte_hit_ratio"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
