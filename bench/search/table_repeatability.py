#!/usr/bin/env python3
"""How far two measured tables differ on configs whose code they share.

bench/search/README.md "Re-tunes with a prior": the version 2 gemm changes only what STAGES 3
and 4 do, so its STAGES = 2 configs run the same code as version 1's, and the two tables'
medians of those configs differ only by the measurement (another day, another clock state).
Prints, over the configs that match --where (PARAM=VALUE, repeatable) and are measured in both
tables: the common shift (the median of log(b / a)), and how far each config's log ratio lies
from it (median and 90th percentile), in percent; then the table B's best configs of that
selection with their ratio after the shift.

Usage: table_repeatability.py A B --where STAGES=2 [--top 10]
"""
import argparse
import gzip
import json
import math
import statistics


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    medians = {}
    with opener(path, "rt") as f:
        for i, line in enumerate(f):
            if i == 0 or not line.strip():
                continue
            t = json.loads(line)
            if t.get("state") != "measured":
                continue
            best = medians.get(t["config_id"])
            if best is None or t["median_ms"] < best[0]:
                medians[t["config_id"]] = (t["median_ms"], t["params"])
    return medians


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--where", action="append", default=[],
                    help="PARAM=VALUE: only configs with that value (repeatable)")
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    where = []
    for w in args.where:
        if "=" not in w:
            ap.error(f"--where {w}: expected PARAM=VALUE")
        name, value = w.split("=", 1)
        where.append((name, value))
    a, b = read(args.a), read(args.b)

    def selected(params):
        return all(str(params.get(n)) == v for n, v in where)

    shared = [k for k in a if k in b and selected(b[k][1])]
    if not shared:
        raise SystemExit("table_repeatability.py: no config measured in both tables matches")
    logs = {k: math.log(b[k][0] / a[k][0]) for k in shared}
    shift = statistics.median(logs.values())
    dev = sorted(abs(v - shift) for v in logs.values())
    p90 = dev[min(len(dev) - 1, int(0.9 * len(dev)))]
    print(f"{len(shared)} configs in both tables: common shift {100 * (math.exp(shift) - 1):+.2f}%,"
          f" each config off it by {100 * statistics.median(dev):.2f}% (median),"
          f" {100 * p90:.2f}% (90th percentile)")
    top = sorted(shared, key=lambda k: b[k][0])[: args.top]
    print(f"B's best {len(top)} of them, ratio B / A after the shift:")
    for k in top:
        print(f"  {k}  {b[k][0]:.6f} ms  {math.exp(logs[k] - shift):.4f}")


if __name__ == "__main__":
    main()
