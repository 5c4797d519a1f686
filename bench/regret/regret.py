#!/usr/bin/env python3
"""How good are the tuner's choices? For each kernel and bucket of a build tree that was just
tuned, on the GPU that tuned it:

- winner vs incumbent: the record's winner against the space's first declared incumbent, in one
  interleaved paired session (the runner's own runoff: L2 flushed before each arm);
- regret: the winner against each other config of the bucket's sequential top five, each pair in
  an interleaved paired session (not best-of-N sequential medians, which flatter the winner);
  the regret is how much faster than the winner the best of them is (0 when none is);
- achieved bandwidth or FLOP rate of the winner against the H200's ceilings measured in the same
  call (a device-to-device copy counting bytes read plus written; a bf16 8192^3 matrix product).

It speaks the worker protocol (tuner/core/search/worker_protocol.hpp) to the runner directly: one worker
per bucket.

Usage: regret.py --build build-gpu [--device 0] [--json out.json]
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import urllib.parse


def ceilings(device):
    """Copy bandwidth (bytes read + written per second) and bf16 matmul FLOP/s, measured now."""
    try:
        import torch
    except ImportError:
        return None, None
    torch.cuda.set_device(device)
    n = 1 << 30  # 1 GiB of bytes each way
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    a.random_(0, 255)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(12):
        start.record()
        b.copy_(a)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    bw = 2 * n / statistics.median(times[2:])
    del a, b
    m = 8192
    x = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    times = []
    for _ in range(8):
        start.record()
        torch.matmul(x, y)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    flops = 2 * m ** 3 / statistics.median(times[2:])
    return bw, flops


def work(kernel, shape):
    """(bytes moved at the least, flops) of one launch of the bucket's shape."""
    if kernel == "gemm":
        m, n, k = shape["M"], shape["N"], shape["K"]
        return 2 * (m * k + k * n) + 4 * m * n, 2 * m * n * k
    if kernel == "softmax":
        return 2 * 4 * shape["ROWS"] * shape["COLS"], 0
    if kernel == "reduce":
        return 4 * shape["N"], 0
    return 0, 0


class Worker:
    def __init__(self, runner, manifest, bucket, arch, device):
        self.p = subprocess.Popen(
            [runner, "--manifest", manifest, "--bucket", bucket, "--arch", arch,
             "--device", str(device)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = json.loads(self.p.stdout.readline())
        if not ready.get("ready"):
            raise RuntimeError(f"worker did not start: {ready}")

    def runoff(self, inc, ch):
        req = {"op": "runoff", "incumbent": inc, "challenger": ch}
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        answer = json.loads(self.p.stdout.readline())
        if "incumbent_ms" not in answer:
            raise RuntimeError(f"runoff failed: {answer}")
        return answer["incumbent_ms"], answer["challenger_ms"]

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def paired_diff_pct(a_ms, b_ms):
    """Median over pairs of (b - a) / a, in percent."""
    return statistics.median((b - a) / a * 100 for a, b in zip(a_ms, b_ms))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--json")
    args = ap.parse_args()

    bw, flops = ceilings(args.device)
    rows = []
    for manifest_path in sorted(glob.glob(os.path.join(args.build, "tune", "*", "manifest.json"))):
        manifest = json.load(open(manifest_path))
        if not manifest.get("runner"):
            continue
        kernel = manifest["kernel"]
        for arch in manifest["archs"]:
            record = json.load(open(manifest["records"][arch]))
            for entry in record["entries"]:
                bucket = entry["bucket"]
                log = os.path.join(manifest["log_dir"], arch,
                                   urllib.parse.quote(bucket, safe="") + ".trials.jsonl")
                lines = [json.loads(l) for l in open(log).read().splitlines()[1:] if l.strip()]
                measured = {}
                for t in lines:
                    if t.get("state") == "measured" and t.get("phase") != "runoff":
                        best = measured.get(t["config_id"])
                        if best is None or t["median_ms"] < best["median_ms"]:
                            measured[t["config_id"]] = t
                ranked = sorted(measured.values(), key=lambda t: t["median_ms"])
                winner_id = entry["config"]["id"]
                side = lambda t: {"config": t["params"], "key": t["cache_key"]}
                winner = measured[winner_id]
                incumbent_id = None
                w = Worker(manifest["runner"], manifest_path, bucket, arch, args.device)
                try:
                    # The incumbent: the first required config, found by its trial's phase.
                    required = [t for t in lines if t.get("phase") == "required"
                                and t.get("state") == "measured"]
                    vs_incumbent = None
                    if required:
                        inc = required[0]
                        incumbent_id = inc["config_id"]
                        if incumbent_id != winner_id:
                            a, b = w.runoff(side(inc), side(winner))
                            vs_incumbent = (statistics.median(a), statistics.median(b))
                        else:
                            vs_incumbent = (winner["median_ms"], winner["median_ms"])
                    regrets = []
                    for t in ranked[:5]:
                        if t["config_id"] == winner_id:
                            continue
                        a, b = w.runoff(side(winner), side(t))
                        regrets.append((t["config_id"], -paired_diff_pct(a, b), statistics.median(a)))
                finally:
                    w.close()
                regret = max([0.0] + [r for _, r, _ in regrets])
                win_ms = statistics.median([r[2] for r in regrets]) if regrets else winner["median_ms"]
                rows.append({
                    "kernel": kernel, "bucket": bucket, "winner": winner_id,
                    "incumbent": incumbent_id,
                    "incumbent_ms": vs_incumbent[0] if vs_incumbent else None,
                    "winner_ms": vs_incumbent[1] if vs_incumbent else winner["median_ms"],
                    "winner_ms_sessions": win_ms,
                    "regret_pct": regret, "top5": regrets,
                    "space_rank_of_winner": [t["config_id"] for t in ranked].index(winner_id) + 1,
                    "candidates": len(measured),
                })
    print(f"ceilings (measured now): copy {bw/1e12:.2f} TB/s, bf16 matmul {flops/1e12:.0f} TFLOP/s"
          if bw else "ceilings: torch not available")
    print(f"{'kernel':8} {'bucket':11} {'incumbent ms':>12} {'winner ms':>10} {'speedup':>8} "
          f"{'regret':>7} {'achieved':>22}")
    for r in rows:
        shape = shapes_of(r["kernel"], r["bucket"], args.build)
        nbytes, nflops = work(r["kernel"], shape)
        ms = r["winner_ms"]
        if nflops:
            ach = f"{nflops / (ms / 1e3) / 1e12:.0f} TFLOP/s" + (f" ({nflops/(ms/1e3)/flops*100:.0f}%)" if flops else "")
        else:
            ach = f"{nbytes / (ms / 1e3) / 1e12:.2f} TB/s" + (f" ({nbytes/(ms/1e3)/bw*100:.0f}%)" if bw else "")
        r["achieved"] = ach
        speed = (r["incumbent_ms"] / ms) if r["incumbent_ms"] else float("nan")
        print(f"{r['kernel']:8} {r['bucket']:11} {r['incumbent_ms'] or float('nan'):12.4f} "
              f"{ms:10.4f} {speed:7.2f}x {r['regret_pct']:6.2f}% {ach:>22}")
    if args.json:
        json.dump({"copy_bytes_per_s": bw, "bf16_flops": flops, "rows": rows}, open(args.json, "w"),
                  indent=1)


def shapes_of(kernel, bucket, build):
    """The bucket's shape, read from the space file (TOML) with Python's tomllib."""
    import tomllib
    manifest = json.load(open(os.path.join(build, "tune", kernel, "manifest.json")))
    space = tomllib.load(open(manifest["space"], "rb"))
    for b in space.get("buckets", []):
        if b["name"] == bucket:
            return b.get("shape", {})
    return {}


if __name__ == "__main__":
    main()
