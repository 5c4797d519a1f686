#!/usr/bin/env python3
"""CLI tests for `tuner exec`: the search engine driven through the command line.

The objective is tests/data/exec/objective.sh, a POSIX sh script that reads TUNE_PARAM_BM and
TUNE_PARAM_BN and reports a made-up time whose minimum is at BM=64,BN=128; three configs fail
on purpose (a crash, an error exit, an unreadable answer). Every run of it appends a line to a
side file, so the tests count exactly what was measured. The space, tests/data/exec/tile.toml,
has 8 configs after pruning and one incumbent, BM=64,BN=64.
"""
import json
import shutil
import signal
import socket
import subprocess
import sys
import time
import unittest
from pathlib import Path

import clitest

TUNER, DATA_ROOT, WORK = clitest.paths()
DATA = DATA_ROOT / "exec"
SPACE = DATA / "tile.toml"
OTHER = DATA / "other.toml"
OBJECTIVE = DATA / "objective.sh"
BUCKET = "m<=512"

INCUMBENT = "BM=64,BN=64"
# The grid in enumeration order (BM varies slowest), BM=128,BN=128 pruned.
GRID = ["BM=32,BN=32", "BM=32,BN=64", "BM=32,BN=128", "BM=64,BN=32", "BM=64,BN=64",
        "BM=64,BN=128", "BM=128,BN=32", "BM=128,BN=64"]
INVALID = {
    "BM=32,BN=32": "killed by signal SIGSEGV: segfault in tile loop",
    "BM=32,BN=128": "unreadable result 'fast!'",
    "BM=128,BN=32": "exit status 3: out of shared memory",
}
FIRST_RUN = [INCUMBENT] + [c for c in GRID if c != INCUMBENT]


class ExecCli(unittest.TestCase):
    def setUp(self):
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.log = self.dir / "tune" / "tile" / "m%3C%3D512.trials.jsonl"
        self.side = self.dir / "side.txt"

    def env(self, **extra):
        return clitest.env(OBJ_SIDE=self.side, **extra)

    def args(self, *options, space=SPACE, bucket=BUCKET, log=None, command=(OBJECTIVE,)):
        return [TUNER, "exec", str(space), "--bucket", bucket, "--log", str(log or self.log),
                *map(str, options), "--", *map(str, command)]

    def run_exec(self, *options, env=None, timeout=60, **kw):
        return subprocess.run(self.args(*options, **kw), capture_output=True, text=True,
                              env=self.env(**(env or {})), timeout=timeout)

    def measured(self):
        """Config ids the objective ran for since the last call, in order."""
        if not self.side.exists():
            return []
        ids = [line.split(" ")[0] for line in self.side.read_text().splitlines()]
        self.side.unlink()
        return ids

    def log_trials(self, path=None):
        lines = Path(path or self.log).read_text().splitlines()
        return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]

    def summary(self, visited, resumed, invalid, budget=False):
        return ("tuner exec: {} of 8 configs ({} resumed, {} invalid){}\n"
                .format(visited, resumed, invalid, "; the budget ran out" if budget else ""))

    def test_incumbent_first_then_the_grid_and_the_true_best_wins(self):
        r = self.run_exec()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "best: BM=64,BN=128 (1 ms)\n")
        self.assertEqual(r.stderr, self.summary(8, 0, 3))
        # Every config ran once, with its environment, the incumbent first.
        lines = self.side.read_text().splitlines()
        self.assertEqual(lines, [f"{c} m<=512 M=512" for c in FIRST_RUN])

        header, trials = self.log_trials()
        self.assertEqual(header, {
            "log_schema": 1, "tuner": "tile/m<=512", "space_hash": header["space_hash"],
            "arch": "", "source_hash": None, "toolchain": None, "objective": "minimize"})
        self.assertRegex(header["space_hash"], "^[0-9a-f]{64}$")
        self.assertEqual([t["config_id"] for t in trials], FIRST_RUN)
        self.assertEqual([t["phase"] for t in trials], ["required"] + ["search"] * 7)
        by_id = {t["config_id"]: t for t in trials}
        # A failing config is logged invalid with its reason, and the search went on.
        for cid, reason in INVALID.items():
            self.assertEqual(by_id[cid]["state"], "invalid")
            self.assertEqual(by_id[cid]["reason"], reason)
        # Both answer forms: a plain number, and JSON with min_ms and reps.
        self.assertEqual((by_id["BM=32,BN=64"]["median_ms"], by_id["BM=32,BN=64"]["min_ms"],
                          by_id["BM=32,BN=64"]["reps"]), (3.0, 3.0, 1))
        self.assertEqual((by_id["BM=64,BN=128"]["median_ms"], by_id["BM=64,BN=128"]["min_ms"],
                          by_id["BM=64,BN=128"]["reps"]), (1.0, 0.5, 7))
        self.assertRegex(by_id["BM=64,BN=128"]["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

    def test_shapes_of_the_chosen_bucket_reach_the_command(self):
        r = self.run_exec("--budget", 0, bucket="big")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.side.read_text(), f"{INCUMBENT} big M=4096\n")

    def test_second_run_measures_nothing_new_but_retries_invalid_ones(self):
        self.assertEqual(self.run_exec().returncode, 0)
        self.assertEqual(self.measured(), FIRST_RUN)
        r = self.run_exec()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "best: BM=64,BN=128 (1 ms)\n")
        self.assertEqual(r.stderr, self.summary(8, 5, 3))
        self.assertEqual(self.measured(), [c for c in GRID if c in INVALID])

    def test_json_output(self):
        r = self.run_exec("--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["best"], {"id": "BM=64,BN=128", "params": {"BM": 64, "BN": 128}})
        _, trials = self.log_trials()
        self.assertEqual(doc["trials"], trials)

    def test_maximize_takes_the_highest_score_and_keeps_its_own_log(self):
        r = self.run_exec("--maximize", env={"OBJ_SCORE": 1})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "best: BM=128,BN=64 (score 4)\n")
        self.assertEqual(self.log_trials()[0]["objective"], "maximize")
        before = self.log.read_bytes()
        r = self.run_exec()
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr,
                         f"{self.log}:1: error: log belongs to another search: objective "
                         "'maximize' (log) vs 'minimize' (this run); it was left untouched: move "
                         "it away or use another log path\n")
        self.assertEqual(self.log.read_bytes(), before)

    def test_log_of_another_space_is_refused_and_left_byte_identical(self):
        other_log = self.dir / "other.jsonl"
        r = self.run_exec("--budget", 0, space=OTHER, log=other_log)
        # No incumbent and no budget: nothing measured, but the log is headed.
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, "tuner exec: 0 of 4 configs (0 resumed, 0 invalid); the "
                                   "budget ran out\ntuner exec: nothing valid: no config was "
                                   "measured\n")
        other_hash = self.log_trials(other_log)[0]["space_hash"]
        before = other_log.read_bytes()
        self.measured()

        r = self.run_exec("--arch", "sm_90", log=other_log)
        self.assertEqual(r.returncode, 2)
        tile_hash = self.log_trials(self.run_and_log())[0]["space_hash"]
        self.assertEqual(r.stderr,
                         f"{other_log}:1: error: log belongs to another search: space_hash "
                         f"'{other_hash}' (log) vs '{tile_hash}' (this run), arch '' (log) vs "
                         "'sm_90' (this run); it was left untouched: move it away or use another "
                         "log path\n")
        self.assertEqual(r.stdout, "")
        self.assertEqual(other_log.read_bytes(), before)
        self.assertEqual(self.measured(), [INCUMBENT])  # only run_and_log's run measured

    def run_and_log(self):
        """Runs the tile space with a zero budget into a fresh log; returns the log's path."""
        path = self.dir / "probe.jsonl"
        r = self.run_exec("--budget", 0, "--arch", "sm_90", log=path)
        self.assertEqual(r.returncode, 0, r.stderr)
        return path

    def test_torn_last_line_and_garbage_are_survived(self):
        self.assertEqual(self.run_exec().returncode, 0)
        self.measured()
        text = self.log.read_text()
        lines = text.splitlines(keepends=True)
        # Garbage in the middle, and the last trial (BM=128,BN=64) torn mid-write.
        torn = lines[:3] + ["not json\n"] + lines[3:-1] + [lines[-1][:40]]
        self.log.write_text("".join(torn))
        r = self.run_exec()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "best: BM=64,BN=128 (1 ms)\n")
        self.assertEqual(r.stderr,
                         f"{self.log}:4: warning: skipped a line that is not valid JSON\n"
                         f"{self.log}:10: warning: removed a torn last line (an interrupted "
                         "write)\n" + self.summary(8, 4, 3))
        self.assertEqual(self.measured(), ["BM=32,BN=32", "BM=32,BN=128", "BM=128,BN=32",
                                           "BM=128,BN=64"])
        for line in self.log.read_text().splitlines()[4:]:
            json.loads(line)
        self.assertTrue(self.log.read_text().endswith("\n"))

    def test_zero_budget_measures_only_the_incumbents(self):
        r = self.run_exec("--budget", 0)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "best: BM=64,BN=64 (2 ms)\n")
        self.assertEqual(r.stderr, self.summary(1, 0, 0, budget=True))
        self.assertEqual(self.measured(), [INCUMBENT])

    def test_failing_incumbent_stops_the_run_before_the_search(self):
        r = self.run_exec(env={"OBJ_FAIL": INCUMBENT})
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr,
                         self.summary(1, 0, 1) +
                         "tuner exec: error: incumbent BM=64,BN=64 failed: exit status 3: forced "
                         "failure; cannot guarantee the winner beat it\n")
        self.assertEqual(self.measured(), [INCUMBENT])

    def test_nothing_valid_exits_1(self):
        r = self.run_exec("--json", env={"OBJ_FAIL": "all"})
        self.assertEqual(r.returncode, 1)
        self.assertEqual(json.loads(r.stdout)["best"], None)
        self.assertTrue(r.stderr.endswith(
            "tuner exec: error: incumbent BM=64,BN=64 failed: exit status 3: forced failure; "
            "cannot guarantee the winner beat it\n"), r.stderr)
        r = self.run_exec(space=OTHER, log=self.dir / "other.jsonl", env={"OBJ_FAIL": "all"})
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr, "tuner exec: 4 of 4 configs (0 resumed, 4 invalid)\n"
                                   "tuner exec: nothing valid: every measured config was invalid\n")

    def test_hung_command_costs_about_its_timeout(self):
        start = time.monotonic()
        r = self.run_exec("--timeout", 1, env={"OBJ_HANG": "BM=32,BN=64"})
        elapsed = time.monotonic() - start
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreaterEqual(elapsed, 1.0)
        self.assertLess(elapsed, 8.0)
        by_id = {t["config_id"]: t for t in self.log_trials()[1]}
        self.assertEqual(by_id["BM=32,BN=64"]["reason"], "timed out after 1 s")
        self.assertEqual(r.stdout, "best: BM=64,BN=128 (1 ms)\n")

    def test_run_killed_with_sigkill_resumes_without_measuring_a_completed_trial_twice(self):
        proc = subprocess.Popen(self.args(), env=self.env(OBJ_SLEEP="0.3"),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.log.exists() and len(self.log.read_text().splitlines()) >= 4:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        _, done = self.log_trials()
        completed = {t["config_id"] for t in done if t["state"] == "measured"}
        self.assertGreaterEqual(len(done), 3)
        self.assertLess(len(done), 8)
        self.measured()

        r = self.run_exec()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "best: BM=64,BN=128 (1 ms)\n")
        again = self.measured()
        self.assertEqual(completed & set(again), set())
        _, trials = self.log_trials()
        measured = [t["config_id"] for t in trials if t["state"] == "measured"]
        self.assertEqual(sorted(measured), sorted(set(GRID) - set(INVALID)))

    def test_second_writer_is_refused_naming_the_holder_and_sigterm_stops_cleanly(self):
        first = subprocess.Popen(self.args(), env=self.env(OBJ_SLEEP="0.3"),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (self.side.exists() and self.log.exists()):
            time.sleep(0.02)
        r = self.run_exec()
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, f"{self.log}: error: log is locked by pid {first.pid} on host "
                                   f"'{socket.gethostname()}'\n")
        first.send_signal(signal.SIGTERM)
        out, err = first.communicate(timeout=30)
        self.assertEqual(first.returncode, 143)
        self.assertEqual(out, "")
        self.assertEqual(err, "tuner exec: interrupted by SIGTERM; the log keeps every completed "
                              "trial: run again to resume\n")
        text = self.log.read_text()
        self.assertTrue(text.endswith("\n"))
        for line in text.splitlines():
            json.loads(line)
        self.assertFalse(Path(str(self.log) + ".lock").exists())

    def test_bad_usage_and_input_exit_2(self):
        r = self.run_exec(bucket="huge")
        self.assertEqual((r.returncode, r.stderr),
                         (2, f"{SPACE}: error: no bucket 'huge' in the space of 'tile' (it has "
                             "'m<=512', 'big')\n"))
        r = self.run_exec(bucket="m<512")
        self.assertEqual(r.stderr, f"{SPACE}: error: no bucket 'm<512' in the space of 'tile', did "
                                   "you mean 'm<=512'? (it has 'm<=512', 'big')\n")
        r = self.run_exec(command=["no-such-command-for-tune"])
        self.assertEqual((r.returncode, r.stderr),
                         (2, "tuner exec: error: cannot run 'no-such-command-for-tune': no such "
                             "command on PATH\n"))
        r = self.run_exec(space=DATA / "missing.toml")
        self.assertEqual(r.returncode, 2)
        self.assertTrue(r.stderr.startswith(f"{DATA / 'missing.toml'}"), r.stderr)
        r = subprocess.run([TUNER, "exec", str(SPACE), "--bucket", BUCKET, "--log",
                            str(self.log)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        r = self.run_exec("--budget", -1)
        self.assertEqual(r.returncode, 2)
        self.assertFalse(self.log.exists())
        self.assertFalse(self.side.exists())


if __name__ == "__main__":
    WORK.mkdir(parents=True, exist_ok=True)
    unittest.main(argv=[sys.argv[0]])
