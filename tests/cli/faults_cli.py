#!/usr/bin/env python3
"""Crashes lose nothing: `tuner exec` killed at every write point of its trial log
(TUNE_FAULT_INJECT, tuner/core/base/fault_inject.hpp), and killed with SIGKILL at random moments in
a loop. After each kill the next run resumes: it never measures again a trial the log holds, it
measures again at most the one candidate that was in flight (measured, not yet logged), and the
search ends with the true best and one logged result per config.

The objective is tests/data/exec/objective.sh (see exec_cli.py): 8 configs, 5 of them valid,
best BM=64,BN=128. Invalid trials are retried by every run by design (docs/search.md "Resume"), so the
"measured again" checks are about valid ones.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import unittest

import clitest

TUNER, DATA_ROOT, WORK = clitest.paths()
DATA = DATA_ROOT / "exec"
SPACE = DATA / "tile.toml"
OBJECTIVE = DATA / "objective.sh"
BUCKET = "m<=512"
# In the order a run measures them: the incumbent, then the grid (BM=128,BN=128 pruned).
ORDER = ["BM=64,BN=64", "BM=32,BN=32", "BM=32,BN=64", "BM=32,BN=128", "BM=64,BN=32",
         "BM=64,BN=128", "BM=128,BN=32", "BM=128,BN=64"]
INVALID = {"BM=32,BN=32", "BM=32,BN=128", "BM=128,BN=32"}
VALID = [c for c in ORDER if c not in INVALID]
BEST = "best: BM=64,BN=128 (1 ms)\n"


class FaultsCli(unittest.TestCase):
    def setUp(self):
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.log = self.dir / "tile.trials.jsonl"
        self.side = self.dir / "side.txt"

    def env(self, **extra):
        return clitest.env(OBJ_SIDE=self.side, **extra)

    def args(self):
        return [TUNER, "exec", str(SPACE), "--bucket", BUCKET, "--log", str(self.log), "--",
                str(OBJECTIVE)]

    def run_exec(self, **env):
        return subprocess.run(self.args(), capture_output=True, text=True, env=self.env(**env),
                              timeout=60)

    def measured(self):
        """Config ids the objective ran for since the last call, in order."""
        if not self.side.exists():
            return []
        ids = [line.split(" ")[0] for line in self.side.read_text().splitlines()]
        self.side.unlink()
        return ids

    def logged(self):
        """(ids of the whole trial lines, whether a torn last line follows them). Every whole
        line must be JSON: a kill never leaves a broken line in the middle."""
        if not self.log.exists():
            return [], False
        text = self.log.read_text()
        lines = text.split("\n")
        torn = lines.pop() != ""  # the text after the last newline
        if lines:
            header = json.loads(lines[0])
            self.assertEqual(header["tuner"], f"tile/{BUCKET}")
        return [json.loads(l)["config_id"] for l in lines[1:]], torn

    def finish_and_check(self, before_ids, in_flight, resume_env=None):
        """Runs again without injection; checks what it measured against what the log held
        (`before_ids`) and what was in flight. Returns the resumed run."""
        r = self.run_exec(**(resume_env or {}))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, BEST)
        again = self.measured()
        completed = {c for c in before_ids if c not in INVALID}
        self.assertEqual(completed & set(again), set(), "a logged trial was measured again")
        # Everything not completed is measured now: the in-flight one again, the rest for the
        # first time.
        self.assertEqual(sorted(c for c in again if c not in INVALID),
                         sorted(set(VALID) - completed))
        ids, torn = self.logged()
        self.assertFalse(torn)
        valid_logged = [c for c in ids if c not in INVALID]
        self.assertEqual(sorted(valid_logged), sorted(VALID), "one measured trial per config")
        return r

    def kill_at(self, point):
        """Runs with TUNE_FAULT_INJECT=point: the run must die by SIGKILL. Returns (the ids it
        measured, the ids the log holds, whether a torn line follows them)."""
        r = self.run_exec(TUNE_FAULT_INJECT=point)
        self.assertEqual(r.returncode, -signal.SIGKILL, f"{point}: {r.stderr}")
        self.assertEqual(r.stdout, "")
        ran = self.measured()
        ids, torn = self.logged()
        return ran, ids, torn

    def test_killed_at_every_log_write_point(self):
        # (point, trials logged when it dies, candidate in flight, a torn line left)
        cases = [
            ("log-header-before-write", [], None, False),
            ("log-header-after-write", [], None, False),
            ("log-append-before-write", [], ORDER[0], False),
            ("log-append-after-write", ORDER[:1], None, False),
            ("log-append-torn", [], ORDER[0], True),
            ("log-append-before-write:3", ORDER[:2], ORDER[2], False),
            ("log-append-after-write:3", ORDER[:3], None, False),
            ("log-append-torn:3", ORDER[:2], ORDER[2], True),
            ("log-append-after-write:8", ORDER, None, False),
        ]
        for point, held, in_flight, torn in cases:
            with self.subTest(point=point):
                self.setUp()
                ran, ids, left_torn = self.kill_at(point)
                self.assertEqual(ids, held)
                self.assertEqual(left_torn, torn)
                self.assertEqual(ran, held + ([in_flight] if in_flight else []))
                r = self.finish_and_check(ids, in_flight)
                if torn:
                    self.assertIn("removed a torn last line (an interrupted write)", r.stderr)
                print(f"faults: {point}: log held {len(ids)} trials"
                      f"{' and a torn line' if torn else ''}; resumed, measured again: "
                      f"{in_flight or 'nothing'}", file=sys.stderr)

    def test_killed_while_repairing_a_torn_line(self):
        for point in ["log-repair-before-write", "log-repair-after-write"]:
            with self.subTest(point=point):
                self.setUp()
                self.kill_at("log-append-torn:3")
                self.measured()
                ran, ids, torn = self.kill_at(point)
                self.assertEqual(ran, [])  # killed at open, before measuring
                self.assertEqual(ids, ORDER[:2])
                self.assertEqual(torn, point == "log-repair-before-write")
                self.finish_and_check(ids, None)
                print(f"faults: {point}: the torn line was {'still' if torn else 'already'} "
                      "there; resumed cleanly", file=sys.stderr)

    def test_random_sigkills_in_a_loop(self):
        seed = int(os.environ.get("TUNE_TEST_SEED", "20261129"))
        rng = random.Random(seed)
        # How long a whole search takes here (a sanitizer build is slower): kills land within it.
        began = time.monotonic()
        r = subprocess.run(self.args(), env=self.env(OBJ_SLEEP="0.05"), capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        whole = time.monotonic() - began
        kills = 0
        held_at_kill = []
        for round in range(6):
            self.setUp()  # a fresh log each round
            round_kills = 0
            total_measured = 0
            for attempt in range(6):  # killed at a random moment, up to 6 times
                p = subprocess.Popen(self.args(), env=self.env(OBJ_SLEEP="0.05"),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(rng.uniform(0.0, whole))
                killed = p.poll() is None
                if killed:
                    p.send_signal(signal.SIGKILL)
                p.wait()
                ids, torn = self.logged()
                valid_logged = [c for c in ids if c not in INVALID]
                self.assertEqual(len(valid_logged), len(set(valid_logged)),
                                 f"round {round}: a completed trial was logged twice")
                total_measured += len([c for c in self.measured() if c not in INVALID])
                if not killed:
                    self.assertEqual(p.returncode, 0, f"round {round}: not killed, yet failed")
                    break
                round_kills += 1
                held_at_kill.append(len(ids))
            # Then one run to its end.
            r = self.run_exec()
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, BEST)
            total_measured += len([c for c in self.measured() if c not in INVALID])
            ids, torn = self.logged()
            self.assertFalse(torn)
            self.assertEqual(sorted(c for c in ids if c not in INVALID), sorted(VALID))
            # Each kill costs at most the one valid candidate in flight.
            self.assertLessEqual(total_measured, len(VALID) + round_kills)
            kills += round_kills
        self.assertGreaterEqual(kills, 6)
        print(f"faults: {kills} random SIGKILLs in 6 searches (seed {seed}; a whole search "
              f"takes {whole:.2f} s here), killed with {sorted(held_at_kill)} trials logged: no "
              "completed trial measured again, at most one in-flight candidate lost per kill",
              file=sys.stderr)

if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
