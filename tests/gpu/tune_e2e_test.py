#!/usr/bin/env python3
"""The end-to-end tune on a GPU (label gpu): tests/gpu/tune_e2e is copied to a scratch folder,
configured with tune through add_subdirectory, and tuned with `cmake --build build --target
tune`. Checks: the record is written and verifies (ctest -L records), a candidate that gives
wrong results (SKIP=1) is invalid and never wins, a second tune is a no-op, and a `tuner run`
interrupted with SIGINT mid-way and resumed measures no completed trial again.

Arguments and the TUNE_GPU_E2E gate: gpu_consumer.py. Prints `tune_e2e: ...` lines that
gpu_check.sh collects.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

from gpu_consumer import ARGS, configure, logged, run, skip_unless_enabled

skip_unless_enabled("tune_e2e")


class TuneEndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.src, cls.build, cls.env = configure("tune_e2e")
        cls.manifest = cls.build / "tune" / "axpy" / "manifest.json"
        cls.logdir = cls.build / "tune" / "axpy" / ARGS.arch
        cls.record = cls.src / "records" / "axpy.json"

    def tune(self):
        start = time.monotonic()
        r = run([ARGS.cmake, "--build", self.build, "--target", "tune"], env=self.env)
        return r, time.monotonic() - start

    def test_1_tune_writes_a_verified_record_and_rejects_wrong_results(self):
        r, seconds = self.tune()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(self.record.exists(), r.stdout + r.stderr)
        record = json.loads(self.record.read_text())
        self.assertEqual(sorted(e["bucket"] for e in record["entries"]), ["large", "n<=1M"])
        for e in record["entries"]:
            self.assertEqual(e["config"]["params"]["SKIP"], 0, e)
            self.assertEqual(e["source"], "measured")
            self.assertIsNotNone(e["cache_key"])
            self.assertIsNotNone(e["runoff"], e)
            print(f"tune_e2e: {e['bucket']}: winner {e['config']['id']} "
                  f"{e['median_ms']:.4f} ms, runoff {e['runoff']['outcome']} "
                  f"({e['runoff']['pairs']} pairs, {e['runoff']['median_diff_pct']:+.2f}%, "
                  f"p={e['runoff']['p_value']:.3g})")
        self.assertIsNotNone(record["context"]["device"])
        print(f"tune_e2e: device {record['context']['device']}, driver "
              f"{record['context']['driver']}, first tune {seconds:.1f} s")
        # Every SKIP=1 candidate failed the gate; every SKIP=0 one was measured.
        for log in sorted(self.logdir.glob("*.trials.jsonl")):
            for t in logged(log):
                if t["phase"] == "runoff":
                    continue
                if t["params"]["SKIP"] == 1:
                    self.assertEqual(t["state"], "invalid", t)
                    self.assertTrue(t["reason"].startswith("'out' is wrong: relative error nan"),
                                    t["reason"])
                else:
                    self.assertEqual(t["state"], "measured", t)
        r = run(["ctest", "--test-dir", self.build, "-L", "records", "--output-on-failure"])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_2_second_tune_is_a_no_op(self):
        before = {p.name: p.read_text() for p in self.logdir.glob("*.trials.jsonl")}
        record = self.record.read_text()
        r, seconds = self.tune()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("tune.axpy: record records/axpy.json is fresh", r.stdout)
        self.assertNotIn("warm axpy", r.stdout)
        self.assertEqual(record, self.record.read_text())
        self.assertEqual(before, {p.name: p.read_text() for p in self.logdir.glob("*.trials.jsonl")})
        print(f"tune_e2e: second tune is a no-op ({seconds:.1f} s)")

    def test_3_interrupted_and_resumed_measures_no_completed_trial(self):
        self.record.unlink()
        shutil.rmtree(self.logdir)
        p = subprocess.Popen([str(ARGS.tuner), "run", "--manifest", str(self.manifest)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True, env=self.env)
        first = self.logdir / "n%3C%3D1M.trials.jsonl"
        deadline = time.time() + 120
        while time.time() < deadline and len(logged(first)) < 6:
            time.sleep(0.02)
        os.killpg(p.pid, signal.SIGINT)  # as a Ctrl-C on the terminal would
        out, err = p.communicate(timeout=60)
        self.assertIn(p.returncode, (130, -signal.SIGINT), out + err)
        self.assertFalse(self.record.exists())
        done = [t for t in logged(first) if t["state"] == "measured" and t["phase"] != "runoff"]
        self.assertGreaterEqual(len(done), 3, err)
        r = run([ARGS.tuner, "run", "--manifest", self.manifest], env=self.env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(self.record.exists())
        counts = {}
        for t in logged(first):
            if t["state"] == "measured" and t["phase"] != "runoff":
                counts[t["config_id"]] = counts.get(t["config_id"], 0) + 1
        again = [c for c, n in counts.items() if n > 1]
        self.assertEqual(again, [])
        print(f"tune_e2e: interrupted after {len(done)} measured trials, resumed without "
              "measuring any again")
        r = run([ARGS.tuner, "verify", "--manifest", self.manifest])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
