#!/usr/bin/env python3
"""How a tune scales over workers (docs/scaling.md "Measured scaling"), simulated on a CPU.

For each of the repository's kernels (spaces/*.toml) it builds a stand-in project whose buckets
have the same number of candidates after pruning, writes its kernel cache (so every candidate
reaches a worker), and tunes it the way `TUNE_DEVICES` does: W shards at once (`tuner run
--shard k/W`, each its own process, each with its own fake worker), then `tuner merge` with the
runoff. The fake worker (sim_worker.py) sleeps each candidate's wall time on the GPU, scaled down
by --scale, and reports a deterministic median. Each W runs twice, without sleeping (what the
processes, the logs and the merge cost on this CPU) and with; the difference, divided by
--scale, is the GPU time. It prints, for W = 1, 2, 4, 8 and 32, the wall time of the shards, of
the merge (measured without sleeping, plus its runoffs: two candidates' time per bucket), the
speedup over one worker and the ideal (every candidate's time divided by W).

The per-candidate wall time: with --logs, the gaps between consecutive trials of the trial logs
of a real tune (`<build>/tune/<kernel>/<arch>/*.trials.jsonl`); without, the mean of the
repository's H200 tune (docs/measurement.md "Measured on an H200": 360 s
for 666 trials; the repository keeps records, not per-trial logs).

Usage: scaling.py --tuner build/tuner/tuner [--scale 0.05] [--workers 1,2,4,8,32]
                  [--kernels gemm,reduce,softmax] [--logs DIR] [--work DIR] [--json out.json]
"""
import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
H200_SECONDS_PER_TRIAL = 360.0 / 666


def bucket_sizes(tuner, kernel):
    out = subprocess.run([tuner, "space", "--json", str(ROOT / "spaces" / f"{kernel}.toml")],
                         capture_output=True, text=True, check=True).stdout
    return [(b["name"], b["count"]) for b in json.loads(out)["buckets"]]


def per_trial_seconds(logs):
    """The median gap between consecutive trials of every log under `logs`, or the H200 mean."""
    if not logs:
        return H200_SECONDS_PER_TRIAL
    gaps = []
    for path in Path(logs).rglob("*.trials.jsonl"):
        times = []
        for line in path.read_text().splitlines()[1:]:
            try:
                t = json.loads(line)["time"]
                times.append(datetime.datetime.fromisoformat(t.replace("Z", "+00:00")))
            except (ValueError, KeyError):
                continue
        gaps += [(b - a).total_seconds() for a, b in zip(times, times[1:])]
    gaps = sorted(g for g in gaps if g >= 0)
    return gaps[len(gaps) // 2] if gaps else H200_SECONDS_PER_TRIAL


def project(tuner, work, kernel, buckets):
    """A stand-in project for `kernel`: one param C, bucket b keeps C < its size."""
    name = f"sim_{kernel}"
    root = work / name
    shutil.rmtree(root, ignore_errors=True)
    (root / "src").mkdir(parents=True)
    (root / "src" / f"{name}.cu").write_text(f"// stand-in source of {kernel}\n")
    largest = max(n for _, n in buckets)
    lines = ['schema = 1', f'kernel = "{name}"', 'prune = ["C < S"]', 'require = [{ C = 0 }]',
             '[params]', f'C = [{", ".join(str(i) for i in range(largest))}]']
    for i, (bucket, n) in enumerate(buckets):
        lines += ['[[buckets]]', f'name = "{bucket}"']
        if i + 1 < len(buckets):
            lines.append(f'when = "S == {n}"')
        lines.append(f'shape = {{ S = {n} }}')
    (root / "src" / f"{name}.toml").write_text("\n".join(lines) + "\n")
    build = root / "build"
    cache = build / "tune" / "cache"
    cache.mkdir(parents=True)
    manifest = build / "tune" / name / "manifest.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({
        "schema_version": 1, "kernel": name, "entry": name, "project_root": str(root / "src"),
        "build_dir": str(build), "sources": [str(root / "src" / f"{name}.cu")],
        "space": str(root / "src" / f"{name}.toml"), "archs": ["sm_90"],
        "records": {"sm_90": str(root / "src" / f"{name}.json")},
        "nvcc": shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc", "cache_dir": str(cache),
        "log_dir": str(manifest.parent), "runner": tuner}, indent=2))

    def entry(c):
        key = subprocess.run([tuner, "key", "--manifest", str(manifest), "--config", f"C={c}"],
                             capture_output=True, text=True, check=True).stdout.split()[-1]
        cubin = f"sim cubin {c}".encode()
        (cache / f"{key}.cubin").write_bytes(cubin)
        (cache / f"{key}.json").write_text(json.dumps({
            "schema_version": 1, "key": key, "key_schema": "k1", "status": "ok", "reason": "",
            "compiler_output": "", "resources": None,
            "cubin_sha256": hashlib.sha256(cubin).hexdigest(), "arch": "sm_90",
            "config_id": f"C={c}", "argv": [], "dependencies": []}))

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(entry, range(largest)))
    return manifest


def tune(tuner, manifest, workers, env):
    """Wall seconds of W shards at once, and of the merge."""
    logdir = manifest.parent
    for sub in ("shards", "sm_90"):
        shutil.rmtree(logdir / sub, ignore_errors=True)
    record = json.loads(manifest.read_text())["records"]["sm_90"]
    Path(record).unlink(missing_ok=True)
    start = time.monotonic()
    procs = [subprocess.Popen([tuner, "run", "--manifest", str(manifest), "--shard",
                               f"{k}/{workers}"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, env=env)
             for k in range(1, workers + 1)]
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            sys.exit(f"scaling.py: a shard failed:\n{err}")
    shards = time.monotonic() - start
    start = time.monotonic()
    r = subprocess.run([tuner, "merge", "--manifest", str(manifest)], capture_output=True,
                       text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"scaling.py: the merge failed:\n{r.stderr}")
    return shards, time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tuner", required=True)
    parser.add_argument("--scale", type=float, default=0.05,
                        help="GPU seconds are slept times this (default 0.05)")
    parser.add_argument("--workers", default="1,2,4,8,32")
    parser.add_argument("--kernels", default="gemm,reduce,softmax")
    parser.add_argument("--logs", help="trial logs of a real tune, for the per-candidate time")
    parser.add_argument("--work", default=None, help="scratch folder (default: a temporary one)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    tuner = os.path.abspath(args.tuner)
    work = Path(args.work or f"/tmp/tune-scaling-{os.getpid()}").resolve()
    work.mkdir(parents=True, exist_ok=True)
    seconds = per_trial_seconds(args.logs)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TUNE_", "SIM_"))}
    env.update(TUNE_RUNNER_WORKER_CMD=f"{sys.executable} {HERE / 'sim_worker.py'}",
               SIM_SECONDS=str(seconds * args.scale))
    kernels = args.kernels.split(",")
    manifests = {}
    buckets_of = {}
    total = 0
    # A copy of the tuner, so that a rebuild meanwhile does not pull it from under the bench.
    shutil.copy2(tuner, work / "tuner")
    tuner = str(work / "tuner")
    for k in kernels:
        buckets_of[k] = bucket_sizes(tuner, k)
        total += sum(n for _, n in buckets_of[k])
        manifests[k] = project(tuner, work, k, buckets_of[k])
    print(f"{total} candidates in {len(kernels)} kernels, {seconds:.3f} s each on the GPU "
          f"({'from ' + args.logs if args.logs else 'the H200 tune of 2026-11-29'}), "
          f"slept x{args.scale}")
    print(f"{'workers':>7} {'shards s':>9} {'merge s':>8} {'total s':>8} {'speedup':>8} "
          f"{'ideal s':>8}")
    rows = []
    base = None
    for w in [int(x) for x in args.workers.split(",")]:
        shards = merge = 0.0
        for k in kernels:  # one kernel after another, as the tune target runs them
            # Once without sleeping (what the processes, logs and merge cost on this CPU), once
            # with: the difference is the scaled GPU time, scaled back up.
            s0, m0 = tune(tuner, manifests[k], w, dict(env, SIM_SECONDS="0"))
            s, _ = tune(tuner, manifests[k], w, env)
            shards += s0 + max(0.0, s - s0) / args.scale
            # The merge measures nothing but its runoffs: two candidates' time per bucket,
            # added as such (scaling its sub-second sleep back up would only scale the noise).
            merge += m0 + 2 * seconds * len(buckets_of[k])
        total_s = shards + merge
        base = base or total_s
        ideal = total * seconds / w
        rows.append({"workers": w, "shards_s": shards, "merge_s": merge, "total_s": total_s,
                     "speedup": base / total_s, "ideal_s": ideal})
        print(f"{w:>7} {shards:>9.1f} {merge:>8.2f} {total_s:>8.1f} {base / total_s:>7.2f}x "
              f"{ideal:>8.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"seconds_per_candidate": seconds,
                                               "scale": args.scale, "candidates": total,
                                               "rows": rows}, indent=2) + "\n")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
