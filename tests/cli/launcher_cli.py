#!/usr/bin/env python3
"""The compiler launcher (docs/scaling.md "Compiling elsewhere") with `srun` as the launcher, on
the tests' single-node Slurm (the fixture tests/slurm/slurm_cluster.py; SLURM_CONF names it):
its 'cpu' partition stands in for the CPU nodes that compile, this host for the GPU node.

- warm: the build's steps (`tuner warm --config --stamp`, as Ninja runs them, twice the local
  cores' worth at once) compile every candidate in a Slurm job, under the keys a compile
  without the launcher gives (the launcher is no input of the key): a local warm into another
  cache writes the same entries; a launcher that fails itself caches no verdict;
- compile-ahead: `tuner run --compile-ahead --compile-jobs <2 x cores>` compiles through srun
  that many at once, past this host's cores, while the fake worker measures.

The compiler is a stand-in nvcc that notes, per compile, its Slurm job, its start and end, and
sleeps FAKE_COMPILE_S. Skips (exit 77) with the fixture's reason when the daemons cannot run.
bench/pipeline/launcher.py times the same tune with and without the launcher.
"""
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

import clitest

CLUSTER = Path(os.environ.get("TUNE_TEST_SLURM_DIR", ""))
RUNNER = os.environ.get("TUNE_TEST_RUNNER", "")
DATA_DIR = Path(__file__).resolve().parents[1] / "data"
WORKER_CMD = f"{sys.executable} {DATA_DIR / 'runner' / 'fake_worker.py'}"
SRUN = "srun --partition=cpu --quiet"
CORES = os.cpu_count() or 1

# A stand-in nvcc: answers --version like nvcc 13.0, sleeps FAKE_COMPILE_S, writes a cubin that
# is a digest of its arguments but the output path (the same candidate gives the same bytes
# wherever it is compiled), and appends `<start> <end> <slurm job or none> <output>` to
# compiles.txt beside itself.
STAND_IN_NVCC = """#!/bin/sh
if [ "$1" = "--version" ]; then
  echo "Cuda compilation tools, release 13.0, V13.0.48"; exit 0
fi
start=$(date +%s.%N)
out=""; prev=""; args=""
for a in "$@"; do
  if [ "$prev" = "-o" ]; then out="$a"; else args="$args $a"; fi
  prev="$a"
done
sleep "${FAKE_COMPILE_S:-0}"
printf 'cubin for%s' "$args" | sha256sum > "$out"
echo "$start $(date +%s.%N) ${SLURM_JOB_ID:-none} $out" >> "$(dirname "$0")/compiles.txt"
"""


def stand_in_cuda(bin_dir):
    """Writes STAND_IN_NVCC as `nvcc` and `ptxas` into `bin_dir`; returns the nvcc path."""
    return clitest.fake_cuda(bin_dir, STAND_IN_NVCC)


def saxpy_project(top, nvcc, runner=RUNNER):
    """The runner tests' saxpy project and build tree under `top` (emptied first), compiled by
    `nvcc`, measured by `runner` (the fake worker stands in for it), its kernel cache empty;
    the manifest's path."""
    top = Path(top)
    shutil.rmtree(top, ignore_errors=True)
    return clitest.saxpy_tree(top, nvcc, runner, DATA_DIR)


def compile_ahead_tune(tuner, manifest, jobs, launcher, **env):
    """`tuner run --compile-ahead --compile-jobs <jobs>` with the fake worker (every candidate
    measured at once), through `launcher` (None: none); the finished process."""
    settings = {"TUNE_RUNNER_WORKER_CMD": WORKER_CMD, "FAKE_TAME": 1,
                "TUNE_COMPILER_LAUNCHER": launcher or "off"}
    settings.update(env)
    return subprocess.run([tuner, "run", "--manifest", str(manifest), "--timeout", "5",
                           "--compile-ahead", "--compile-jobs", str(jobs)],
                          capture_output=True, text=True, env=clitest.env(**settings),
                          timeout=600)


def compiles(nvcc):
    """The stand-in's notes: (start, end, slurm job, output) per compile."""
    log = Path(nvcc).parent / "compiles.txt"
    lines = log.read_text().splitlines() if log.exists() else []
    return [(float(a), float(b), job, out) for a, b, job, out in (l.split(" ", 3) for l in lines)]


def most_at_once(spans):
    """The most compiles that ran at the same time."""
    events = sorted([(s, 1) for s, _, _, _ in spans] + [(e, -1) for _, e, _, _ in spans])
    now = most = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


class LauncherCli(unittest.TestCase):
    def setUp(self):
        self.assertTrue(RUNNER and os.path.exists(RUNNER), f"no runner at '{RUNNER}'")
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        self.nvcc = stand_in_cuda(self.dir / "cuda" / "bin")
        self.manifest = saxpy_project(self.dir / "project", self.nvcc)
        self.build = self.dir / "project" / "build"
        self.cache = self.build / "tune" / "cache"

    def tuner(self, *args, **env):
        return subprocess.run([TUNER, *map(str, args)], capture_output=True, text=True,
                              env=clitest.env(**env), timeout=300)

    def key(self, config, **env):
        r = self.tuner("key", "--manifest", self.manifest, "--config", config, **env)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.strip().split()[-1]

    def ids(self):
        r = self.tuner("warm", "--list-candidates", self.dir / "project" / "src" / "saxpy.toml")
        return r.stdout.split()

    def entries(self, cache):
        """Every entry of a kernel cache: key to (config id, status, cubin digest, argv)."""
        out = {}
        for p in Path(cache).glob("*.json"):
            e = json.loads(p.read_text())
            out[e["key"]] = (e["config_id"], e["status"], e["cubin_sha256"], e["argv"])
        return out

    def test_warm_steps_compile_in_slurm_jobs_under_the_keys_of_a_local_compile(self):
        ids = self.ids()
        self.assertEqual(len(ids), 7)
        steps = self.dir / "steps"

        def step(config_id):
            stamp = steps / f"{config_id}.stamp"
            return stamp, self.tuner("warm", "--manifest", self.manifest, "--arch", "sm_90",
                                     "--config", config_id, "--stamp", stamp, "--depfile",
                                     f"{stamp}.d", TUNE_COMPILER_LAUNCHER=SRUN, FAKE_COMPILE_S=1)

        # As Ninja runs the warm target's steps: twice this host's cores at once.
        with concurrent.futures.ThreadPoolExecutor(2 * CORES) as pool:
            done = dict(zip(ids, pool.map(step, ids)))
        for config_id, (stamp, r) in done.items():
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            # The stamp holds the key, the same with the launcher set as without.
            self.assertEqual(stamp.read_text().strip(), self.key(config_id))
            self.assertEqual(self.key(config_id, TUNE_COMPILER_LAUNCHER=SRUN), self.key(config_id))
        summary = self.tuner("warm", "--manifest", self.manifest, "--summary")
        self.assertIn("tuner warm: saxpy sm_90: 7 candidates: 7 compiled, 0 from the store, 0 "
                      "already cached; none invalid\n", summary.stdout)
        # Each compile ran in a Slurm job of its own.
        spans = compiles(self.nvcc)
        jobs = [job for _, _, job, _ in spans]
        self.assertEqual(len(spans), 7, spans)
        self.assertNotIn("none", jobs)
        self.assertEqual(len(set(jobs)), 7, jobs)
        self.assertGreaterEqual(most_at_once(spans), 2, spans)

        # Compiled here, without the launcher, into another cache: the same entries.
        local = self.dir / "local-cache"
        r = self.tuner("warm", "--manifest", self.manifest, TUNE_COMPILER_LAUNCHER="off",
                       TUNE_CACHE_DIR=local)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("7 candidates: 7 compiled", r.stdout)
        self.assertEqual([job for _, _, job, _ in compiles(self.nvcc)[7:]], ["none"] * 7)
        self.assertEqual(self.entries(local), self.entries(self.cache))

    def test_a_launcher_that_fails_itself_caches_no_verdict(self):
        other = self.dir / "other-cache"
        r = self.tuner("warm", "--manifest", self.manifest, "--config", "BLOCK=64",
                       TUNE_COMPILER_LAUNCHER="srun --partition=nosuch --quiet",
                       TUNE_CACHE_DIR=other)
        self.assertIn("tuner warm: saxpy sm_90 BLOCK=64: invalid (failed): the compiler exited "
                      "with status 1: srun: error: ", r.stdout)
        self.assertIn("(not cached: the next warm compiles it again)", r.stdout)
        self.assertEqual(self.entries(other), {})
        self.assertEqual(compiles(self.nvcc), [])
        r = self.tuner("warm", "--manifest", self.manifest, "--config", "BLOCK=64",
                       TUNE_COMPILER_LAUNCHER=SRUN, TUNE_CACHE_DIR=other)
        self.assertIn("1 compiled", r.stdout)
        self.assertEqual(list(self.entries(other).values())[0][:2], ("BLOCK=64", "ok"))

    def test_compile_ahead_runs_twice_the_cores_through_srun_while_the_worker_measures(self):
        jobs = 2 * CORES
        r = compile_ahead_tune(TUNER, self.manifest, jobs, SRUN, FAKE_COMPILE_S=1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"tuner run: compiling ahead, {jobs} at once through the compiler "
                      f"launcher '{SRUN}' (TUNE_COMPILER_LAUNCHER)\n", r.stderr)
        self.assertIn("saxpy: wrote ", r.stdout)
        spans = compiles(self.nvcc)
        self.assertEqual(len(spans), 7, spans)  # once each: the second bucket finds them cached
        self.assertNotIn("none", [job for _, _, job, _ in spans])
        self.assertGreaterEqual(most_at_once(spans), 2, spans)
        # Without a launcher the same setting is capped by this host's cores.
        shutil.rmtree(self.build / "tune" / "saxpy" / "sm_90")
        shutil.rmtree(self.cache)
        r = compile_ahead_tune(TUNER, self.manifest, jobs, None)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"tuner run: compiling ahead, {max(1, CORES - 1)} at once on this host\n",
                      r.stderr)


if __name__ == "__main__":
    TUNER, _, WORK = clitest.paths()
    skip = CLUSTER / "skip"
    if not CLUSTER.name or skip.exists():
        print(f"skipped: {skip.read_text().strip() if skip.exists() else 'no Slurm fixture'}")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0]])
