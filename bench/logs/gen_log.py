#!/usr/bin/env python3
"""Writes a synthetic trial log: a header and N trials over C configs of a 4-param space.

A long tune's log as `tuner show`, `report` and `export` meet it: required trials first, then
search trials that revisit configs (resumes, several buckets' worth of re-measurements), about
one in twenty invalid (three reasons), per-trial times and compile seconds, a few of the prior's
best, and a runoff of the two finalists at the end. Deterministic for a given --seed.

    gen_log.py --trials 500000 --configs 4000 --out big.trials.jsonl
"""
import argparse
import hashlib
import json
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=500000)
    ap.add_argument("--configs", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    values = {"BM": [16, 32, 64, 128, 256], "BN": [16, 32, 64, 128, 256],
              "BK": [8, 16, 32, 64], "WARPS": [1, 2, 4, 8, 16]}
    configs = []
    for i in range(a.configs):
        p = {k: v[(i // m) % len(v)] for k, v, m in
             (("BM", values["BM"], 1), ("BN", values["BN"], 5), ("BK", values["BK"], 25),
              ("WARPS", values["WARPS"], 100))}
        p["TAG"] = i // 500  # more configs than the product: a fifth param keeps ids apart
        cid = ",".join(f"{k}={p[k]}" for k in sorted(p))
        base = 0.05 + 2.0 * rng.random() ** 2
        configs.append((cid, p, base))
    reasons = ["the compiler failed: ptxas error: too many resources",
               "function 'gemm' uses 300 registers, over the limit of 255",
               "timed out after 10 s"]
    header = {"log_schema": 1, "tuner": "gemm/large", "space_hash": "ab" * 32, "arch": "sm_90",
              "source_hash": "cd" * 32, "toolchain": "nvcc 13.0.88, ptxas 13.0.88",
              "objective": "minimize", "search": {"strategy": "random", "seed": 7}}
    with open(a.out, "w") as out:
        out.write(json.dumps(header, separators=(",", ":")) + "\n")
        for n in range(a.trials):
            cid, p, base = configs[n % len(configs)] if n < len(configs) else rng.choice(configs)
            phase = "required" if n < 8 else ("runoff" if n >= a.trials - 20 else "search")
            t = {"config_id": cid, "params": p, "cache_key": hashlib.sha256(cid.encode()).hexdigest(),
                 "phase": phase, "device": "NVIDIA H200",
                 "time": f"2026-12-01T{(n // 3600) % 24:02d}:{(n // 60) % 60:02d}:{n % 60:02d}Z",
                 "warnings": [], "batched": n % 3 == 0}
            if phase != "runoff" and rng.random() < 0.05:
                t.update(state="invalid", reason=rng.choice(reasons))
            else:
                med = round(base * (1 + 0.02 * rng.random()), 6)
                t.update(state="measured", median_ms=med, min_ms=round(med * 0.98, 6),
                         reps=rng.randint(20, 400))
                t["times"] = {"fixture_ms": 0.5, "load_ms": 2.0, "setup_ms": 3.1,
                              "warmup_ms": round(10 * med, 3), "timed_ms": round(t["reps"] * med, 3),
                              "wall_ms": round(t["reps"] * med + 40, 3), "compile_wait_ms": 0.0,
                              "strategy_ms": 0.2}
                t["compile_s"] = round(1 + 5 * rng.random(), 2)
                if phase == "runoff":
                    t["runoff"] = {"pairs": 10, "outcome": "challenger_wins",
                                   "winner": configs[0][0]}
            if 8 <= n < 12:
                t["prior_rank"] = n - 7
            out.write(json.dumps(t, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
