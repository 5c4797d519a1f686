#!/usr/bin/env python3
"""Compare tune's bench with triton.testing.do_bench on the same cubin.

Runs bench_timing (our bench, 10 measurements per kernel, written as JSON), then times the same
kernels of the same cubin, launched through CuPy (cupy.RawModule(path=cubin)), with
triton.testing.do_bench(fn, return_mode="median"), 10 measurements each. Prints, per kernel and
mode, the median of each side's 10 medians, their ratio (ours / triton, target within 3%) and
the spread of each side's 10 measurements ((max - min) / median).

Our bench runs first, in its own process, before this script creates a CUDA context: a context
held here while it measures would count as another process on the GPU.

Usage: compare.py --bench <bench_timing> --cubin <timing_kernels.cubin> [--repeat 10]
                  [--json <summary.json>] [--device N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

TARGET = 0.03  # |ours / triton - 1| within 3%


def spread(values):
    return (max(values) - min(values)) / statistics.median(values)


def run_ours(args):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "ours.json")
        cmd = [args.bench, "--cubin", args.cubin, "--repeat", str(args.repeat),
               "--device", str(args.device), "--json", out]
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        with open(out) as f:
            return json.load(f)


def run_triton(args, ours):
    import cupy
    import numpy as np
    import torch
    import triton.testing

    torch.cuda.set_device(args.device)
    cupy.cuda.Device(args.device).use()
    module = cupy.RawModule(path=args.cubin)
    times = {}
    for k in ours["kernels"]:
        fn = module.get_function(k["function"])
        grid, block = (k["grid"],), (k["block"],)
        if k["function"] == "fma_loop":
            sink = cupy.empty(k["grid"] * k["block"], dtype=cupy.float32)
            params = (sink, np.int32(k["iters"]))
        else:
            n = k["n"]
            x = cupy.random.uniform(-1, 1, n, dtype=cupy.float32)
            y = cupy.empty(n, dtype=cupy.float32)
            params = (y, x, np.float32(2.0), np.int64(n))

        def launch(fn=fn, grid=grid, block=block, params=params):
            fn(grid, block, params)

        # CuPy and torch both launch on the legacy default stream here, so do_bench's events
        # (torch's) bracket CuPy's launches.
        times[k["name"]] = [
            triton.testing.do_bench(launch, warmup=25, rep=100, return_mode="median")
            for _ in range(args.repeat)
        ]
        del params
        cupy.get_default_memory_pool().free_all_blocks()
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", required=True)
    parser.add_argument("--cubin", required=True)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--json")
    args = parser.parse_args()

    ours = run_ours(args)
    triton_ms = run_triton(args, ours)

    rows = []
    for k in ours["kernels"]:
        t = triton_ms[k["name"]]
        for mode in ("ours_auto", "ours_single"):
            if mode not in k:
                continue
            m = k[mode]
            label = "single" if not m["batched"] else "graph%d" % m["batch_size"]
            ratio = statistics.median(m["median_ms"]) / statistics.median(t)
            rows.append({
                "kernel": k["name"], "mode": label,
                "ours_ms": statistics.median(m["median_ms"]),
                "triton_ms": statistics.median(t), "ratio": ratio,
                "ours_spread": spread(m["median_ms"]), "triton_spread": spread(t),
                "within_target": abs(ratio - 1) <= TARGET,
                "ours_medians_ms": m["median_ms"], "triton_medians_ms": t,
                "ours_reps": m["reps"], "warnings": sorted(set(m["warnings"])),
            })

    print()
    print("device: %s (%s), driver %d, %d measurements each"
          % (ours["device"], ours["arch"], ours["driver"], args.repeat))
    print("%-10s %-8s %10s %10s %7s %8s %8s  %s" % (
        "kernel", "ours", "ours_ms", "triton_ms", "ratio", "spread", "spread", "within 3%"))
    print("%-10s %-8s %10s %10s %7s %8s %8s" % ("", "mode", "", "", "", "ours", "triton"))
    for r in rows:
        print("%-10s %-8s %10.5f %10.5f %7.4f %7.2f%% %7.2f%%  %s" % (
            r["kernel"], r["mode"], r["ours_ms"], r["triton_ms"], r["ratio"],
            100 * r["ours_spread"], 100 * r["triton_spread"],
            "yes" if r["within_target"] else "NO"))
        for w in r["warnings"]:
            print("    warning: %s" % w)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": ours["device"], "arch": ours["arch"], "driver": ours["driver"],
                       "repeat": args.repeat, "rows": rows, "ours": ours}, f, indent=2)
            f.write("\n")
    # The comparison is a report, not a gate: exit 0 whenever both sides measured.
    return 0


if __name__ == "__main__":
    sys.exit(main())
