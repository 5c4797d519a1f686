#!/usr/bin/env python3
"""The `srun` launcher test's wall time against the local run (docs/scaling.md "Compiling
elsewhere"): the compile-ahead tune of tests/cli/launcher_cli.py (the saxpy project, 7
candidates, the fake worker measuring at once, an empty kernel cache each run), once on this
host with its default concurrency (the cores but one) and once through `srun --partition=cpu`
with twice the local cores' worth of compiles at once, on a single-node Slurm this script starts
(tests/slurm/slurm_cluster.py). Prints the median wall time of each and their ratio.

On one node the 'CPU partition' is this host: the ratio shows that the launcher works and what
`srun` adds per compile, not what remote compilers give. With `--compiler real` the compiles are
real nvcc runs of the saxpy kernel, which share this host's cores either way; with `--compiler
stand-in` a stand-in nvcc sleeps --compile-s per compile, a compile whose CPU is elsewhere.

Usage: launcher.py --build <tune build tree with tests> [--compiler real|stand-in]
                   [--compile-s 2] [--reps 3] [--work DIR]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "cli"))
import clitest  # noqa: E402
import launcher_cli  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--compiler", choices=["real", "stand-in"], default="real")
    ap.add_argument("--compile-s", type=float, default=2.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                   "tune-bench-launcher"))
    args = ap.parse_args()
    build = Path(args.build).resolve()
    tuner = build / "tuner" / "tuner"
    runner = build / "tests" / "bin" / "fake_runner"
    for needed in (tuner, runner):
        if not needed.exists():
            sys.exit(f"launcher.py: no {needed}: build the tuner and the tests in {build}")
    work = Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    cluster = work / "slurm"
    subprocess.run([sys.executable, ROOT / "tests" / "slurm" / "slurm_cluster.py", "start",
                    cluster], check=True)
    if (cluster / "skip").exists():
        sys.exit(f"launcher.py: no Slurm here: {(cluster / 'skip').read_text().strip()}")
    os.environ["SLURM_CONF"] = str(cluster / "slurm.conf")
    if args.compiler == "real":
        nvcc = Path(clitest.NVCC)
        env = {}
    else:
        nvcc = launcher_cli.stand_in_cuda(work / "cuda" / "bin")
        env = {"FAKE_COMPILE_S": args.compile_s}
    cores = os.cpu_count() or 1
    runs = {"local": [], "srun": []}
    try:
        for rep in range(args.reps):
            # Alternate the order, so that a drift in the machine's load falls on both.
            order = ["local", "srun"] if rep % 2 == 0 else ["srun", "local"]
            for how in order:
                manifest = launcher_cli.saxpy_project(work / how, nvcc, runner)
                t0 = time.perf_counter()
                if how == "local":
                    r = launcher_cli.compile_ahead_tune(tuner, manifest, cores, None, **env)
                else:
                    r = launcher_cli.compile_ahead_tune(tuner, manifest, 2 * cores,
                                                        launcher_cli.SRUN, **env)
                seconds = time.perf_counter() - t0
                if r.returncode != 0:
                    sys.exit(f"launcher.py: the {how} tune failed:\n{r.stderr}")
                line = [l for l in r.stderr.splitlines() if "compiling ahead" in l][0]
                print(f"run {rep + 1} {how}: {seconds:.2f} s ({line.split(': ', 1)[1]})",
                      flush=True)
                runs[how].append(seconds)
    finally:
        subprocess.run([sys.executable, ROOT / "tests" / "slurm" / "slurm_cluster.py", "stop",
                        cluster], check=False)
    local, srun = statistics.median(runs["local"]), statistics.median(runs["srun"])
    print(f"compiler: {args.compiler}"
          + (f" ({args.compile_s:g} s per compile)" if args.compiler == "stand-in" else "")
          + f"; {cores} cores, load average {os.getloadavg()[0]:.1f}; {args.reps} runs each")
    print(f"local ({max(1, cores - 1)} at once): median {local:.2f} s; srun ({2 * cores} at "
          f"once): median {srun:.2f} s; srun / local = {srun / local:.2f}")


if __name__ == "__main__":
    main()
