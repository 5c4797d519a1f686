#!/usr/bin/env python3
"""The fidelity of a real tune: bench/fidelity/tune (the 1M-float streaming kernel, a harness as
docs/harness.md writes one, default bench settings) is configured with the tuner under test and
tuned --runs times with a fresh log each time. For every run it prints the two finalists'
search medians, their medians timed alone right before the runoff, their medians in the paired
runoff, the runoff's verdict and the agreement warnings the tune wrote; last, the largest
departure of a runoff median from the same config timed alone (the two modes at one time).

Usage: tune_runs.py --tuner <tuner> --arch sm_90 --work <dir> [--runs 5] [--tomlpp <dir>] [--eigen <dir>]
                    [--cmake cmake] [--json <file>]
Exits 1 when a departure is over --limit percent (default 3).
"""
import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

p = argparse.ArgumentParser()
p.add_argument("--tuner", required=True)
p.add_argument("--arch", required=True)
p.add_argument("--work", required=True, type=Path)
p.add_argument("--runs", type=int, default=5)
p.add_argument("--tomlpp", default="")
p.add_argument("--eigen", default="")
p.add_argument("--cmake", default="cmake")
p.add_argument("--json", default="")
p.add_argument("--limit", type=float, default=3.0)
args = p.parse_args()


def run(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"tune_runs: {' '.join(map(str, cmd))} failed:\n{r.stdout}{r.stderr}")
    return r


shutil.rmtree(args.work, ignore_errors=True)
src, build = args.work / "src", args.work / "build"
shutil.copytree(HERE / "tune", src)
cmd = [args.cmake, "-S", src, "-B", build, "-G", "Ninja", f"-DTUNE_SOURCE_DIR={ROOT}",
       f"-DTUNE_TUNER_EXECUTABLE={args.tuner}", f"-DTUNE_ARCH={args.arch}",
       "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DTUNE_ENABLE_WERROR=OFF",
       "-DTUNE_ENABLE_KERNELS=OFF"]
if args.tomlpp:
    cmd.append(f"-DTUNE_TOMLPP_INCLUDE_DIR={args.tomlpp}")
if args.eigen:
    cmd.append(f"-DTUNE_EIGEN_INCLUDE_DIR={args.eigen}")
run(cmd)

logdir = build / "tune" / "scale" / args.arch
record = src / "records" / "scale.json"
results, worst = [], 0.0
print(f"{'run':>3} {'finalist':<18} {'search':>9} {'alone':>9} {'paired':>9} {'paired/alone':>12}"
      f" {'paired/search':>13}  verdict")
for i in range(1, args.runs + 1):
    shutil.rmtree(logdir, ignore_errors=True)
    record.unlink(missing_ok=True)
    run([args.cmake, "--build", build, "--target", "tune"])
    trials = []
    for log in logdir.glob("*.trials.jsonl"):
        trials += [json.loads(l) for l in log.read_text().splitlines()[1:]]
    seq = {t["config_id"]: t["median_ms"] for t in trials
           if t["phase"] != "runoff" and t["state"] == "measured"}
    # Both finalists' runoff lines carry the same statistics: one is enough.
    for t in [t for t in trials if t["phase"] == "runoff"][:1]:
        s = t["runoff"]
        row = {"run": i, "runoff": s, "warnings": t.get("warnings", []), "sequential": seq}
        results.append(row)
        for side in ("incumbent", "challenger"):
            cid, ms = s[side], s[f"{side}_median_ms"]
            alone = s.get(f"{side}_alone_ms", 0)
            mode = ms / alone if alone else float("nan")
            drift = ms / seq[cid]
            worst = max(worst, abs(mode - 1) if alone else abs(drift - 1))
            verdict = (f"{s['outcome']} ({s['median_diff_pct']:+.1f}%, p={s['p_value']:.2g})"
                       if side == "incumbent" else "")
            print(f"{i:>3} {cid:<18} {seq[cid] * 1e3:7.3f}us {alone * 1e3:7.3f}us {ms * 1e3:7.3f}us"
                  f" {mode:12.3f} {drift:13.3f}  {verdict}")
        for w in t.get("warnings", []):
            print(f"    warning: {w}")
print(f"largest departure of a runoff median from the same config timed alone just before "
      f"(from its search median where it was not): {100 * worst:.2f}%")
if args.json:
    Path(args.json).write_text(json.dumps({"runs": results, "largest_departure": worst}, indent=1))
sys.exit(1 if 100 * worst > args.limit else 0)
