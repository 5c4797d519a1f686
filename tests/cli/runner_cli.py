#!/usr/bin/env python3
"""CPU tests of `tuner run` and its supervisor (tuner/core/search/supervisor.hpp), with a fake worker.

The manifest names a real runner executable (tune_runner plus a stand-in harness,
tests/data/runner/fake_harness.cpp; its path comes in TUNE_TEST_RUNNER), the measuring worker.
TUNE_RUNNER_WORKER_CMD replaces it with tests/data/runner/fake_worker.py, which speaks the worker
protocol and crashes, hangs and answers nonsense on chosen candidates; the supervisor in `tuner
run` never creates a CUDA context. The kernel cache is written by the test: BLOCK=32 has no
entry ("not compiled"), BLOCK=2048 a failed one, every other candidate an ok entry with a dummy
cubin. Both buckets see the same fake; the tests look at the bucket 'n<=4096'.
"""
import hashlib
import json
import os
import re
import shlex
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
DATA = DATA_ROOT / "runner"
RUNNER = os.environ.get("TUNE_TEST_RUNNER", "")
WORKER_CMD = f"{sys.executable} {DATA / 'fake_worker.py'}"
BUCKET = "n<=4096"
ENC = "n%3C%3D4096"
FAILED_REASON = "function 'saxpy' uses 300 registers, over the limit of 255 on sm_90"


def block(b):
    return f"BLOCK={b}"


class RunnerCli(unittest.TestCase):
    def setUp(self):
        self.assertTrue(RUNNER and os.path.exists(RUNNER), f"no runner at '{RUNNER}'")
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        (self.dir / "src").mkdir(parents=True)
        self.build = self.dir / "build"
        self.cache = self.build / "tune" / "cache"
        self.logdir = self.build / "tune" / "saxpy"
        self.cache.mkdir(parents=True)
        self.logdir.mkdir(parents=True)
        shutil.copy(DATA / "saxpy.cu", self.dir / "src" / "saxpy.cu")
        shutil.copy(DATA / "saxpy.toml", self.dir / "src" / "saxpy.toml")
        self.record = self.dir / "src" / "saxpy.json"
        self.side = self.dir / "side.txt"
        self.log = self.logdir / "sm_90" / f"{ENC}.trials.jsonl"
        self.result = self.logdir / "sm_90" / f"{ENC}.result.json"
        self.manifest = clitest.manifest(
            self.logdir / "manifest.json", self.dir / "src", "saxpy", build=self.build,
            sources=[self.dir / "src" / "saxpy.cu"], space=self.dir / "src" / "saxpy.toml",
            records={"sm_90": self.record}, cache_dir=self.cache, log_dir=self.logdir,
            runner=RUNNER)
        for b in [64, 128, 256, 512, 1024, 2048]:
            self.write_entry(b, ok=b != 2048)

    def key(self, b):
        r = subprocess.run([TUNER, "key", "--manifest", str(self.manifest), "--config", block(b)],
                           capture_output=True, text=True, check=True)
        return r.stdout.strip().split()[-1]

    def keyed_argv(self, b):
        """The compile command as BLOCK=b's key has it: a store's entry must carry it."""
        r = subprocess.run([TUNER, "key", "--manifest", str(self.manifest), "--config", block(b),
                            "--json"], capture_output=True, text=True, check=True)
        [argv] = [i["value"] for i in json.loads(r.stdout)["inputs"] if i["name"] == "argv"]
        return shlex.split(argv)

    def write_entry(self, b, ok):
        key = self.key(b)
        cubin = b"fake cubin " + str(b).encode()
        if ok:
            (self.cache / f"{key}.cubin").write_bytes(cubin)
        (self.cache / f"{key}.json").write_text(json.dumps({
            "schema_version": 1, "key": key, "key_schema": "k1",
            "status": "ok" if ok else "over_limit", "reason": "" if ok else FAILED_REASON,
            "compiler_output": "", "resources": None,
            "cubin_sha256": hashlib.sha256(cubin).hexdigest() if ok else "",
            "arch": "sm_90", "config_id": block(b), "argv": [], "dependencies": []}))

    def env(self, **extra):
        settings = {"TUNE_RUNNER_WORKER_CMD": WORKER_CMD, "FAKE_SIDE": self.side}
        settings.update(extra)
        return clitest.env(**settings)

    def tune(self, *extra, env=None, timeout=120):
        """`tuner run` of every bucket, one second per candidate."""
        cmd = [TUNER, "run", "--manifest", str(self.manifest), "--timeout", "1", *extra]
        return subprocess.run(cmd, capture_output=True, text=True, env=env or self.env(),
                              timeout=timeout)

    def trials(self):
        lines = self.log.read_text().splitlines()
        return [json.loads(l) for l in lines[1:]]

    def side_lines(self, bucket=None):
        """The fake's notes; with `bucket`, only those of workers started for that bucket."""
        lines = self.side.read_text().splitlines() if self.side.exists() else []
        if bucket is None:
            return lines
        out, current, start = [], None, None
        for l in lines:
            if l.startswith("start "):
                start = l
            elif l.startswith("bucket "):
                current = l.split(" ", 1)[1]
                if current == bucket:
                    out.append(start)
            elif current == bucket:
                out.append(l)
        return out

    def test_failures_become_invalid_trials_and_the_search_goes_on(self):
        r = self.tune()
        self.assertEqual(r.returncode, 0, r.stderr)
        trials = self.trials()
        by_id = {t["config_id"]: t for t in trials if t["phase"] != "runoff"}
        self.assertEqual([t["config_id"] for t in trials if t["phase"] != "runoff"],
                         [block(b) for b in [64, 128, 256, 512, 1024, 32, 2048]])
        self.assertEqual(by_id[block(64)]["phase"], "required")
        self.assertEqual(by_id[block(64)]["state"], "measured")
        self.assertEqual(by_id[block(64)]["device"], "Fake GPU")
        self.assertEqual(by_id[block(128)]["reason"],
                         "worker died: killed by signal SIGSEGV: fake: segfault in tile loop")
        self.assertEqual(by_id[block(256)]["reason"], "timed out after 1 s")
        self.assertEqual(by_id[block(1024)]["reason"],
                         "unreadable answer from the worker: 'nonsense'")
        self.assertEqual(by_id[block(32)]["reason"],
                         f"not compiled: run the warm target (cmake --build {self.build} "
                         "--target warm.saxpy)")
        self.assertEqual(by_id[block(2048)]["reason"], FAILED_REASON)
        self.assertEqual(by_id[block(512)]["state"], "measured")
        self.assertEqual(by_id[block(512)]["cache_key"], self.key(512))
        # Every candidate that killed its worker was followed by a fresh one: the first, one
        # after the crash, one after the hang, one after the nonsense. The two cached failures
        # never reached a worker.
        side = self.side_lines(BUCKET)
        self.assertEqual(len([l for l in side if l.startswith("start ")]), 4, side)
        self.assertEqual([l for l in side if l.startswith("measure ")],
                         [f"measure {block(b)}" for b in [64, 128, 256, 512, 1024]])
        # The runoff: the two best; the required config (BLOCK=64) defends against the leader.
        self.assertEqual([l for l in side if l.startswith("runoff ")],
                         [f"runoff {block(64)} {block(512)}"])
        runoff = [t for t in trials if t["phase"] == "runoff"]
        self.assertEqual([t["config_id"] for t in runoff], [block(64), block(512)])
        self.assertEqual(runoff[0]["runoff"]["outcome"], "challenger_wins")
        self.assertEqual(runoff[0]["runoff"]["pairs"], 20)
        result = json.loads(self.result.read_text())
        self.assertEqual(result["best"]["config_id"], block(512))
        self.assertEqual(result["best"]["median_ms"], 1000.0 / 512)
        self.assertEqual(result["best"]["cache_key"], self.key(512))
        self.assertEqual(result["runoff"]["winner"], block(512))
        self.assertEqual(result["device"], "Fake GPU")
        self.assertEqual(result["driver"], "999.1")
        self.assertEqual(result["invalid"], 5)
        # The incumbent as measured, for the speed-up: in the result and the record's entry.
        self.assertEqual(result["incumbent"], {"config_id": block(64), "median_ms": 1000.0 / 64})
        entry = [e for e in json.loads(self.record.read_text())["entries"]
                 if e["bucket"] == BUCKET][0]
        self.assertEqual(entry["incumbent"], {"config_id": block(64), "median_ms": 1000.0 / 64})
        self.assertIn(f"{BUCKET}: winner BLOCK=512 at 1.9531 ms, by runoff challenger_wins "
                      "(20 pairs, -87.50%, p=9.54e-07); speed-up 8.00x over the incumbent "
                      "BLOCK=64 (15.6250 ms)\n", r.stderr)
        self.assertIn(f"{BUCKET}: winner BLOCK=512 at 1.9531 ms, by runoff challenger_wins "
                      "(20 pairs, ", r.stderr)

        self.assertIn(f"{BUCKET}: note: worker pid ", r.stderr)

        # Resumed: no measured trial is measured again; the invalid ones are retried, and the
        # runoff runs again, the record's winner (BLOCK=512 now) defending.
        self.side.unlink()
        r = self.tune()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([l for l in self.side_lines(BUCKET) if l.startswith("measure ")],
                         [f"measure {block(b)}" for b in [128, 256, 1024]])
        self.assertEqual([l for l in self.side_lines(BUCKET) if l.startswith("runoff ")],
                         [f"runoff {block(512)} {block(64)}"])

    def test_committed_winner_is_the_soft_incumbent(self):
        r = subprocess.run([TUNER, "record", "set", "--manifest", str(self.manifest), "--bucket",
                            BUCKET, "--config", block(512)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.tune()
        self.assertEqual(r.returncode, 0, r.stderr)
        # Measured right after the required config, then the grid; it defends the runoff
        # (before the required config).
        self.assertEqual([l for l in self.side_lines(BUCKET) if l.startswith("measure ")],
                         [f"measure {block(b)}" for b in [64, 512, 128, 256, 1024]])
        self.assertEqual([l for l in self.side_lines(BUCKET) if l.startswith("runoff ")],
                         [f"runoff {block(512)} {block(64)}"])
        result = json.loads(self.result.read_text())
        self.assertEqual(result["best"]["config_id"], block(512))
        self.assertEqual(result["runoff"]["outcome"], "incumbent_wins")

    def test_committed_winner_that_left_the_space_is_dropped(self):
        r = subprocess.run([TUNER, "record", "set", "--manifest", str(self.manifest), "--bucket",
                            BUCKET, "--config", block(512)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        space = self.dir / "src" / "saxpy.toml"
        space.write_text(space.read_text().replace("512, ", ""))
        r = self.tune()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{BUCKET}: warning: committed winner BLOCK=512 is no longer in the space; "
                      "dropped\n", r.stderr)
        self.assertEqual(json.loads(self.result.read_text())["best"]["config_id"], block(64))

    def test_worker_that_cannot_start_is_a_broken_environment(self):
        env = self.env(TUNE_RUNNER_WORKER_CMD=f"{sys.executable} -c 'import sys; "
                       "sys.stderr.write(\"no CUDA device: none found\\n\"); sys.exit(3)'")
        r = self.tune(env=env)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(r.stderr.splitlines()[-1],
                         "tuner run: error: the measuring worker did not start: exit status 3: "
                         "no CUDA device: none found")
        self.assertFalse(self.result.exists())
        self.assertEqual(self.trials(), [])

    def test_worker_of_another_protocol_is_refused_with_the_fix(self):
        r = self.tune(env=self.env(FAKE_PROTOCOL="2"))
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(r.stderr.splitlines()[-1],
                         "tuner run: error: the measuring worker did not start: it speaks worker "
                         "protocol 2 and this tuner speaks 1: rebuild it (cmake --build "
                         f"{self.build} --target saxpy.runner)")
        self.assertEqual(self.trials(), [])

    def test_the_runner_is_only_the_worker(self):
        r = subprocess.run([RUNNER, "--manifest", str(self.manifest), "--bucket", BUCKET,
                            "--arch", "sm_90", "--log", str(self.log)],
                           capture_output=True, text=True, env=self.env())
        self.assertEqual((r.returncode, r.stderr),
                         (2, "runner: error: the runner is the measuring worker only; tune a "
                             f"kernel with `tuner run --manifest {self.manifest}`\n"))

    @unittest.skipIf(os.path.exists("/dev/nvidiactl"), "an NVIDIA driver is running here")
    def test_real_worker_without_a_driver_is_a_broken_environment(self):
        env = self.env()
        del env["TUNE_RUNNER_WORKER_CMD"]
        r = self.tune(env=env)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(r.stderr.splitlines()[-1],
                         "tuner run: error: the measuring worker did not start: no CUDA driver: "
                         "libcuda.so.1 not found (is the NVIDIA driver installed?)")

    def test_sigint_kills_the_worker_and_leaves_the_log_consistent(self):
        cmd = [TUNER, "run", "--manifest", str(self.manifest), "--timeout", "60"]
        env = self.env()
        p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env)
        # Wait until the worker is inside BLOCK=256 (it hangs there).
        deadline = time.time() + 60
        while time.time() < deadline and f"measure {block(256)}" not in self.side_lines():
            time.sleep(0.05)
        self.assertIn(f"measure {block(256)}", self.side_lines())
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 130, err)
        self.assertEqual(err.splitlines()[-2:], [
            f"{BUCKET}: interrupted; the log keeps every finished trial",
            "tuner run: interrupted; no record written (run again to resume)"])
        self.assertFalse(self.result.exists())
        self.assertEqual([t["config_id"] for t in self.trials()], [block(64), block(128)])
        workers = [int(l.split()[1]) for l in self.side_lines() if l.startswith("start ")]
        for pid in workers:
            with self.assertRaises(ProcessLookupError):
                os.kill(pid, 0)

    def test_tuner_run_writes_a_verified_record(self):
        r = subprocess.run([TUNER, "run", "--manifest", str(self.manifest), "--timeout", "1"],
                           capture_output=True, text=True, env=self.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), [
            "saxpy: wrote saxpy.json (sm_90), verified",
            "  large: BLOCK=512 1.9531 ms (runoff challenger_wins); speed-up 8.00x over the "
            "incumbent BLOCK=64 (15.6250 ms)",
            "  n<=4096: BLOCK=512 1.9531 ms (runoff challenger_wins); speed-up 8.00x over the "
            "incumbent BLOCK=64 (15.6250 ms)",
        ])
        self.assertTrue((self.logdir / "sm_90" / "large.trials.jsonl").exists())
        record = json.loads(self.record.read_text())
        self.assertEqual(record["context"]["device"], "Fake GPU")
        self.assertEqual(record["context"]["driver"], "999.1")
        entry = record["entries"][1]
        self.assertEqual(entry["bucket"], BUCKET)
        self.assertEqual(entry["config"]["id"], block(512))
        self.assertEqual(entry["source"], "measured")
        self.assertEqual(entry["samples"], 50)
        self.assertEqual(entry["cache_key"], {"schema": "k1", "digest": self.key(512)})
        self.assertEqual(entry["runoff"]["winner"], block(512))
        v = subprocess.run([TUNER, "verify", "--manifest", str(self.manifest)],
                           capture_output=True, text=True)
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)

    def test_tuner_run_and_tune_json(self):
        # Issue 21: --json gives CI a summary on stdout; the lines for people go to stderr.
        r = self.tuner_run("--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("saxpy: wrote saxpy.json (sm_90), verified", r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["kernel"], "saxpy")
        [rec] = doc["records"]
        self.assertEqual((rec["arch"], rec["record"], rec["state"], rec["errors"]),
                         ("sm_90", str(self.record), "fresh", []))
        self.assertEqual([(e["bucket"], e["config"], e["source"], e["samples"])
                          for e in rec["entries"]],
                         [("large", block(512), "measured", 50), (BUCKET, block(512), "measured",
                                                                  50)])
        r = subprocess.run([TUNER, "tune", "--manifest", str(self.manifest), "--json"],
                           capture_output=True, text=True, env=self.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("record saxpy.json is fresh (sm_90), nothing to do", r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual((doc["kernel"], doc["tuned"]), ("saxpy", []))
        self.assertEqual(doc["records"][0]["state"], "fresh")

    def test_a_long_bucket_label_and_a_latin1_death_still_make_a_record(self):
        # Issue 21: a 243-character label made `File name too long` after the other buckets
        # were measured; a non-UTF-8 byte in a dying worker's stderr aborted the run.
        long = "L" * 243
        space = self.dir / "src" / "saxpy.toml"
        space.write_text(space.read_text().replace('name = "large"', f'name = "{long}"'))
        r = subprocess.run([TUNER, "run", "--manifest", str(self.manifest), "--timeout", "1"],
                           capture_output=True, text=True, errors="replace",
                           env=self.env(FAKE_LATIN1="1"))
        self.assertEqual(r.returncode, 0, r.stderr)
        names = sorted(p.name for p in (self.logdir / "sm_90").iterdir())
        long_names = [n for n in names if n.startswith("LLLL")]
        self.assertEqual(len(long_names), 2, names)
        for n in long_names:
            self.assertLessEqual(len(n), 200)
            self.assertRegex(n, r"^L+~[0-9a-f]{16}\.(trials\.jsonl|result\.json)$")
        record = json.loads(self.record.read_text())
        self.assertEqual(sorted(e["bucket"] for e in record["entries"]), sorted([BUCKET, long]))
        crashed = [t for t in self.trials() if t["config_id"] == block(128)]
        self.assertTrue(crashed and "tile loop \ufffd" in crashed[0]["reason"], crashed)
        # A second run resumes from the same bounded files.
        again = subprocess.run([TUNER, "run", "--manifest", str(self.manifest), "--timeout", "1"],
                               capture_output=True, text=True, errors="replace",
                               env=self.env(FAKE_LATIN1="1"))
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(sorted(p.name for p in (self.logdir / "sm_90").iterdir()), names)

    def test_tuner_run_writes_no_record_without_a_winner_for_every_bucket(self):
        self.record.write_text("old record\n")
        r = subprocess.run([TUNER, "run", "--manifest", str(self.manifest), "--timeout", "1"],
                           capture_output=True, text=True,
                           env=self.env(FAKE_BROKEN_BUCKET="large"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stderr.splitlines()[-1],
                         "tuner run: error: no record written for saxpy (sm_90): no winner for "
                         "bucket 'large'; the old record is left as it was")
        self.assertEqual(self.record.read_text(), "old record\n")

    def test_a_harness_failure_stops_the_bucket_at_the_first_candidate(self):
        # No incumbent: without the harness-failure stop, every candidate of the bucket would be
        # measured into the same invalid trial.
        space = self.dir / "src" / "saxpy.toml"
        space.write_text(space.read_text().replace("require = [{ BLOCK = 64 }]\n", ""))
        self.record.write_text("old record\n")
        r = self.tune(env=self.env(FAKE_HARNESS_TYPO="large"))
        self.assertEqual(r.returncode, 1, r.stderr)
        measured = [l for l in self.side_lines("large") if l.startswith("measure ")]
        self.assertEqual(measured, [f"measure {block(64)}"])
        self.assertEqual(
            [l for l in r.stderr.splitlines() if l.startswith("large: error")],
            ["large: error: the harness fails the same way for every candidate, so the bucket "
             "stops at the first: saxpy_harness.cpp:12: config 'BLOCK=64' has no value 'BLOK' "
             "(it has: BLOCK); fix the harness and run again"])
        # Nothing is logged for the bucket, so the fixed harness measures it all next time; the
        # other bucket was tuned as usual, and no record is written without 'large'.
        large_log = self.logdir / "sm_90" / "large.trials.jsonl"
        logged = large_log.read_text().splitlines()[1:] if large_log.exists() else []
        self.assertEqual(logged, [])
        self.assertIn(f"measure {block(512)}", self.side_lines(BUCKET))
        self.assertEqual(self.record.read_text(), "old record\n")
        result = json.loads((self.logdir / "sm_90" / "large.result.json").read_text())
        self.assertIn("has no value 'BLOK'", result["harness_failure"])
        self.assertIsNone(result["best"])

    def test_tuner_run_without_a_runner(self):
        m = json.loads(self.manifest.read_text())
        m["runner"] = None
        self.manifest.write_text(json.dumps(m))
        r = subprocess.run([TUNER, "run", "--manifest", str(self.manifest)],
                           capture_output=True, text=True, env=self.env())
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, "tuner run: error: kernel 'saxpy' has no harness: add HARNESS "
                                   "to tune_add_kernel to tune it\n")

    # -- crashes, interruption, concurrency (issue 10) -------------------------------------

    def tuner_run(self, *extra, env=None, manifest=None):
        return subprocess.run([TUNER, "run", "--manifest", str(manifest or self.manifest),
                               "--timeout", "1", *extra],
                              capture_output=True, text=True, env=env or self.env(), timeout=120)

    def logged_measured(self):
        """Config ids with a measured (search or required) trial in either bucket's log."""
        out = []
        for log in sorted((self.logdir / "sm_90").glob("*.trials.jsonl")):
            for line in log.read_text().splitlines()[1:]:
                try:
                    t = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a torn last line
                if t["state"] == "measured" and t["phase"] != "runoff":
                    out.append(f"{log.name.split('.')[0]} {t['config_id']}")
        return out

    def measures(self):
        """'<bucket> <config id>' for each measure request since the last call."""
        out, bucket = [], None
        for l in self.side_lines():
            if l.startswith("start "):
                continue
            if l.startswith("bucket "):
                bucket = l.split(" ", 1)[1]
            elif l.startswith("measure "):
                out.append(f"{ENC if bucket == BUCKET else bucket} {l.split(' ', 1)[1]}")
        if self.side.exists():
            self.side.unlink()
        return out

    def test_tuner_run_killed_at_every_write_point_keeps_the_old_record_or_the_new_one(self):
        r = subprocess.run([TUNER, "record", "set", "--manifest", str(self.manifest), "--bucket",
                            BUCKET, "--config", block(64)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        old = self.record.read_bytes()
        # `tuner run` writes the logs, the results and the record; the kill takes its worker too.
        points = ["log-header-before-write", "log-header-after-write",
                  "log-append-before-write:2", "log-append-torn:2", "log-append-after-write:2",
                  "result-save-before-write", "result-save-before-rename",
                  "result-save-after-rename", "record-save-before-write",
                  "record-save-before-rename", "record-save-after-rename"]
        new = None
        for point in points:
            with self.subTest(point=point):
                shutil.rmtree(self.logdir / "sm_90", ignore_errors=True)
                self.record.write_bytes(old)
                self.measures()
                r = self.tuner_run(env=self.env(FAKE_TAME=1, TUNE_FAULT_INJECT=point))
                self.assertEqual(r.returncode, -signal.SIGKILL, r.stderr)
                for pid in [int(l.split()[1]) for l in self.side_lines() if l.startswith("start ")]:
                    deadline = time.time() + 10  # the worker dies with its parent
                    while time.time() < deadline and os.path.exists(f"/proc/{pid}"):
                        time.sleep(0.02)
                    self.assertFalse(os.path.exists(f"/proc/{pid}"), f"worker {pid} outlived")
                after_kill = self.record.read_bytes()
                measured_before = self.logged_measured()
                in_flight = set(self.measures()) - set(measured_before)
                self.assertLessEqual(len(in_flight), 1, in_flight)

                r = self.tuner_run(env=self.env(FAKE_TAME=1))
                self.assertEqual(r.returncode, 0, r.stderr)
                again = self.measures()
                self.assertEqual(set(again) & set(measured_before), set(),
                                 "a logged trial was measured again")
                final = self.record.read_bytes()
                if new is None:
                    new = final
                self.assertEqual(final, new)  # every path ends in the same record
                if point == "record-save-after-rename":
                    self.assertEqual(after_kill, new)
                else:
                    self.assertEqual(after_kill, old)
                # No temporary or lock file is left beside the record.
                self.assertEqual(sorted(p.name for p in self.record.parent.iterdir()),
                                 ["saxpy.cu", "saxpy.json", "saxpy.toml"])
                v = subprocess.run([TUNER, "verify", "--manifest", str(self.manifest)],
                                   capture_output=True, text=True)
                self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
                print(f"faults: tuner run killed at {point}: record "
                      f"{'new' if after_kill == new else 'old'}; resumed measuring "
                      f"{sorted(in_flight) or 'nothing'} again", file=sys.stderr)

    def second_build_tree(self):
        """A manifest of another build tree of the same source tree (its own logs and cache,
        the same record)."""
        build2 = self.dir / "build2"
        shutil.copytree(self.cache, build2 / "tune" / "cache")
        m = json.loads(self.manifest.read_text())
        m.update(build_dir=str(build2), cache_dir=str(build2 / "tune" / "cache"),
                 log_dir=str(build2 / "tune" / "saxpy"))
        manifest2 = build2 / "tune" / "saxpy" / "manifest.json"
        manifest2.parent.mkdir(parents=True, exist_ok=True)
        manifest2.write_text(json.dumps(m))
        return manifest2

    def test_two_build_trees_cannot_both_write_the_record(self):
        manifest2 = self.second_build_tree()
        first = subprocess.Popen([TUNER, "run", "--manifest", str(self.manifest), "--timeout",
                                  "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, env=self.env(FAKE_TAME=1, FAKE_SLEEP="0.2"))
        lock = Path(str(self.record) + ".lock")
        deadline = time.time() + 30
        while time.time() < deadline and not (lock.exists() and lock.read_text()):
            time.sleep(0.02)
        holder = f"record is locked by pid {first.pid} on host '{socket.gethostname()}'"
        second = self.tuner_run(manifest=manifest2, env=self.env(FAKE_TAME=1))
        self.assertEqual(second.returncode, 2, second.stderr)
        self.assertEqual(second.stderr,
                         f"tuner run: error: saxpy.json (sm_90): {holder}: another tune of "
                         "'saxpy' is writing it (from this or another build tree); wait for it "
                         "to finish or stop it, then run again\n")
        pin = subprocess.run([TUNER, "record", "set", "--manifest", str(manifest2), "--bucket",
                              BUCKET, "--config", block(64)], capture_output=True, text=True)
        self.assertEqual(pin.returncode, 2, pin.stderr)
        self.assertEqual(pin.stderr, f"tuner record set: error: saxpy.json: {holder}: wait for "
                                     "the tune that writes it\n")
        out, err = first.communicate(timeout=120)
        self.assertEqual(first.returncode, 0, err)
        self.assertFalse(lock.exists())
        written = self.record.read_bytes()
        for m in (self.manifest, manifest2):  # one source tree: the record is fresh for both
            v = subprocess.run([TUNER, "verify", "--manifest", str(m)], capture_output=True,
                               text=True)
            self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
        # Once the first is done, the other tree may tune: its record is whole too.
        r = self.tuner_run(manifest=manifest2, env=self.env(FAKE_TAME=1))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(self.record.read_text())["entries"],
                         json.loads(written)["entries"])

    def test_a_stale_log_becomes_the_prior_of_a_warm_retune(self):
        # Issue 33: a re-tune after a source change starts from what the old log measured.
        env = self.env(FAKE_TAME=1)
        r = self.tune(env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with self.log.open("a") as f:
            f.write("not a trial\n")  # the prior's warning names it, once as a warning
        old = self.log.read_text()
        bad_line = len(old.splitlines())
        s = subprocess.run([TUNER, "status", "--manifest", str(self.manifest)],
                           capture_output=True, text=True)
        self.assertNotIn("prior", s.stdout)  # fresh: nothing to say
        src = self.dir / "src" / "saxpy.cu"
        src.write_text(src.read_text() + "\n// a small change\n")
        for b in [64, 128, 256, 512, 1024, 2048]:  # the warm of the new source
            self.write_entry(b, ok=b != 2048)
        s = subprocess.run([TUNER, "status", "--manifest", str(self.manifest), "--json"],
                           capture_output=True, text=True)
        self.assertEqual(json.loads(s.stdout)["kernels"][0]["prior"],
                         {"buckets": 2, "of": 2, "configs": 10})
        s = subprocess.run([TUNER, "status", "--manifest", str(self.manifest)],
                           capture_output=True, text=True)
        self.assertIn("; a prior for 2 of 2 buckets (10 configs measured before)", s.stdout)
        r = self.tune(env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        prior = self.logdir / "sm_90" / f"{ENC}.prior.jsonl"
        self.assertEqual(prior.read_text(), old)
        self.assertIn(f"{BUCKET}: warning: {self.log} was measured for another build ("
                      "'saxpy.cu' changed; ", r.stderr)
        self.assertIn(f"kept as the prior {prior}", r.stderr)
        # `large: warning: <log>:2: warning: ...` said it twice.
        self.assertIn(f"{BUCKET}: {prior}:{bad_line}: warning: skipped a line that is not valid "
                      "JSON\n", r.stderr)
        self.assertNotIn("warning: " + str(prior), r.stderr)
        header = json.loads(self.log.read_text().splitlines()[0])
        self.assertEqual(header["prior"], {"from": str(prior), "tuner": f"saxpy/{BUCKET}",
                                           "configs": 5, "top_k": 5})
        trials = [t for t in self.trials() if t["phase"] != "runoff"]
        # The required config, the committed winner, the rest of the prior's best by rank,
        # then the strategy.
        self.assertEqual([(t["config_id"], t.get("prior_rank")) for t in trials],
                         [(block(64), None), (block(1024), None), (block(512), 2),
                          (block(256), 3), (block(128), 4), (block(32), None),
                          (block(2048), None)])
        result = json.loads(self.result.read_text())
        self.assertEqual(result["prior"]["from"], str(prior))
        entry = [e for e in json.loads(self.record.read_text())["entries"]
                 if e["bucket"] == BUCKET][0]
        self.assertEqual(entry["prior"]["top_k"], 5)
        self.assertEqual(entry["config"]["id"], block(1024))
        rep = subprocess.run([TUNER, "report", str(self.log), "--json"], capture_output=True,
                             text=True)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        self.assertEqual(json.loads(rep.stdout)["logs"][0]["prior_guided"], 3)

        # A corrupt prior never fails the tune: it is not used, with a warning.
        self.log.unlink()
        prior.write_text("{not a log\n")
        r = self.tune(env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{BUCKET}: warning: prior not used: {prior}:1: error: not a trial log",
                      r.stderr)
        self.assertNotIn("prior", json.loads(self.log.read_text().splitlines()[0]))

    def test_a_header_edit_makes_the_log_the_prior_with_nothing_old_left_in_the_new_log(self):
        # Issue 43: the log's identity covers every file the key reads, not only the source: an
        # edit of an included header sets the log aside as the prior, as a source edit does, and
        # `tuner status` (the same judgement) names the header.
        src = self.dir / "src" / "saxpy.cu"
        header = self.dir / "src" / "tile.cuh"
        header.write_text("#pragma once\nconstexpr int tile = 1;\n")
        src.write_text('#include "tile.cuh"\n' + src.read_text())
        for b in [64, 128, 256, 512, 1024, 2048]:
            self.write_entry(b, ok=b != 2048)
        env = self.env(FAKE_TAME=1)
        r = self.tune(env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        old = self.log.read_text()
        old_keys = {t["cache_key"] for t in self.trials() if t.get("cache_key")}
        self.assertTrue(old_keys)
        self.assertIn('"identity":"i1:', old.splitlines()[0])
        header.write_text("#pragma once\nconstexpr int tile = 2;\n")
        for b in [64, 128, 256, 512, 1024, 2048]:  # the warm of the edited header
            self.write_entry(b, ok=b != 2048)
        s = subprocess.run([TUNER, "status", "--manifest", str(self.manifest)],
                           capture_output=True, text=True)
        self.assertIn("stale", s.stdout)
        self.assertIn("changed: 'tile.cuh' changed", s.stdout)
        self.assertIn("; a prior for 2 of 2 buckets (10 configs measured before)", s.stdout)
        v = subprocess.run([TUNER, "verify", "--manifest", str(self.manifest)],
                           capture_output=True, text=True)
        self.assertEqual(v.returncode, 1, v.stderr)
        self.assertIn("note: the cache key of entries 'large', 'n<=4096' changed: 'tile.cuh' "
                      "changed\n", v.stderr)
        r = self.tune(env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        prior = self.logdir / "sm_90" / f"{ENC}.prior.jsonl"
        self.assertEqual(prior.read_text(), old)
        self.assertIn(f"{BUCKET}: warning: {self.log} was measured for another build ('tile.cuh' "
                      f"changed; ", r.stderr)
        new_keys = {t["cache_key"] for t in self.trials() if t.get("cache_key")}
        self.assertTrue(new_keys)
        self.assertFalse(new_keys & old_keys)  # nothing of the old version in the new log
        self.assertEqual(json.loads(self.log.read_text().splitlines()[0])["prior"]["from"],
                         str(prior))
        self.assertEqual(json.loads(self.result.read_text())["prior"]["from"], str(prior))
        # The same build again: the log is resumed, not set aside, and status offers no prior
        # from it (the prior file is still there).
        s = subprocess.run([TUNER, "status", "--manifest", str(self.manifest)],
                           capture_output=True, text=True)
        self.assertIn("fresh", s.stdout)

    def test_a_binary_is_measured_once_and_its_twins_share_the_trial(self):
        # Issue 43: BLOCK=512 compiled to the very bytes of BLOCK=1024 (a param that never
        # reached the kernel): one measurement, the other config's trial marked same_binary.
        key512 = self.key(512)
        twin = b"fake cubin 1024"
        (self.cache / f"{key512}.cubin").write_bytes(twin)
        entry = json.loads((self.cache / f"{key512}.json").read_text())
        entry["cubin_sha256"] = hashlib.sha256(twin).hexdigest()
        (self.cache / f"{key512}.json").write_text(json.dumps(entry))
        r = self.tune(env=self.env(FAKE_TAME=1))
        self.assertEqual(r.returncode, 0, r.stderr)
        measured = [l for l in self.side_lines(BUCKET) if l.startswith("measure ")]
        self.assertEqual(sum(l in ("measure BLOCK=512", "measure BLOCK=1024") for l in measured),
                         1, measured)
        shared = [t for t in self.trials() if t.get("same_binary")]
        self.assertEqual(len(shared), 1, self.trials())
        first = "BLOCK=1024" if shared[0]["config_id"] == "BLOCK=512" else "BLOCK=512"
        self.assertEqual(shared[0]["same_binary"], first)
        self.assertNotIn("times", shared[0])
        self.assertIn("(the same binary as ", r.stderr)
        self.assertIn("1 trials shared the measurement of a byte-identical binary", r.stderr)
        # The twin is never the winner nor a finalist: the runoff is between distinct binaries.
        for t in self.trials():
            if t["phase"] == "runoff":
                self.assertNotEqual({t["runoff"]["incumbent"], t["runoff"]["challenger"]},
                                    {"BLOCK=512", "BLOCK=1024"})

    def test_if_stale_measures_nothing_when_another_tree_wrote_the_record_meanwhile(self):
        manifest2 = self.second_build_tree()
        r = self.tuner_run(env=self.env(FAKE_TAME=1))
        self.assertEqual(r.returncode, 0, r.stderr)
        written = self.record.read_bytes()
        self.side.unlink()
        # What `tuner tune` of the other tree runs after its warm: the record is fresh now.
        r = self.tuner_run("--if-stale", manifest=manifest2, env=self.env(FAKE_TAME=1))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "saxpy: record saxpy.json is fresh (sm_90): another tune "
                                   "wrote it meanwhile; nothing to do\n")
        self.assertEqual(self.side_lines(), [])  # no worker started, nothing measured
        self.assertEqual(self.record.read_bytes(), written)
        # `tuner tune` of the other tree (its warm stood in for by `true`) passes the flag: with
        # a stale record it tunes, with a fresh one it stops before warming.
        self.record.write_text("old record\n")
        tune = [TUNER, "tune", "--manifest", str(manifest2), "--cmake", shutil.which("true")]
        r = subprocess.run(tune, capture_output=True, text=True, env=self.env(FAKE_TAME=1))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("saxpy: wrote saxpy.json (sm_90), verified", r.stdout)
        r = subprocess.run(tune, capture_output=True, text=True, env=self.env(FAKE_TAME=1))
        self.assertEqual((r.returncode, r.stdout),
                         (0, "tune.saxpy: record saxpy.json is fresh (sm_90), nothing to do\n"))
        # A stale record is tuned as without the flag.
        self.record.write_text("old record\n")
        r = self.tuner_run("--if-stale", manifest=manifest2, env=self.env(FAKE_TAME=1))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("saxpy: wrote saxpy.json (sm_90), verified", r.stdout)

    def fake_cmake(self):
        """A stand-in for cmake that notes each call (the warm target `tuner tune` builds)."""
        script = self.dir / "cmake.sh"
        script.write_text(f"#!/bin/sh\necho \"$@\" >> {self.dir / 'cmake_calls.txt'}\n")
        script.chmod(0o755)
        return script

    def state_of(self, b):
        [t] = [t for t in self.trials() if t["config_id"] == block(b) and t["phase"] != "runoff"]
        return t["state"], t.get("reason", "")

    def test_a_total_budget_is_split_across_the_stale_buckets_of_the_build(self):
        # Issue 46 item 11: `tuner tune --build-dir` (the tune target) counts the stale buckets
        # of every kernel, then gives each an equal share of what is left as it starts.
        self.record.write_text("old record\n")
        (self.build / "tune" / "kernels.list").write_text("saxpy\n")
        tune = [TUNER, "tune", "--build-dir", str(self.build), "--cmake", shutil.which("true")]
        r = subprocess.run([*tune, "--total-budget", "100"], capture_output=True, text=True,
                           env=self.env(FAKE_TAME=1), timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("tune: a total budget of 100 s for 2 stale buckets: each gets an equal "
                      "share of what is left when it starts, at most its own budget_s\n",
                      r.stderr)
        shares = re.findall(r"tuner run: saxpy sm_90 bucket '([^']+)': (\d+) s of the total "
                            r"budget \((\d+) s left for (\d) buckets?\)", r.stderr)
        self.assertEqual([(b, n) for b, _, _, n in shares], [(BUCKET, "2"), ("large", "1")])
        first, second = (int(s) for _, s, _, _ in shares)
        self.assertIn(first, (49, 50))      # half of 100 s
        self.assertGreater(second, first)   # what the first left goes to the second
        self.assertIn("saxpy: wrote saxpy.json (sm_90), verified", r.stdout)
        # Fresh now: nothing to split, nothing to do.
        r = subprocess.run(tune, capture_output=True, text=True,
                           env=self.env(FAKE_TAME=1, TUNE_BUDGET_S=100), timeout=300)
        self.assertEqual((r.returncode, r.stdout),
                         (0, "tune.saxpy: record saxpy.json is fresh (sm_90), nothing to do\n"))
        self.assertNotIn("total budget", r.stderr)
        # TUNE_BUDGET_S in the environment is the default of --total-budget.
        self.record.write_text("old record\n")
        r = subprocess.run([TUNER, "tune", "--manifest", str(self.manifest), "--cmake",
                            shutil.which("true")], capture_output=True, text=True,
                           env=self.env(FAKE_TAME=1, TUNE_BUDGET_S=60), timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("tune: a total budget of 60 s for 2 stale buckets", r.stderr)
        r = subprocess.run([*tune, "--total-budget", "0"], capture_output=True, text=True,
                           env=self.env())
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--total-budget: must be a number of seconds in (0, 604800]", r.stderr)
        r = subprocess.run([*tune, "--manifest", str(self.manifest)], capture_output=True,
                           text=True, env=self.env())
        self.assertEqual(r.returncode, 2, r.stderr)

    @unittest.skipIf(os.path.exists("/dev/nvidiactl"), "an NVIDIA driver is running here")
    def test_tune_without_a_gpu_says_what_is_stale_and_how_to_pin_it(self):
        # Issue 46 item 13: the tune target on a host without a GPU prints the notes the record
        # test prints (what changed, the re-tune, the pins), and ends with the one command that
        # pins every stale record again.
        r = self.tuner_run(env=self.env(FAKE_TAME=1))
        self.assertEqual(r.returncode, 0, r.stderr)
        # Stale, with the candidates' cache keys (and so the cached cubins) as they were.
        record = json.loads(self.record.read_text())
        record["source_hash"] = "0" * 64
        self.record.write_text(json.dumps(record))
        env = self.env()
        del env["TUNE_RUNNER_WORKER_CMD"]
        r = subprocess.run([TUNER, "tune", "--manifest", str(self.manifest), "--cmake",
                            shutil.which("true"), "--warm-first"], capture_output=True,
                           text=True, env=env, timeout=300)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("tune.saxpy: record saxpy.json is stale (sm_90):\n", r.stderr)
        self.assertIn(f"saxpy.json: note: re-tune with: cmake --build {self.build} --target "
                      "tune.saxpy\n", r.stderr)
        self.assertIn("saxpy.json: note: or, without a GPU, pin a config instead: tuner record "
                      f"set --manifest {self.manifest} --bucket large --config BLOCK=1024\n",
                      r.stderr)
        self.assertEqual(r.stderr.splitlines()[-1],
                         "tune.saxpy: note: to make the stale record fresh without a GPU, pin it "
                         "again to the configs it records: tuner record repin --manifest "
                         f"{self.manifest}")

    def test_tuner_tune_compiles_ahead_unless_asked_to_warm_first(self):
        # BLOCK=32 has no cache entry. On one device `tuner tune` compiles it (nvcc, the
        # manifest's) beside the measurements instead of building the warm target.
        self.record.write_text("old record\n")
        tune = [TUNER, "tune", "--manifest", str(self.manifest), "--cmake", str(self.fake_cmake())]
        r = subprocess.run(tune, capture_output=True, text=True, env=self.env(FAKE_TAME=1),
                           timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("tune.saxpy: compiling 'saxpy' for sm_90 ahead of the measuring worker",
                      r.stderr)
        self.assertFalse((self.dir / "cmake_calls.txt").exists())
        self.assertEqual(self.state_of(32), ("measured", ""))
        entry = json.loads((self.cache / f"{self.key(32)}.json").read_text())
        self.assertEqual((entry["status"], entry["config_id"]), ("ok", block(32)))
        # --warm-first builds warm.saxpy.sm_90 (here a cmake that compiles nothing) and then
        # measures only what the cache holds.
        self.record.write_text("old record\n")
        for f in [self.cache / f"{self.key(32)}.json", self.cache / f"{self.key(32)}.cubin"]:
            f.unlink()
        shutil.rmtree(self.logdir / "sm_90")
        r = subprocess.run([*tune, "--warm-first"], capture_output=True, text=True,
                           env=self.env(FAKE_TAME=1), timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("tune.saxpy: warming 'saxpy' for sm_90", r.stderr)
        self.assertEqual((self.dir / "cmake_calls.txt").read_text().split()[-2:],
                         ["--target", "warm.saxpy.sm_90"])
        state, error = self.state_of(32)
        self.assertEqual(state, "invalid")
        self.assertIn("not compiled: run the warm target", error)
        # Through a compiler launcher the compiles may run elsewhere: the warm gets as many jobs
        # as --compile-jobs asks (Ninja's default would be this host's cores).
        self.record.write_text("old record\n")
        shutil.rmtree(self.logdir / "sm_90")
        r = subprocess.run([*tune, "--warm-first", "--compile-jobs", "48"], capture_output=True,
                           text=True, env=self.env(FAKE_TAME=1, TUNE_COMPILER_LAUNCHER="srun"),
                           timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((self.dir / "cmake_calls.txt").read_text().splitlines()[-1].split()[-4:],
                         ["--target", "warm.saxpy.sm_90", "--parallel", "48"])

    def test_compile_ahead_takes_what_the_remote_store_has_instead_of_compiling(self):
        # The store (a directory) has BLOCK=32's entry, built elsewhere: compile-ahead fetches
        # it as warm would, and compiles nothing.
        key = self.key(32)
        cubin = b"cubin from the store"
        sha = hashlib.sha256(cubin).hexdigest()
        store = self.dir / "store"
        (store / "cas").mkdir(parents=True)
        (store / "ac").mkdir()
        (store / "cas" / sha).write_bytes(cubin)
        (store / "ac" / key).write_text(json.dumps({
            "schema_version": 1, "key": key, "key_schema": "k1", "status": "ok", "reason": "",
            "compiler_output": "", "resources": None, "cubin_sha256": sha, "arch": "sm_90",
            "config_id": block(32), "argv": self.keyed_argv(32), "dependencies": []}))
        r = self.tuner_run("--compile-ahead", "--compile-jobs", "2", "--remote", str(store),
                           env=self.env(FAKE_TAME=1))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((self.cache / f"{key}.cubin").read_bytes(), cubin)
        self.assertEqual(self.state_of(32), ("measured", ""))
        compile_log = self.build / "tune" / "compile.log"
        self.assertFalse(compile_log.exists() and key in compile_log.read_text(),
                         compile_log.read_text() if compile_log.exists() else "")

    def test_compile_ahead_logs_the_proposals_the_kernel_cache_had(self):
        # setUp put every candidate but BLOCK=32 in the kernel cache: their search trials say
        # they needed no compile (the search's window is for those that do); BLOCK=32's, and the
        # required BLOCK=64's (measured before the search, not a proposal), do not.
        r = self.tuner_run("--compile-ahead", "--compile-jobs", "2", env=self.env(FAKE_TAME=1))
        self.assertEqual(r.returncode, 0, r.stderr)
        cached = {t["config_id"]: t.get("cached", False) for t in self.trials()
                  if t["phase"] != "runoff"}
        self.assertEqual(cached, {block(b): b not in (32, 64)
                                  for b in [64, 128, 256, 512, 1024, 32, 2048]})
        # The tune's summary counts them.
        self.assertRegex(r.stderr, re.escape(BUCKET) + r": strategy waits .*; compiles: 1 "
                         r"candidates, .*; 5 proposals needed no compile \(in the kernel cache\)\n")

    def test_sigterm_to_tuner_run_alone_stops_the_runner_and_leaves_the_record(self):
        self.record.write_text("old record\n")
        p = subprocess.Popen([TUNER, "run", "--manifest", str(self.manifest), "--timeout", "60"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=self.env(FAKE_HANG_ALL=1))
        deadline = time.time() + 30
        while time.time() < deadline and not any(l.startswith("measure ")
                                                 for l in self.side_lines()):
            time.sleep(0.02)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 143, err)
        self.assertEqual(out, "")
        self.assertEqual(err.splitlines()[-2:], [
            f"{BUCKET}: interrupted; the log keeps every finished trial",
            "tuner run: interrupted; no record written (run again to resume)"])
        self.assertEqual(self.record.read_text(), "old record\n")
        self.assertFalse(Path(str(self.record) + ".lock").exists())
        self.assertEqual(self.trials(), [])  # the candidate in flight was abandoned
        for pid in [int(l.split()[1]) for l in self.side_lines() if l.startswith("start ")]:
            with self.assertRaises(ProcessLookupError):
                os.kill(pid, 0)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
