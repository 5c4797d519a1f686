#!/usr/bin/env python3
"""CLI tests for `tuner report`: the HTML page with plots of a tune's trials. Logs come from
`tuner exec` runs of tests/data/exec/objective.sh (see exec_cli.py: 8 configs, 3 invalid, best
BM=64,BN=128; with OBJ_SCORE and --maximize the highest score is BM=128,BN=64), and one is
written here to hold a runoff."""
import json
import shutil
import subprocess
import sys
import unittest

import clitest

TUNER, DATA_ROOT, WORK = clitest.paths()
DATA = DATA_ROOT / "exec"


class ReportCli(unittest.TestCase):
    def setUp(self):
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)

    def exec_log(self, path, *extra, **env):
        path.parent.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([TUNER, "exec", str(DATA / "tile.toml"), "--bucket", "m<=512", "--log",
                            str(path), *extra, "--", str(DATA / "objective.sh")],
                           capture_output=True, text=True, env=clitest.env(**env))
        self.assertEqual(r.returncode, 0, r.stderr)
        return path

    def report(self, *args):
        return subprocess.run([TUNER, "report", *map(str, args)], capture_output=True, text=True,
                              cwd=self.dir)

    def test_a_log_becomes_a_self_contained_page(self):
        log = self.exec_log(self.dir / "tile.trials.jsonl")
        out = self.dir / "page.html"
        r = self.report(log, "-o", out)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(r.stdout, f"wrote {out} (1 trial log, 8 trials)\n")
        page = out.read_text()
        self.assertTrue(page.startswith("<!DOCTYPE html>"))
        self.assertIn("<h2>tile/m&lt;=512</h2>", page)  # escaped
        self.assertIn("8 trials: 5 measured, 3 invalid. Lowest median: <b>BM=64,BN=128</b> at "
                      "1 ms (phase search).", page)
        # One mark per trial: the incumbent, four search trials, three invalid ones.
        self.assertEqual(page.count('<rect class="required"'), 1)
        self.assertEqual(page.count('<circle class="search"'), 4)
        self.assertEqual(page.count('<path class="invalid"'), 3)
        self.assertIn("<title>#2 BM=32,BN=32: invalid: killed by signal SIGSEGV: segfault in tile "
                      "loop</title>", page)
        # Bars, fastest first, with the distance from the best: rows of a table, whose labels
        # wrap at commas instead of being clipped.
        configs = page[page.index("<h3>Configs by median</h3>"):page.index("<h3>Which params")]
        bars = [l for l in configs.splitlines() if '<div class="bar' in l]
        self.assertEqual(len(bars), 5)
        self.assertIn('<td class="cfg">BM=64,<wbr>BN=128</td><td class="num">1 ms</td>', bars[0])
        self.assertIn('<td class="num">4 ms (+300.0%)</td>', bars[-1])
        self.assertIn('<tr><td class="reason">unreadable result &#39;fast!&#39;</td><td>1</td>'
                      "<td>BM=32,<wbr>BN=128</td></tr>", page)
        self.assertNotIn("<script", page)
        # --json: the same summary as data, instead of the `wrote` line.
        r = self.report(log, "-o", out, "--json")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        doc = json.loads(r.stdout)
        self.assertEqual((doc["output"], doc["trials"]), (str(out), 8))
        self.assertEqual(doc["logs"], [{
            "log": str(log), "tuner": "tile/m<=512", "objective": "minimize", "trials": 8,
            "measured": 5, "invalid": 3,
            "best": {"id": "BM=64,BN=128", "median_ms": 1.0, "phase": "search"},
            "incumbent": {"id": "BM=64,BN=64", "median_ms": 2.0}, "speed_up": 2.0,
            "runoff_winner": None, "warnings": [], "prior": None, "prior_guided": 0,
            "costs": None, "record": None}])
        self.assertNotIn("http", page)
        # --json without -o is for scripts: the summary on stdout, no page written anywhere.
        before = sorted(p.name for p in self.dir.iterdir())
        r = self.report(log, "--json")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        doc = json.loads(r.stdout)
        self.assertEqual((doc["output"], doc["trials"], len(doc["logs"])), (None, 8, 1))
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), before)
        self.assertFalse((self.dir / "tune_report.html").exists())
        # The same log gives the same bytes.
        self.assertEqual(self.report(log, "-o", out).returncode, 0)
        self.assertEqual(out.read_text(), page)

    def test_invalid_trials_retried_on_resume_count_twice_but_name_their_config_once(self):
        log = self.exec_log(self.dir / "tile.trials.jsonl")
        self.exec_log(log)  # the resumed run retries the three invalid configs
        r = self.report(log)
        self.assertEqual(r.returncode, 0, r.stderr)
        page = (self.dir / "tune_report.html").read_text()
        self.assertIn("11 trials: 5 measured, 6 invalid.", page)
        self.assertIn('<tr><td class="reason">killed by signal SIGSEGV: segfault in tile loop</td>'
                      "<td>2</td><td>BM=32,<wbr>BN=32</td></tr>", page)

    def test_a_folder_stands_for_its_logs_and_a_maximizing_log_shows_scores(self):
        self.exec_log(self.dir / "tune" / "a" / "tile.trials.jsonl")
        self.exec_log(self.dir / "tune" / "b" / "score.trials.jsonl", "--maximize", OBJ_SCORE="1")
        (self.dir / "tune" / "notes.txt").write_text("not a log\n")
        r = self.report(self.dir / "tune")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "wrote tune_report.html (2 trial logs, 16 trials)\n")
        page = (self.dir / "tune_report.html").read_text()
        self.assertEqual(page.count("<section id="), 2)
        self.assertLess(page.index("a/tile.trials.jsonl"), page.index("b/score.trials.jsonl"))
        self.assertIn("Highest score: <b>BM=128,BN=64</b>", page)
        self.assertIn("<h3>Configs by score</h3>", page)

    def test_the_runoff_is_shown(self):
        log = self.dir / "k.trials.jsonl"
        stats = {"winner": "A=2", "outcome": "challenger_wins", "pairs": 40,
                 "median_diff_pct": -3.1, "p_value": 0.0001}
        lines = [{"log_schema": 1, "tuner": "k/all", "space_hash": "h", "arch": "sm_90",
                  "source_hash": None, "toolchain": None, "objective": "minimize"}]
        for i, (cid, ms, phase) in enumerate([("A=1", 2.0, "required"), ("A=2", 1.9, "search"),
                                              ("A=1", 2.0, "runoff"), ("A=2", 1.94, "runoff")]):
            t = {"config_id": cid, "params": {"A": int(cid[2:])}, "cache_key": None,
                 "state": "measured", "median_ms": ms, "min_ms": ms, "reps": 40, "phase": phase,
                 "device": None, "time": "2026-11-29T10:00:00Z", "warnings": []}
            if phase == "runoff":
                t["runoff"] = stats
            lines.append(t)
        log.write_text("".join(json.dumps(l) + "\n" for l in lines) + "{torn")
        r = self.report(log)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, f"{log}:6: warning: ignored a torn last line (an interrupted "
                                   "write)\n")
        page = (self.dir / "tune_report.html").read_text()
        self.assertIn("Lowest median: <b>A=2</b> at 1.9 ms (phase search). Speed-up 1.05x over "
                      "the incumbent A=1 (2.0000 ms). Runoff: <b>A=2</b> wins (challenger_wins).",
                      page)
        self.assertEqual(page.count('<path class="runoff"'), 2)
        self.assertIn("<tr><th>pairs</th><td>40</td></tr>", page)
        self.assertIn("ignored a torn last line", page)

    def test_constant_params_long_labels_and_which_params_matter(self):
        # A convolution-like log: two params the same in every trial, long labels, and one
        # param (tile_size_x) that decides the time while block_size_x barely matters.
        log = self.dir / "conv.trials.jsonl"
        lines = [{"log_schema": 1, "tuner": "convolution/f17", "space_hash": "h", "arch": "sm_90",
                  "source_hash": None, "toolchain": None, "objective": "minimize"}]
        n = 0
        for tx in (1, 2, 4):
            for bx in (16, 32, 64, 128):
                params = {"block_size_x": bx, "block_size_y": 8, "filter_height": 17,
                          "filter_width": 17, "read_only": 1, "tile_size_x": tx,
                          "tile_size_y": 2, "use_padding": 0}
                cid = ",".join(f"{k}={json.dumps(params[k])}" for k in sorted(params))
                ms = 4.0 / tx * (1 + bx / 6400)
                t = {"config_id": cid, "params": params, "cache_key": None, "phase": "search",
                     "device": None, "time": f"2026-11-29T10:00:{n:02d}Z", "warnings": []}
                if tx == 4 and bx == 128:
                    t.update(state="invalid", reason="too many resources requested for launch")
                else:
                    t.update(state="measured", median_ms=ms, min_ms=ms, reps=40)
                lines.append(t)
                n += 1
        log.write_text("".join(json.dumps(l) + "\n" for l in lines))
        out = self.dir / "conv.html"
        r = self.report(log, "-o", out)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        page = out.read_text()
        # The constants once, in the header; out of every label.
        self.assertIn("<tr><th>constant params</th><td>block_size_y=8, filter_height=17, "
                      "filter_width=17, read_only=1, tile_size_y=2, use_padding=0 (the same in "
                      "every trial: left out of the labels below)</td></tr>", page)
        configs = page[page.index("<h3>Configs by median</h3>"):page.index("<h3>Which params")]
        self.assertNotIn("filter_height", configs)
        self.assertIn('<td class="cfg">block_size_x=16,<wbr>tile_size_x=4</td>', configs)
        self.assertIn("<td>block_size_x=128,<wbr>tile_size_x=4</td>", page)  # the invalid one
        # Which params matter: tile_size_x first (spread 4.01x), each value's median of its
        # configs, fastest value first; block_size_x after it.
        matter = page[page.index("<h3>Which params matter</h3>"):]
        self.assertLess(matter.index("<b>tile_size_x</b><br>spread 4.01x"),
                        matter.index("<b>block_size_x</b><br>spread 1.53x"))
        rows = [l for l in matter.splitlines() if l.startswith("<tr")][1:4]
        self.assertIn("<td>4</td><td class=\"num\">3</td>", rows[0])
        self.assertIn("<td>2</td><td class=\"num\">4</td>", rows[1])
        self.assertIn("<td>1</td><td class=\"num\">4</td>", rows[2])
        # The page uses the width: tables span it, the plots share a row.
        self.assertIn('<table class="bars">', page)
        self.assertIn('<div class="row">', page)
        self.assertIn("table.list,table.bars{width:100%}", page)

    def test_bad_input_exits_2(self):
        (self.dir / "empty").mkdir()
        r = self.report(self.dir / "empty")
        self.assertEqual((r.returncode, r.stderr),
                         (2, f"tuner report: error: no trial log (*.trials.jsonl) under "
                             f"'{self.dir / 'empty'}'\n"))
        record = self.dir / "gemm.json"
        record.write_text('{"schema_version": 1}\n')
        r = self.report(record)
        self.assertEqual((r.returncode, r.stderr),
                         (2, f"{record}:1: error: not a trial log: the header has no integer "
                             "'log_schema'\n"))
        r = self.report(self.dir / "missing.trials.jsonl")
        self.assertEqual((r.returncode, r.stderr),
                         (2, f"tuner report: error: cannot read "
                             f"'{self.dir / 'missing.trials.jsonl'}'\n"))
        r = self.report()
        self.assertEqual(r.returncode, 2)
        self.assertFalse((self.dir / "tune_report.html").exists())


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
