#!/usr/bin/env python3
"""On a GPU host: does a tune split into shards give the winners of the unsharded tune?
(docs/scaling.md "Measured scaling")

For each kernel (default reduce and softmax; --kernels gemm,reduce,softmax for all three) of a
build tree that is built and warmed (`cmake --build <build> --target warm`), from the committed
records each time (so both runs have the same committed winner as the soft incumbent) and with
fresh logs:

1. unsharded: `tuner run --manifest M`, the record copied aside;
2. sharded on the same GPU: `tuner run --shard 1/2`, then `--shard 2/2`, then `tuner merge`;

then, per bucket, whether the winners agree, and where they do not, whether the two records'
medians are within the runoff's margin (a tie the runoff may settle either way). The committed
records are put back at the end. With two or more GPUs it also runs `TUNE_DEVICES=all` through
the tune target once and compares that record too.

Prints one line per bucket and a last line `shard_check: ok (N buckets: S same, T ties within
the margin)` or `shard_check: FAIL ...`; exit status 0 or 1.

Usage: scripts/shard_check.py --build build-gpu [--kernels reduce,softmax] [--device 0]
                              [--out DIR]
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from gpu_check_common import Check


def entries(path):
    record = json.loads(Path(path).read_text())
    return {e["bucket"]: e for e in record["entries"]}


def main():
    check = Check("shard_check", default_kernels="reduce,softmax")
    args, build, out, tuner = check.args, check.build, check.out, check.tuner
    gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.count("GPU ")
    same = ties = 0
    failures = []
    for kernel in args.kernels.split(","):
        manifest = build / "tune" / kernel / "manifest.json"
        m = json.loads(manifest.read_text())
        record = Path(next(iter(m["records"].values())))
        committed = record.read_bytes()
        logdir = Path(m["log_dir"])
        results = {}
        try:
            shutil.rmtree(logdir / "sm_90", ignore_errors=True)
            t = check.run([tuner, "run", "--manifest", str(manifest), "--device", args.device])
            results["unsharded"] = (entries(record), t)
            record.write_bytes(committed)
            shards = out / "shards" / kernel
            shutil.rmtree(shards, ignore_errors=True)
            t = 0.0
            for k in (1, 2):
                t += check.run([tuner, "run", "--manifest", str(manifest), "--device",
                                args.device, "--shard", f"{k}/2", "--out", str(shards)])
            t += check.run([tuner, "merge", "--manifest", str(manifest), "--device", args.device,
                            "--from", str(shards)])
            results["2 shards, 1 GPU"] = (entries(record), t)
            record.write_bytes(committed)
            if gpus >= 2:
                shutil.rmtree(logdir / "devices", ignore_errors=True)
                record.unlink()
                t = check.run(["cmake", "--build", str(build), "--target", f"tune.{kernel}"],
                              env=dict(os.environ, TUNE_DEVICES="all"))
                results[f"TUNE_DEVICES=all ({gpus} GPUs)"] = (entries(record), t)
        finally:
            record.write_bytes(committed)
        base, base_t = results["unsharded"]
        print(f"{kernel}: unsharded {base_t:.0f} s")
        for name, (got, t) in results.items():
            if name == "unsharded":
                continue
            print(f"{kernel}: {name} {t:.0f} s")
            for bucket, e in base.items():
                g = got[bucket]
                a, b = e["config"]["id"], g["config"]["id"]
                margin = (e.get("runoff") or {}).get("margin_pct", 1.0)
                gap = 100.0 * (g["median_ms"] - e["median_ms"]) / e["median_ms"]
                if a == b:
                    same += 1
                    verdict = "same winner"
                elif abs(gap) <= margin:
                    ties += 1
                    verdict = f"tie within the {margin}% margin ({gap:+.2f}%)"
                else:
                    failures.append(f"{kernel}/{bucket}")
                    verdict = f"DIFFERENT, {gap:+.2f}% apart"
                print(f"  {bucket} ({name}): {a} vs {b}: {verdict}")
    n = same + ties + len(failures)
    if failures:
        print(f"shard_check: FAIL ({n} buckets: {len(failures)} with other winners: "
              f"{', '.join(failures)})")
        return 1
    print(f"shard_check: ok ({n} buckets: {same} same, {ties} ties within the margin)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
