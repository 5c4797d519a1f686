#!/usr/bin/env python3
"""The search benchmark's replay (bench/search/bench_search): a synthetic complete table of a
300-config space (a smooth landscape with one optimum and a region of invalid configs) replayed
through every strategy, one config at a time and in batches. Checks: the report, determinism
(the same output twice), a model-based or local strategy beating random to 1.02x, the timing of
the strategies (--speed), and the refusals of tables that do not match the space, each naming
the first mismatch.

Arguments: --bench <bench_search> --work <scratch dir>.
"""
import argparse
import json
import math
import shutil
import re
import subprocess
import sys
import unittest
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--bench", required=True)
parser.add_argument("--work", required=True, type=Path)
ARGS, rest = parser.parse_known_args()

SPACE = """schema = 1
kernel = "synthetic"
require = [{ A = 0, B = 0, C = "x" }]

[params]
A = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
B = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
C = ["x", "y", "z"]
"""


def config_id(a, b, c):
    return f'A={a},B={b},C={json.dumps(c)}'


def trial(a, b, c):
    params = {"A": a, "B": b, "C": c}
    base = {"batched": False, "cache_key": None, "config_id": config_id(a, b, c),
            "device": None, "params": params, "phase": "search", "time": "2026-12-01T00:00:00Z",
            "warnings": []}
    if c == "z" and a + b > 12:
        return dict(base, state="invalid", reason="compile failed: too many registers")
    # A smooth bowl around A=6, B=3 with a bonus for C="y": the optimum is A=6,B=3,C="y".
    ms = 1.0 + 0.04 * (a - 6) ** 2 + 0.03 * (b - 3) ** 2 + {"x": 0.2, "y": 0.0, "z": 0.1}[c]
    ms *= 1 + 0.01 * math.sin(7 * a + 3 * b)  # a little roughness
    return dict(base, state="measured", median_ms=ms, min_ms=ms * 0.99, reps=10)


def table_lines():
    header = {"log_schema": 1, "name": "synthetic/default", "space_hash": "x", "arch": "",
              "objective": "min_median_ms", "source_hash": None, "toolchain": None,
              "tuner": "tune"}
    return [json.dumps(header)] + [json.dumps(trial(a, b, c))
                                   for a in range(10) for b in range(10) for c in "xyz"]


def run(*args):
    return subprocess.run([ARGS.bench, *map(str, args)], capture_output=True, text=True)


class SearchReplay(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(ARGS.work, ignore_errors=True)
        ARGS.work.mkdir(parents=True)
        cls.space = ARGS.work / "synthetic.toml"
        cls.space.write_text(SPACE)
        cls.table = ARGS.work / "synthetic.jsonl"
        cls.table.write_text("\n".join(table_lines()) + "\n")

    def write(self, name, lines):
        p = ARGS.work / name
        p.write_text("\n".join(lines) + "\n")
        return p

    def test_report_plot_and_determinism(self):
        html, js = ARGS.work / "conv.html", ARGS.work / "conv.json"
        args = ["--space", self.space, "--table", self.table, "--seeds", 8,
                "--strategies", "grid,random,anneal,bayes", "--html", html, "--json", js]
        r = run(*args)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("300 configs, 279 valid", r.stdout)
        for name in ("grid", "random", "anneal", "bayes"):
            self.assertRegex(r.stdout, rf"\n{name} +\d")
        self.assertIn("<svg", html.read_text())
        first = json.loads(js.read_text())
        again = run(*args)
        self.assertEqual(again.stdout, r.stdout)
        self.assertEqual(json.loads(js.read_text()), first)
        # Every run of every strategy reaches the optimum by the end of the space (21 of the 300 are invalid).
        for name, row in first["strategies"].items():
            self.assertIsNotNone(row["1.00x"]["median"], name)
            for curve in row["curves"]:
                self.assertAlmostEqual(curve[-1], 1.0, msg=name)
        # Grid visits in enumeration order (the incumbent A=0,B=0,C="x" is also the first):
        # A=6,B=3,C="y" is config 6*30+3*3+1 = 190, the 191st evaluation.
        self.assertAlmostEqual(first["strategies"]["grid"]["1.00x"]["median"], 191 / 279)
        # On a smooth landscape the local and the model-based strategies beat random to 1.02x.
        random_ = first["strategies"]["random"]["1.02x"]["median"]
        best = min(first["strategies"][s]["1.02x"]["median"] for s in ("anneal", "bayes"))
        self.assertLess(best, random_)

    def test_batches_are_replayed_deterministically(self):
        # 16 configs pending, the outcomes told oldest first or shuffled: each run still reaches
        # the optimum by the end of the space, and the same arguments give the same output.
        for order in ("fifo", "shuffled"):
            js = ARGS.work / f"batch_{order}.json"
            args = ["--space", self.space, "--table", self.table, "--seeds", 4, "--batch", 16,
                    "--order", order, "--strategies", "grid,random,anneal,bayes", "--json", js]
            r = run(*args)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            told = "oldest first" if order == "fifo" else "in a shuffled order"
            self.assertIn(f"; batch 16, outcomes told {told}", r.stdout)
            first = json.loads(js.read_text())
            self.assertEqual(first["batch"], 16)
            self.assertEqual(run(*args).stdout, r.stdout)
            self.assertEqual(json.loads(js.read_text()), first)
            for name, row in first["strategies"].items():
                for curve in row["curves"]:
                    self.assertEqual(len(curve), 300, name)
                    self.assertAlmostEqual(curve[-1], 1.0, msg=name)
        # Grid told oldest first visits in enumeration order, as with one at a time.
        self.assertAlmostEqual(json.loads((ARGS.work / "batch_fifo.json").read_text())
                               ["strategies"]["grid"]["1.00x"]["median"], 191 / 279)

    def test_batches_side_by_side_say_what_the_batch_adds(self):
        # --batch 1,4: each strategy one at a time and with 4 pending; the batch row's 'vs 1' is
        # its 1.02x median over batch 1's and the evaluations it adds, and the header counts the
        # configs within 1.02x and the chance that 4 random configs include one of them.
        js = ARGS.work / "side_by_side.json"
        r = run("--space", self.space, "--table", self.table, "--seeds", 6, "--batch", "1,4",
                "--strategies", "anneal,bayes", "--json", js)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        times = [t["median_ms"] for t in map(json.loads, table_lines()[1:])
                 if t["state"] == "measured"]
        within = sum(1 for t in times if t <= 1.02 * min(times) * (1 + 1e-12))
        out = json.loads(js.read_text())
        self.assertEqual(out["within_1.02x"], within)
        blind = 1 - (1 - within / len(times)) ** 4
        self.assertIn(f"{within} valid configs within 1.02x of the optimum; the first 4 proposals "
                      f"of a batch of 4 are made before any outcome, and 4 random configs include "
                      f"one of them with probability {100 * blind:.0f}%", r.stdout)
        for name in ("anneal", "bayes"):
            one, four = out["strategies"][name]["1"], out["strategies"][name]["4"]
            self.assertNotIn("vs_1", one)
            m1, m4 = one["1.02x"]["median"], four["1.02x"]["median"]
            self.assertAlmostEqual(four["vs_1"]["ratio"], m4 / m1)
            more = round((m4 - m1) * len(times))
            self.assertEqual(four["vs_1"]["more_evaluations"], more)
            self.assertRegex(r.stdout, rf"\n{name} +1 .* -\n")
            vs = re.escape(f"{m4 / m1:.2f}x {more:+d}")
            self.assertRegex(r.stdout, rf"\n{name} +4 .* {vs}\n")

    def test_early_rejection_keeps_the_winner_and_stops_the_slow(self):
        # The same table with 200 reps per config, so that candidates have looks to stop at.
        lines = table_lines()
        slow = [lines[0]] + [json.dumps(dict(json.loads(l), reps=200)) if '"measured"' in l else l
                             for l in lines[1:]]
        table = self.write("reps200.jsonl", slow)
        args = ["--space", self.space, "--table", table, "--seeds", 4,
                "--strategies", "grid,random,anneal", "--early-reject"]
        r = run(*args)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("early rejection (margin 10%, alpha 0.01) against the full search", r.stdout)
        rows = {m.group(1): m for m in re.finditer(
            r"\n(\w+) +(\d+) of (\d+) +([0-9.]+)% +([0-9.]+)% of trials +([0-9.]+)%", r.stdout)}
        self.assertEqual(sorted(rows), ["anneal", "grid", "random"], r.stdout)
        for name, m in rows.items():
            self.assertEqual(m.group(2), m.group(3), name)  # the same winner in every run
            self.assertEqual(float(m.group(4)), 0.0, name)
            self.assertGreater(float(m.group(5)), 10.0, name)  # the bowl's far side stops
            self.assertGreater(float(m.group(6)), 10.0, name)
        self.assertEqual(run(*args).stdout, r.stdout)
        # A margin no candidate exceeds: nothing stops.
        none = run(*args, "--reject-margin", 1000)
        self.assertEqual(none.returncode, 0, none.stdout + none.stderr)
        self.assertRegex(none.stdout, r"\ngrid +1 of 1 +0\.00% +0\.0% of trials +0\.0%")

    def test_speed_times_the_strategies_and_the_old_bayes(self):
        r = run("--speed", "--speed-at", "20,40", "--speed-sample", 5,
                "--strategies", "random,bayes")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("synthetic space of 10000 configs (350 invalid)", r.stdout)
        for row in ("random", "bayes", "bayes, batch 16", "bayes before", "bayes now"):
            self.assertRegex(r.stdout, rf"\n{row} +\d+\.\d+ +\d+\.\d+\n")
        self.assertRegex(r.stdout, r"\nbefore / now +\d+x +\d+x\n")
        r = run("--speed", "--speed-at", "40,20")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("--speed-at wants counts in ascending order", r.stderr)

    def test_cost_compares_the_weights_of_compile_cost(self):
        r = run("--cost", "--seeds", 3)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("median of 3 seeds, batches of 4", r.stdout)
        rows = re.findall(r"\n\| (cheap|dear) \(\d+\.?\d* s\) \| (\d) \| (\d+) \| (\d+) \| (\d+) \|",
                          r.stdout)
        self.assertEqual([(o, w) for o, w, *_ in rows],
                         [(o, w) for o in ("cheap", "dear") for w in "012"])
        # Deterministic: the same seeds print the same table.
        self.assertEqual(run("--cost", "--seeds", 3).stdout, r.stdout)

    def test_overlap_times_the_strategy_beside_and_between_the_measurements(self):
        r = run("--overlap", "--overlap-evals", 40, "--overlap-gpu-ms", 1,
                "--strategies", "random,bayes")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("40 evaluations per search, 16 proposals pending", r.stdout)
        # Each row: both wall times, their ratio, the strategy's seconds, the waits, and the
        # same configs measured both ways.
        for name in ("random", "bayes"):
            self.assertRegex(r.stdout, rf"\n{name} +1\.0 +\d+\.\d+ +\d+\.\d+ +\d+\.\d+x "
                                       rf"+\d+\.\d+ +\d+\.\d+ +yes\n")
        r = run("--overlap", "--overlap-evals", 1)
        self.assertNotEqual(r.returncode, 0)

    def test_a_prior_of_an_earlier_version_cuts_the_evaluations(self):
        # Issue 33: version 1 had its optimum one step away (A=5); it is the re-tune's prior.
        lines = table_lines()
        header = dict(json.loads(lines[0]), tuner="synthetic/default", source_hash="v1",
                      objective="minimize")
        v1 = [json.dumps(header)]
        for l in lines[1:]:
            t = json.loads(l)
            if t["state"] == "measured":
                a = t["params"]["A"]
                t["median_ms"] *= (1.0 + 0.04 * (a - 5) ** 2) / (1.0 + 0.04 * (a - 6) ** 2)
            v1.append(json.dumps(t))
        prior = self.write("v1.jsonl", v1)
        r = run("--space", self.space, "--table", self.table, "--prior", prior, "--seeds", 3,
                "--strategies", "grid,random,anneal,bayes", "--json", ARGS.work / "prior.json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("without and with the prior", r.stdout)
        out = json.loads((ARGS.work / "prior.json").read_text())
        self.assertEqual(out["prior"], str(prior))
        for name, row in out["strategies"].items():
            with_prior, without = row["1.00x"]["with"], row["1.00x"]["without"]
            self.assertIsNotNone(with_prior, name)
            self.assertLess(with_prior, without, name)
            self.assertLess(with_prior, 0.1, name)  # 30 of 280 valid configs
            self.assertLessEqual(row["warm_stop"]["best_over_optimum"], 1.02, name)
        # A prior of another kernel is refused, naming it.
        other = self.write("other.jsonl", [json.dumps(dict(header, tuner="other/default"))] +
                           v1[1:])
        r = run("--space", self.space, "--table", self.table, "--prior", other, "--seeds", 1,
                "--strategies", "random")
        self.assertEqual(r.returncode, 3)
        self.assertIn("a log of kernel 'other', not 'synthetic'", r.stderr)

    def test_a_replay_needs_a_space_and_a_table(self):
        r = run("--table", self.table)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("--space and --table are required (or --speed to time the strategies)",
                      r.stderr)

    def test_a_config_missing_from_the_table_is_refused(self):
        lines = table_lines()
        del lines[5]  # A=0,B=1,C="y"
        t = self.write("missing.jsonl", lines)
        r = run("--space", self.space, "--table", t)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(f"{t}: error: no trial for config 'A=0,B=1,C=\"y\"' of the space "
                      f"'{self.space}', bucket 'default': a table must hold every config of "
                      "the space (1 of 300 missing)", r.stderr)

    def test_a_config_outside_the_space_is_refused_with_its_line(self):
        lines = table_lines()
        lines[3] = json.dumps(dict(trial(0, 0, "x"), config_id='A=0,B=0,C="w"',
                                   params={"A": 0, "B": 0, "C": "w"}))
        t = self.write("foreign.jsonl", lines)
        r = run("--space", self.space, "--table", t)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(f"{t}:4: error: config 'A=0,B=0,C=\"w\"' is not in the space", r.stderr)

    def test_a_config_twice_is_refused(self):
        lines = table_lines()
        lines.append(lines[1])
        t = self.write("twice.jsonl", lines)
        r = run("--space", self.space, "--table", t)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(f"{t}:302: error: config 'A=0,B=0,C=\"x\"' again (first on line 2)",
                      r.stderr)

    def test_an_unknown_strategy_is_refused_with_the_near_miss(self):
        r = run("--space", self.space, "--table", self.table, "--strategies", "anneel")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("no strategy 'anneel', did you mean 'anneal'?", r.stderr)

    def test_set_gives_a_strategy_its_settings(self):
        # bayes with 200 configs of its spread start (initial) reaches the optimum later than
        # with the default 10; anneal, which has no `initial`, is replayed as without it.
        def medians(*extra):
            js = ARGS.work / "set.json"
            r = run("--space", self.space, "--table", self.table, "--seeds", 4,
                    "--strategies", "anneal,bayes", "--json", js, *extra)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            out = json.loads(js.read_text())
            return r, out, {n: row["1.00x"]["median"] for n, row in out["strategies"].items()}
        _, _, plain = medians()
        r, out, late = medians("--set", "initial=200")
        self.assertIn("; settings initial=200\n", r.stdout)
        self.assertEqual(out["settings"], {"initial": 200})
        self.assertEqual(late["anneal"], plain["anneal"])
        self.assertGreater(late["bayes"], plain["bayes"])
        for bad, says in (("initial=0", "bayes takes an int in [1, inf)"),
                          ("initial", "want NAME=VALUE"),
                          ("temperature=0.1", "no strategy replayed has that setting")):
            r = run("--space", self.space, "--table", self.table, "--strategies", "bayes",
                    "--set", bad)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn(f"--set {bad}: {says}", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + rest)
