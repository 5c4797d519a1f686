#!/usr/bin/env python3
"""CLI tests for the streaming readers of `tuner show`, `tuner report` and `tuner export`.

A log of 80,000 trials over 400 configs (about 40 MB) is shown, reported and exported; each
command's peak resident memory must stay far below the log's size (the readers before held every
trial as JSON: 10 to 20 times the log). The outputs themselves are checked by the goldens of
records_cli.py, report_cli.py and export_cli.py. A log over the size limit is refused by all
three before a byte is read (a sparse file: nothing is written). `tuner status` reads the same
log as a re-tune's prior in bounded memory too.
"""
import json
import os
import shutil
import subprocess
import sys
import unittest

import clitest

TUNER, DATA_ROOT, WORK = clitest.paths()

TRIALS = 80000
CONFIGS = 400
LIMIT_KB = 64 * 1024  # the log is about 40 MB; holding it as JSON took 350 to 830 MB


def write_log(path):
    header = {"log_schema": 1, "tuner": "gemm/stream", "space_hash": "ab" * 32, "arch": "sm_90",
              "source_hash": "cd" * 32, "toolchain": "nvcc 13.0.88, ptxas 13.0.88"}
    with open(path, "w") as out:
        out.write(json.dumps(header) + "\n")
        for n in range(TRIALS):
            c = n % CONFIGS
            t = {"config_id": f"BM={c % 20},BN={c // 20}", "params": {"BM": c % 20, "BN": c // 20},
                 "cache_key": f"{c:064x}", "phase": "required" if n < 4 else "search",
                 "device": "NVIDIA H200", "time": f"2026-12-01T10:{n // 3600 % 60:02d}:{n % 60:02d}Z",
                 "warnings": [], "batched": False}
            if n % 20 == 7:
                t.update(state="invalid", reason="timed out after 10 s")
            else:
                med = 0.1 + c / 1000 + (n % 7) / 10000
                t.update(state="measured", median_ms=med, min_ms=med * 0.99, reps=100,
                         times={"fixture_ms": 0.5, "load_ms": 2, "setup_ms": 3, "warmup_ms": 1,
                                "timed_ms": 10, "wall_ms": 50, "compile_wait_ms": 0,
                                "strategy_ms": 0.1})
            out.write(json.dumps(t) + "\n")


# Runs argv[1:] and prints its peak resident KB. A fresh interpreter of a few MB: a child forked
# from this test (which parsed the exports) would count the test's pages as its own.
MEASURE = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
sys.stderr.write(f"{usage.ru_maxrss}\\n")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def peak_kb(args, cwd):
    """(exit status, stdout, peak resident KB) of the tuner with `args`."""
    r = subprocess.run([sys.executable, "-c", MEASURE, TUNER, *map(str, args)], cwd=cwd,
                       capture_output=True, env=clitest.env(), timeout=120)
    return r.returncode, r.stdout, int(r.stderr.decode().strip().splitlines()[-1])


class StreamCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = WORK / "stream"
        shutil.rmtree(cls.dir, ignore_errors=True)
        cls.dir.mkdir(parents=True)
        cls.log = cls.dir / "big.trials.jsonl"
        write_log(cls.log)

    def check(self, *args):
        code, out, kb = peak_kb(args, self.dir)
        self.assertEqual(code, 0, args)
        self.assertLess(kb, LIMIT_KB, f"{args}: {kb} KB peak for a log of "
                                      f"{self.log.stat().st_size // 1024} KB")
        return out

    def test_show_streams(self):
        out = self.check("show", self.log)
        self.assertIn(f"of {TRIALS} trials measured".encode(), out)
        # rows, table heads, summary (the best, its speed-up over the incumbent, the costs)
        self.assertEqual(out.count(b"\n"), TRIALS + 1 + 8 + 1 + 4)

    def test_show_json_streams(self):
        out = json.loads(self.check("show", "--json", self.log))
        self.assertEqual(len(out["trials"]), TRIALS)

    def test_report_streams(self):
        out = json.loads(self.check("report", self.log, "--json", "-o", self.dir / "r.html"))
        self.assertEqual(out["trials"], TRIALS)
        self.assertEqual(out["logs"][0]["best"]["id"], "BM=0,BN=0")
        page = (self.dir / "r.html").read_text()
        self.assertEqual(page.count("<circle class=\"search\""), TRIALS - 4 - TRIALS // 20)

    def test_export_streams(self):
        for args in ([], ["-o", self.dir / "t4.json"]):
            out = self.check("export", "--format", "t4", self.log, *args)
            doc = json.loads(out if not args else (self.dir / "t4.json").read_bytes())
            self.assertEqual(len(doc["results"]), TRIALS)

    def test_status_reads_a_prior_in_bounded_memory(self):
        # A stale (here: missing) record's line counts the configs its re-tune's prior measured;
        # the prior is read a line at a time, each config's best kept (it held every trial).
        root = self.dir / "project"
        (root / "kernels").mkdir(parents=True, exist_ok=True)
        (root / "spaces").mkdir(exist_ok=True)
        (root / "kernels" / "gemm.cu").write_text('extern "C" __global__ void gemm() {}\n')
        (root / "spaces" / "gemm.toml").write_text(
            'schema = 1\nkernel = "gemm"\n\n[params]\nBM = [0, 1]\nBN = [0, 1]\n\n'
            '[[buckets]]\nname = "stream"\nshape = {}\n')
        logs = root / "build" / "tune" / "gemm"
        (logs / "sm_90").mkdir(parents=True, exist_ok=True)
        shutil.copy(self.log, logs / "sm_90" / "stream.prior.jsonl")
        manifest = clitest.manifest(logs / "manifest.json", root, "gemm", log_dir=logs)
        kernel = json.loads(self.check("status", "--manifest", manifest, "--json"))["kernels"][0]
        self.assertEqual(kernel["state"], "missing")
        # Every 20th config was only ever invalid (n % 20 == 7).
        self.assertEqual(kernel["prior"], {"buckets": 1, "of": 1, "configs": CONFIGS - 20})

    def test_a_log_over_the_limit_is_refused_before_reading(self):
        big = self.dir / "huge.trials.jsonl"
        with open(big, "wb") as f:
            f.truncate((1 << 30) + 1)  # sparse: nothing written
        message = (f"{big}: error: the file is {(1 << 30) + 1} bytes, more than the 1 GiB a "
                   "trial log may hold\n")
        for args in (["show", big], ["report", big, "-o", self.dir / "huge.html"],
                     ["export", "--format", "t4", big]):
            r = subprocess.run([TUNER, *map(str, args)], capture_output=True, text=True,
                               env=clitest.env(), timeout=60)
            self.assertEqual((r.returncode, r.stderr), (2, message), args)
        self.assertFalse((self.dir / "huge.html").exists())


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
