#!/usr/bin/env python3
"""CLI tests for what `tuner show` and `tuner report` say of a tune's costs (docs/search.md
"Compile cost" and "The pipeline"): each candidate's compile seconds (`compile_s`), the
strategy's own time (`times.strategy_ms`), the search's waits for the compiler
(`times.compile_wait_ms`), a candidate whose compile ran past `[search] compile_timeout_s`, and
why a bucket's runoff was skipped (the record's `runoff` {"outcome": "skipped", "reason"}), in
text and with --json. The log and the record are written here, as a tune writes them."""
import json
import shutil
import subprocess
import sys
import unittest

import clitest

TUNER, DATA_ROOT, WORK = clitest.paths()

KEY = "ab" * 32
TIMEOUT_REASON = ("the compile ran longer than the compile timeout of 60 s ([search] "
                  "compile_timeout_s); raise it to try the candidate again")
SKIPPED_REASON = ("no runoff: the budget is exhausted (0.4 s left, one round of pairs needs "
                  "about 1.2 s); BM=64,BN=128 wins on its sequential median")


def times(wall_ms, timed_ms, strategy_ms=0.0, compile_wait_ms=0.0):
    return {"fixture_ms": 0, "load_ms": 2.0, "setup_ms": 8.0, "warmup_ms": 20.0,
            "timed_ms": timed_ms, "wall_ms": wall_ms, "compile_wait_ms": compile_wait_ms,
            "strategy_ms": strategy_ms}


def trial(config, phase, **fields):
    bm, bn = (int(p.split("=")[1]) for p in config.split(","))
    t = {"config_id": config, "params": {"BM": bm, "BN": bn}, "cache_key": KEY, "phase": phase,
         "device": "NVIDIA H200", "time": "2026-12-02T10:00:00Z", "warnings": []}
    t.update(fields)
    return t


# A bucket's log: the incumbent (compiled in 2.5 s), a search candidate that the search waited
# 3.4 s for and whose proposal took the strategy 1.2 s (compiled in 40 s), and one whose compile
# was stopped at the 60 s timeout (its cache entry's status timed_out, its compile_s the timeout).
HEADER = {"log_schema": 1, "tuner": "gemm/m<=512", "space_hash": "cd" * 32, "arch": "sm_90",
          "source_hash": "ef" * 32, "toolchain": "nvcc 13.0.88, ptxas 13.0.88",
          "objective": "minimize", "search": {"strategy": "bayes", "seed": 1}}
TRIALS = [
    trial("BM=64,BN=64", "required", state="measured", median_ms=0.25, min_ms=0.24, reps=100,
          compile_s=2.5, times=times(400.0, 100.0)),
    trial("BM=64,BN=128", "search", state="measured", median_ms=0.125, min_ms=0.12, reps=200,
          compile_s=40.0, times=times(3800.0, 300.0, strategy_ms=1200.0, compile_wait_ms=3400.0)),
    trial("BM=128,BN=128", "search", state="invalid", reason=TIMEOUT_REASON, compile_s=60.0),
]
COSTS_LINE = ("strategy waits 1.2 s, compiler waits 3.4 s; compiles: 3 candidates, "
              "102.5 s of compiler time (longest 60.0 s)")


def record(runoff):
    entry = {"bucket": "m<=512", "cache_key": {"digest": KEY, "schema": "k1"},
             "config": {"id": "BM=64,BN=128", "params": {"BM": 64, "BN": 128}},
             "median_ms": 0.125, "pruned_space_hash": "6981f722580a1404", "runoff": runoff,
             "samples": 200, "source": "measured"}
    return {"arch": "sm_90",
            "context": {"date": "2026-12-02T10:00:05Z", "device": "NVIDIA H200", "driver": None,
                        "host_compiler": "GNU 12.2.0", "machine": "h200"},
            "entries": [entry], "kernel": "gemm", "schema_version": 1, "source_hash": "ef" * 32,
            "space_hash": "cd" * 32, "toolchain": "nvcc 13.0.88, ptxas 13.0.88",
            "tuner_version": "0.1.0"}


class CostsCli(unittest.TestCase):
    def setUp(self):
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.log = self.dir / "m_le_512.trials.jsonl"
        self.log.write_text("".join(json.dumps(x) + "\n" for x in [HEADER, *TRIALS]))

    def tuner(self, *args):
        r = subprocess.run([TUNER, *map(str, args)], capture_output=True, text=True,
                           cwd=self.dir, env=clitest.env())
        self.assertEqual((r.returncode, r.stderr), (0, ""), args)
        return r.stdout

    def test_show_prints_the_costs_of_a_log(self):
        out = self.tuner("show", self.log).splitlines()
        self.assertIn(COSTS_LINE, out)
        self.assertIn("gpu time: 9.5% of 4.2 s in timed reps (2 trials)", out)
        # The timed-out candidate is an invalid trial whose note says why and what to do.
        row = [l for l in out if l.startswith("3 ")]
        self.assertEqual(len(row), 1, out)
        self.assertRegex(row[0], r"^3\s+BM=128,BN=128\s+invalid\s+.*search\s+" +
                         TIMEOUT_REASON.replace("(", r"\(").replace(")", r"\)")
                         .replace("[", r"\[").replace("]", r"\]") + "$")
        self.assertIn("best: BM=64,BN=128 (0.1250 ms), 2 of 3 trials measured", out)

    def test_show_json_keeps_each_candidates_costs(self):
        doc = json.loads(self.tuner("show", self.log, "--json"))
        trials = doc["trials"]
        self.assertEqual([t.get("compile_s") for t in trials], [2.5, 40.0, 60.0])
        self.assertEqual([t.get("times", {}).get("strategy_ms") for t in trials],
                         [0.0, 1200.0, None])
        self.assertEqual([t.get("times", {}).get("compile_wait_ms") for t in trials],
                         [0.0, 3400.0, None])
        self.assertEqual((trials[2]["state"], trials[2]["reason"]), ("invalid", TIMEOUT_REASON))

    def test_report_prints_the_costs_on_the_page_and_in_json(self):
        page_path = self.dir / "page.html"
        self.tuner("report", self.log, "-o", page_path)
        page = page_path.read_text()
        self.assertIn(COSTS_LINE, page)
        # The invalid trials grouped by reason: the timeout, with its config.
        self.assertIn('<td class="reason">' + TIMEOUT_REASON.replace("'", "&#39;") + "</td>"
                      "<td>1</td>", page)
        doc = json.loads(self.tuner("report", self.log, "--json"))
        self.assertEqual(len(doc["logs"]), 1)
        summary = doc["logs"][0]
        self.assertEqual((summary["measured"], summary["invalid"]), (2, 1))
        costs = summary["costs"]
        self.assertEqual(costs["timed_trials"], 2)
        self.assertAlmostEqual(costs["wall_s"], 4.2)
        self.assertAlmostEqual(costs["timed_s"], 0.4)
        self.assertAlmostEqual(costs["strategy_s"], 1.2)
        self.assertAlmostEqual(costs["compile_wait_s"], 3.4)
        self.assertEqual(costs["compiled"], 3)
        self.assertAlmostEqual(costs["compile_s"], 102.5)
        self.assertAlmostEqual(costs["longest_compile_s"], 60.0)
        self.assertEqual(costs["cached"], 0)  # every candidate here was compiled

    def test_a_log_without_costs_has_none(self):
        bare = [{k: v for k, v in t.items() if k not in ("compile_s", "times")} for t in TRIALS]
        self.log.write_text("".join(json.dumps(x) + "\n" for x in [HEADER, *bare]))
        out = self.tuner("show", self.log)
        self.assertNotIn("strategy waits", out)
        self.assertNotIn("compiles:", out)
        self.assertIsNone(json.loads(self.tuner("report", self.log, "--json"))["logs"][0]["costs"])

    def test_show_says_why_a_runoff_was_skipped(self):
        path = self.dir / "gemm.json"
        path.write_text(json.dumps(record({"outcome": "skipped", "reason": SKIPPED_REASON})))
        out = self.tuner("show", path).splitlines()
        rows = [l.split() for l in out if l.startswith("m<=512 ")]
        self.assertEqual(rows, [["m<=512", "BM=64,BN=128", "0.1250", "200", "measured", "-",
                                 "skipped", "k1:" + KEY[:12]]])
        self.assertIn("m<=512: " + SKIPPED_REASON, out)
        entry = json.loads(self.tuner("show", path, "--json"))["entries"][0]
        self.assertEqual(entry["runoff"], {"outcome": "skipped", "reason": SKIPPED_REASON})
        # A runoff that ran says nothing more.
        path.write_text(json.dumps(record({"outcome": "incumbent_kept", "pairs": 50})))
        self.assertNotIn("no runoff", self.tuner("show", path))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
