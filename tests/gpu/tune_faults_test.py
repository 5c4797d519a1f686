#!/usr/bin/env python3
"""Faulting candidates on a GPU (label gpu): tests/gpu/tune_faults is copied to a scratch folder,
configured with tune through add_subdirectory and tuned. Its kernel has six candidates: three
correct ones about 2x apart (VARIANT 4 fastest, then 5, then the required 0), one that writes to
an unmapped address (1), one that spins forever (2) and one that traps (3).

test_1: `cmake --build build --target tune` finishes; the three faulting candidates are invalid
with precise reasons (the CUDA error's name, "timed out after 5 s"), each cost its worker, which
was replaced; the winner is the true best (VARIANT=4); no worker process is left.
test_2: SIGTERM to `tuner run` alone (not its process group) while the spinning candidate is in
flight: it stops within seconds with 143, the candidate is abandoned (not logged), the log is
whole, the committed record is untouched, no worker is left; run again, it resumes, measures
no completed trial again and writes the same winner.
test_3: a harness that reads a misspelt param ('VARIANTS'): `tuner run` stops the bucket at its
first candidate with one line naming faulty_harness.cpp:17, logs nothing, writes no record.

Arguments and the TUNE_GPU_E2E gate: gpu_consumer.py.
"""
import json
import shutil
import signal
import subprocess
import sys
import time
import unittest
from pathlib import Path

from gpu_consumer import ARGS, configure, logged, run, skip_unless_enabled

skip_unless_enabled("tune_faults")

GOOD = ["VARIANT=0", "VARIANT=4", "VARIANT=5"]
TIMEOUT_S = 5  # faulty.toml's [search] timeout_s


def workers_of(manifest):
    """Pids of measuring workers of this manifest still running."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b".runner") and str(manifest).encode() in argv:
            pids.append(int(entry.name))
    return pids


class TuneFaults(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.src, cls.build, cls.env = configure("tune_faults")
        cls.manifest = cls.build / "tune" / "faulty" / "manifest.json"
        cls.logdir = cls.build / "tune" / "faulty" / ARGS.arch
        cls.log = cls.logdir / "all.trials.jsonl"
        cls.result = cls.logdir / "all.result.json"
        cls.record = cls.src / "records" / "faulty.json"

    def check_trials(self, trials):
        by_id = {t["config_id"]: t for t in trials if t["phase"] != "runoff"}
        oob, spin, trap = by_id["VARIANT=1"], by_id["VARIANT=2"], by_id["VARIANT=3"]
        for t in (oob, spin, trap):
            self.assertEqual(t["state"], "invalid", t)
            print(f"tune_faults: {t['config_id']} invalid: {t['reason']}")
        self.assertTrue(oob["reason"].startswith("CUDA_ERROR_ILLEGAL_ADDRESS: "), oob["reason"])
        self.assertEqual(spin["reason"], f"timed out after {TIMEOUT_S} s")
        # A trap ends the kernel as an unspecified launch failure (H200, driver 580).
        self.assertTrue(trap["reason"].startswith("CUDA_ERROR_LAUNCH_FAILED: "), trap["reason"])
        times = {c: by_id[c]["median_ms"] for c in GOOD}
        for c in GOOD:
            self.assertEqual(by_id[c]["state"], "measured", by_id[c])
        # The good ones are apart by far more than 10%: 4 < 5 < 0.
        self.assertLess(times["VARIANT=4"] * 1.1, times["VARIANT=5"], times)
        self.assertLess(times["VARIANT=5"] * 1.1, times["VARIANT=0"], times)
        print("tune_faults: good candidates " +
              ", ".join(f"{c} {times[c]:.4f} ms" for c in sorted(times, key=times.get)))

    def test_1_faulting_candidates_are_invalid_and_the_true_best_wins(self):
        start = time.monotonic()
        r = run([ARGS.cmake, "--build", self.build, "--target", "tune"], env=self.env)
        seconds = time.monotonic() - start
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, out)
        self.check_trials(logged(self.log))
        result = json.loads(self.result.read_text())
        self.assertEqual(result["best"]["config_id"], "VARIANT=4", result)
        self.assertEqual(result["invalid"], 3)
        # The first worker, then a fresh one after each of the three faults.
        self.assertEqual(result["workers_started"], 4, out)
        notes = [l for l in out.splitlines() if "note: worker pid" in l]
        self.assertEqual(len(notes), 3, out)
        for n in notes:
            print(f"tune_faults: {n.strip()}")
        record = json.loads(self.record.read_text())
        self.assertEqual([e["config"]["id"] for e in record["entries"]], ["VARIANT=4"])
        self.assertEqual(workers_of(self.manifest), [])
        r = run([ARGS.tuner, "verify", "--manifest", self.manifest])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        print(f"tune_faults: tune finished in {seconds:.1f} s with winner VARIANT=4, "
              f"{result['workers_started']} workers started")

    def test_2_sigterm_while_a_candidate_spins_stops_cleanly_and_resumes(self):
        before = self.record.read_bytes()
        shutil.rmtree(self.logdir)
        p = subprocess.Popen([str(ARGS.tuner), "run", "--manifest", str(self.manifest)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=self.env)
        # The order: the required VARIANT=0, the committed winner VARIANT=4 (the soft
        # incumbent), then the grid. VARIANT=1 logged means the spinning VARIANT=2 is next; give
        # it a second to be in flight.
        deadline = time.time() + 120
        while time.time() < deadline and "VARIANT=1" not in [t["config_id"] for t in
                                                             logged(self.log)]:
            time.sleep(0.02)
        time.sleep(1.0)
        sent = time.monotonic()
        p.send_signal(signal.SIGTERM)  # to `tuner run` alone: it passes the signal on
        out, err = p.communicate(timeout=60)
        stopped = time.monotonic() - sent
        self.assertEqual(p.returncode, 143, out + err)
        self.assertLess(stopped, TIMEOUT_S, err)  # abandoned, not waited for
        self.assertIn("all: interrupted; the log keeps every finished trial", err)
        self.assertEqual(self.record.read_bytes(), before)
        text = self.log.read_text()
        self.assertTrue(text.endswith("\n"))
        ids = [t["config_id"] for t in logged(self.log)]
        self.assertEqual(ids, ["VARIANT=0", "VARIANT=4", "VARIANT=1"], err)
        self.assertEqual(workers_of(self.manifest), [])
        print(f"tune_faults: SIGTERM while VARIANT=2 spun: exit 143 after {stopped:.2f} s, "
              f"log holds {ids}, record untouched")

        r = run([ARGS.tuner, "run", "--manifest", self.manifest], env=self.env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        trials = logged(self.log)
        measured = [t["config_id"] for t in trials
                    if t["state"] == "measured" and t["phase"] != "runoff"]
        self.assertEqual(sorted(measured), sorted(GOOD))  # none twice
        self.check_trials(trials)
        record = json.loads(self.record.read_text())
        self.assertEqual([e["config"]["id"] for e in record["entries"]], ["VARIANT=4"])
        self.assertEqual(workers_of(self.manifest), [])
        print("tune_faults: resumed: no completed trial measured again, winner VARIANT=4")

    def test_3_a_misspelt_param_in_the_harness_stops_the_bucket_at_once(self):
        # The harness reads 'VARIANTS': every candidate would fail the same way, so the first
        # one stops the bucket, naming the harness's line; nothing is logged.
        harness = self.src / "faulty_harness.cpp"
        good = harness.read_text()
        harness.write_text(good.replace('int_("VARIANT")', 'int_("VARIANTS")'))
        before = self.record.read_bytes()
        shutil.rmtree(self.logdir)
        try:
            built = run([ARGS.cmake, "--build", self.build, "--target", "faulty.runner"],
                        env=self.env)
            self.assertEqual(built.returncode, 0, built.stdout + built.stderr)
            start = time.monotonic()
            r = run([ARGS.tuner, "run", "--manifest", self.manifest], env=self.env)
            took = time.monotonic() - start
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("all: error: the harness fails the same way for every candidate, so the "
                          "bucket stops at the first: faulty_harness.cpp:17: config 'VARIANT=0' "
                          "has no value 'VARIANTS' (it has: VARIANT); fix the harness and run "
                          "again", r.stderr)
            self.assertEqual(logged(self.log), [])
            self.assertEqual(self.record.read_bytes(), before)
            self.assertEqual(workers_of(self.manifest), [])
            print(f"tune_faults: a misspelt param stopped the bucket after {took:.1f} s")
        finally:
            harness.write_text(good)
            run([ARGS.cmake, "--build", self.build, "--target", "faulty.runner"], env=self.env)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
