#!/usr/bin/env python3
"""CLI tests for `tuner export --format t4`: trial logs as Kernel Tuner's T4 results JSON.

Logs come from `tuner exec` runs of tests/data/exec/objective.sh (see exec_cli.py: 8 configs, 3
invalid, best BM=64,BN=128; one more timed out here on purpose) and from the fixture
tests/data/records/gemm.trials.jsonl (a runoff trial, an unreadable line). The document's
validity against the schema that kernel_tuner ships is checked by export_schema_cli.py.
"""
import json
import shutil
import subprocess
import sys
import unittest

import clitest

TUNER, DATA_ROOT, WORK = clitest.paths()
EXEC = DATA_ROOT / "exec"
GEMM_LOG = DATA_ROOT / "records" / "gemm.trials.jsonl"


def exec_log(path, *extra, bucket="m<=512", space=EXEC / "tile.toml", **env):
    """Writes the log of a `tuner exec` run of the objective over `space` to `path`; returns
    `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([TUNER, "exec", str(space), "--bucket", bucket, "--log",
                        str(path), *map(str, extra), "--", str(EXEC / "objective.sh")],
                       capture_output=True, text=True, env=clitest.env(**env), timeout=120)
    assert r.returncode == 0, r.stderr
    return path


class ExportCli(unittest.TestCase):
    def setUp(self):
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)

    def export(self, *args):
        return subprocess.run([TUNER, "export", *map(str, args)], capture_output=True, text=True,
                              cwd=self.dir, env=clitest.env(), timeout=60)

    def test_an_exec_log_maps_every_trial(self):
        log = exec_log(self.dir / "tile.trials.jsonl", "--timeout", 1, OBJ_HANG="BM=64,BN=32")
        trials = [json.loads(line) for line in log.read_text().splitlines()[1:]]
        r = self.export("--format", "t4", log)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        doc = json.loads(r.stdout)
        self.assertEqual(doc["schema_version"], "1.0.0")
        header = json.loads(log.read_text().splitlines()[0])
        self.assertEqual(doc["metadata"]["timeunit"], "milliseconds")
        self.assertEqual(doc["metadata"]["tuner"], "tile/m<=512")
        self.assertEqual(doc["metadata"]["space_hash"], header["space_hash"])
        self.assertEqual(doc["metadata"]["runoff_trials_left_out"], 0)
        results = doc["results"]
        self.assertEqual(len(results), len(trials))
        for t, res in zip(trials, results):
            self.assertEqual(res["configuration"], t["params"])
            self.assertEqual(res["timestamp"], t["time"])
            self.assertEqual(res["objectives"], ["time"])
            self.assertEqual(res["times"], {"runtimes": []})
        by_id = {t["config_id"]: res for t, res in zip(trials, results)}
        best = by_id["BM=64,BN=128"]
        self.assertEqual((best["invalidity"], best["correctness"]), ("correct", 1))
        self.assertEqual(best["measurements"][:3], [
            {"name": "time", "value": 1.0, "unit": "ms"},
            {"name": "time_min", "value": 0.5, "unit": "ms"},
            {"name": "reps", "value": 7, "unit": ""}])
        self.assertEqual(by_id["BM=64,BN=32"]["invalidity"], "timeout")
        self.assertEqual(by_id["BM=64,BN=32"]["measurements"][0],
                         {"name": "error", "value": "timed out after 1 s", "unit": ""})
        for cid in ("BM=32,BN=32", "BM=32,BN=128", "BM=128,BN=32"):  # a crash, nonsense, exit 3
            self.assertEqual(by_id[cid]["invalidity"], "runtime", cid)

    def test_the_fixture_leaves_the_runoff_out_and_warns_of_the_bad_line(self):
        out = self.dir / "out" / "gemm.t4.json"
        out.parent.mkdir()
        r = self.export("--format", "t4", "--output", out, GEMM_LOG)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr,
                         f"{GEMM_LOG}:4: warning: skipped a line that is not valid JSON\n"
                         "tuner export: note: left out 1 runoff trial (finalists timed again)\n")
        doc = json.loads(out.read_text())
        self.assertEqual(doc["metadata"]["arch"], "sm_90")
        self.assertEqual(doc["metadata"]["toolchain"], "nvcc 12.8.93, ptxas 12.8.93")
        self.assertEqual(doc["metadata"]["runoff_trials_left_out"], 1)
        self.assertEqual([res["invalidity"] for res in doc["results"]],
                         ["correct", "runtime", "correct"])
        busy = doc["results"][2]["measurements"]
        self.assertIn({"name": "device", "value": "NVIDIA H200", "unit": ""}, busy)
        self.assertIn({"name": "warnings", "value": ["gpu busy: 12% utilisation by another "
                                                    "process"], "unit": ""}, busy)
        self.assertIn({"name": "phase", "value": "required", "unit": ""},
                      doc["results"][0]["measurements"])

    def test_logs_of_one_search_merge_in_order(self):
        a = exec_log(self.dir / "a" / "tile.trials.jsonl")
        b = exec_log(self.dir / "b" / "tile.trials.jsonl", "--budget", 0)
        r = self.export("--format", "t4", a, b)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        results = json.loads(r.stdout)["results"]
        self.assertEqual(len(results), 8 + 1)
        self.assertEqual(results[8]["configuration"], {"BM": 64, "BN": 64})

    def test_logs_of_another_bucket_or_objective_are_refused(self):
        # Relative names, as given, in the message (the export runs in self.dir).
        exec_log(self.dir / "a.trials.jsonl")
        exec_log(self.dir / "big.trials.jsonl", "--budget", 0, bucket="big")
        r = self.export("--format", "t4", "a.trials.jsonl", "big.trials.jsonl")
        self.assertEqual((r.returncode, r.stdout), (2, ""))
        # `tuner exec` logs carry the whole space's hash: only the tuner differs.
        self.assertEqual(r.stderr,
                         "big.trials.jsonl:1: error: cannot merge with 'a.trials.jsonl', a log of "
                         "another search: tuner 'tile/big' (this log) vs 'tile/m<=512' "
                         "('a.trials.jsonl')\n")
        exec_log(self.dir / "score.trials.jsonl", "--maximize", OBJ_SCORE=1)
        r = self.export("--format", "t4", "a.trials.jsonl", "score.trials.jsonl")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr,
                         "score.trials.jsonl:1: error: cannot merge with 'a.trials.jsonl', a log "
                         "of another search: objective 'maximize' (this log) vs 'minimize' "
                         "('a.trials.jsonl')\n")

    def test_logs_of_another_search_strategy_are_refused(self):
        # The same bucket searched at random, as `tuner run` logs it: a kernel's log carries its
        # bucket's pruned space hash, which the strategy does not change, so only the header's
        # `search` tells the two searches apart (an exec log's whole-space hash would differ
        # too). Its trials come in another order, from another sequence of configs.
        a = exec_log(self.dir / "a.trials.jsonl")
        lines = a.read_text().splitlines(keepends=True)
        header = json.loads(lines[0])
        header["search"] = {"seed": 0, "strategy": "random"}
        (self.dir / "random.trials.jsonl").write_text(
            json.dumps(header) + "\n" + "".join(reversed(lines[1:])))
        r = self.export("--format", "t4", "--output", "out.json", "a.trials.jsonl",
                        "random.trials.jsonl")
        self.assertEqual((r.returncode, r.stdout), (2, ""))
        self.assertEqual(r.stderr,
                         "random.trials.jsonl:1: error: cannot merge with 'a.trials.jsonl', a log "
                         "of another search: search '{\"seed\":0,\"strategy\":\"random\"}' "
                         "(this log) vs '{\"strategy\":\"grid\"}' ('a.trials.jsonl')\n")
        self.assertFalse((self.dir / "out.json").exists())
        # Each exports on its own.
        r = self.export("--format", "t4", "random.trials.jsonl")
        self.assertEqual((r.returncode, r.stderr), (0, ""))

    def test_a_maximizing_log_exports_scores(self):
        log = exec_log(self.dir / "score.trials.jsonl", "--maximize", OBJ_SCORE=1)
        r = self.export("--format", "t4", log)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["metadata"]["objective"], "maximize")
        best = doc["results"][-1]
        self.assertEqual(best["configuration"], {"BM": 128, "BN": 64})
        self.assertEqual(best["objectives"], ["score"])
        self.assertEqual(best["measurements"][0], {"name": "score", "value": 4.0, "unit": ""})

    def test_bad_usage_and_bad_files(self):
        r = self.export("--format", "t3", GEMM_LOG)
        self.assertEqual((r.returncode, r.stdout), (2, ""))
        self.assertEqual(r.stderr,
                         "tuner export: error: unknown format 't3' (expected 't4'), did you mean "
                         "'t4'?\n")
        r = self.export(GEMM_LOG)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--format is required", r.stderr)
        r = self.export("--format", "t4", "missing.jsonl")
        self.assertEqual((r.returncode, r.stderr),
                         (2, "tuner export: error: cannot read 'missing.jsonl'\n"))
        (self.dir / "empty.jsonl").write_text("")
        r = self.export("--format", "t4", "empty.jsonl")
        self.assertEqual((r.returncode, r.stderr),
                         (2, "empty.jsonl: error: an empty trial log (no header line)\n"))
        (self.dir / "record.json").write_text('{"schema_version": 1}\n')
        r = self.export("--format", "t4", "record.json")
        self.assertEqual((r.returncode, r.stderr),
                         (2, "record.json:1: error: not a trial log: the header has no integer "
                             "'log_schema'\n"))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
