#!/usr/bin/env python3
"""A synthetic prior for `bench_search --prior` (bench/search/README.md "Re-tunes with a prior").

Reads a complete table (a trial log, .jsonl or .jsonl.gz) and writes a plain trial log of the
same configs as an earlier version of the kernel might have measured them: each measured median
times a factor per param value (log-normal, --sigma) and a factor per config (log-normal,
--noise), drawn from --seed; invalid trials stay invalid. The header is the table's, with its
source_hash replaced by "synthetic-prior". This is not a measurement: it stands in for a table of
version 1 until tables of two versions of a kernel are measured on a GPU.

Usage: perturb_table.py TABLE OUT [--sigma 0.1] [--noise 0.03] [--seed 1]
"""
import argparse
import gzip
import json
import math
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table")
    ap.add_argument("out")
    ap.add_argument("--sigma", type=float, default=0.1,
                    help="log-normal spread of the factor per param value")
    ap.add_argument("--noise", type=float, default=0.03,
                    help="log-normal spread of the factor per config")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    opener = gzip.open if a.table.endswith(".gz") else open
    with opener(a.table, "rt") as f:
        lines = [json.loads(l) for l in f if l.strip()]
    if not lines or "log_schema" not in lines[0]:
        sys.exit(f"perturb_table.py: error: {a.table}:1: not a trial log (no header)")
    rng = random.Random(a.seed)
    factors = {}
    header = dict(lines[0], source_hash="synthetic-prior")
    out = [json.dumps(header, sort_keys=True)]
    for t in lines[1:]:
        if t.get("state") == "measured":
            f = math.exp(rng.gauss(0, a.noise))
            for name, value in sorted(t["params"].items()):
                key = (name, json.dumps(value))
                if key not in factors:
                    factors[key] = math.exp(rng.gauss(0, a.sigma))
                f *= factors[key]
            t = dict(t, median_ms=t["median_ms"] * f, min_ms=t["min_ms"] * f)
        out.append(json.dumps(t, sort_keys=True))
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
