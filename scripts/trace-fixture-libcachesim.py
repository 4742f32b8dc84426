#!/usr/bin/env python3
"""Write a trace from libCacheSim's own synthetic generator, in oracleGeneral.

The fixture of `strata-lab sim policies --trace` that none of Strata's
tools made: libCacheSim's SyntheticReader draws the requests (Zipf over
num_objects objects of one size, clock times spread over time_span), and
this script writes them as libCacheSim's oracleGeneral records,
little-endian and packed:

    uint32 clock_time   seconds
    uint64 obj_id
    uint32 obj_size     bytes
    int64  next_access_vtime   index of the object's next request, -1 if none

The committed fixture was made with the defaults:

    .cache/lcs-venv/bin/python scripts/trace-fixture-libcachesim.py \\
        internal/lab/sim/policysim/testdata/traces/libcachesim-zipf.oracleGeneral

Needs libcachesim (0.3.5: pip install libcachesim==0.3.5).
"""
import argparse
import struct
import sys


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--objects", type=int, default=400)
    ap.add_argument("--alpha", type=float, default=0.9)
    ap.add_argument("--obj-size", type=int, default=65536)
    ap.add_argument("--time-span", type=int, default=3600, help="seconds the requests are spread over")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    import libcachesim as lcs

    reader = lcs.SyntheticReader(num_of_req=args.requests, obj_size=args.obj_size, time_span=args.time_span,
                                 seed=args.seed, alpha=args.alpha, dist="zipf", num_objects=args.objects)
    reqs = [(r.clock_time, r.obj_id, r.obj_size) for r in reader]
    nxt = [-1] * len(reqs)
    last = {}
    for i in range(len(reqs) - 1, -1, -1):
        nxt[i] = last.get(reqs[i][1], -1)
        last[reqs[i][1]] = i
    with open(args.out, "wb") as f:
        for (t, oid, size), n in zip(reqs, nxt):
            f.write(struct.pack("<IQIq", t, oid, size, n))
    print("%s: %d requests of %d objects (libcachesim %s SyntheticReader, zipf alpha %g, seed %d)"
          % (args.out, len(reqs), len(last), getattr(lcs, "__version__", "?"), args.alpha, args.seed))


if __name__ == "__main__":
    main(sys.argv[1:])
