#!/usr/bin/env python3
"""What `tuner show` and `tuner report` say of a tune's result (issue 46 item 15, S6 and S7):
`show --sort median --top N` on a log; the winner's speed-up over the incumbent (the first
config of the required phase) in `show` of a log and of a record, and in the report; the runoff
as a sentence that says who was kept and why, with formatted statistics; green in "which params
matter" marking the best config's value, as it marks the best config; and a summary table on
top of a report of several logs. The logs and the record are written here, as a tune writes
them."""
import json
import re
import shutil
import subprocess
import sys
import unittest

import clitest

TUNER, DATA_ROOT, WORK = clitest.paths()
KEY = "ab" * 32

HEADER = {"log_schema": 1, "tuner": "gemm/m<=512", "space_hash": "cd" * 32, "arch": "sm_90",
          "source_hash": "ef" * 32, "toolchain": "nvcc 13.0.88, ptxas 13.0.88",
          "objective": "minimize", "search": {"strategy": "grid"}}
RUNOFF = {"pairs": 200, "incumbent": "BM=64,BN=128", "challenger": "BM=128,BN=64",
          "winner": "BM=64,BN=128", "incumbent_median_ms": 0.12512345,
          "challenger_median_ms": 0.12433333, "median_diff_pct": -0.6316789,
          "challenger_faster": 117, "p_value": 0.0132456789, "margin_pct": 1.0, "alpha": 0.05,
          "outcome": "tie"}


def trial(config, phase, median=None, reason=None, runoff=None):
    bm, bn = (int(p.split("=")[1]) for p in config.split(","))
    t = {"config_id": config, "params": {"BM": bm, "BN": bn}, "cache_key": KEY, "phase": phase,
         "device": "NVIDIA H200", "time": "2026-12-02T10:00:00Z", "warnings": []}
    if median is None:
        t.update(state="invalid", reason=reason)
    else:
        t.update(state="measured", median_ms=median, min_ms=median * 0.98, reps=100)
    if runoff:
        t["runoff"] = runoff
    return t


# The incumbent BM=64,BN=64 at 0.25 ms; the best BM=64,BN=128 at 0.125 ms (2.00x); the runoff
# between the two best ties, and the incumbent of the runoff (BM=64,BN=128) is kept.
TRIALS = [
    trial("BM=64,BN=64", "required", 0.25),
    trial("BM=128,BN=128", "search", reason="too many registers"),
    trial("BM=64,BN=128", "search", 0.125),
    trial("BM=128,BN=64", "search", 0.126),
    trial("BM=32,BN=64", "search", 0.5),
    trial("BM=64,BN=128", "runoff", 0.1251, runoff=RUNOFF),
    trial("BM=128,BN=64", "runoff", 0.1243, runoff=RUNOFF),
]
SENTENCE = ("117 of 200 pairs favoured the challenger BM=128,BN=64 (0.1243 ms against 0.1251 ms "
            "for the incumbent BM=64,BN=128), a paired median difference of -0.63% (p = 0.013): "
            "within the 1% margin, a tie: the incumbent BM=64,BN=128 is kept")


class ShowCli(unittest.TestCase):
    def setUp(self):
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.log = self.dir / "m_le_512.trials.jsonl"
        self.log.write_text("".join(json.dumps(x) + "\n" for x in [HEADER, *TRIALS]))

    def tuner(self, *args, rc=0):
        r = subprocess.run([TUNER, *map(str, args)], capture_output=True, text=True,
                           cwd=self.dir, env=clitest.env())
        self.assertEqual(r.returncode, rc, r.stderr)
        return r

    def rows(self, out):
        """The first column (#) of each trial row of `show`'s table."""
        return [l.split()[0] for l in out.splitlines() if re.match(r"^\d+\s", l)]

    def test_show_sorts_by_median_and_shows_the_top(self):
        out = self.tuner("show", self.log, "--sort", "median").stdout
        # Measured trials fastest first (runoff ones included), then the invalid one.
        self.assertEqual(self.rows(out), ["7", "3", "6", "4", "1", "5", "2"])
        out = self.tuner("show", self.log, "--sort", "median", "--top", "2").stdout
        self.assertEqual(self.rows(out), ["7", "3"])
        self.assertIn("(5 more trials not shown: --top 2)\n", out)
        out = self.tuner("show", self.log, "--top", "3").stdout
        self.assertEqual(self.rows(out), ["1", "2", "3"])
        self.assertIn("(4 more trials not shown: --top 3)\n", out)
        # The default is the log's order, every trial.
        out = self.tuner("show", self.log).stdout
        self.assertEqual(self.rows(out), ["1", "2", "3", "4", "5", "6", "7"])
        self.assertNotIn("not shown", out)
        r = self.tuner("show", self.log, "--sort", "fast", rc=2)
        self.assertIn("--sort: fast not in {order,median}", r.stderr)
        r = self.tuner("show", self.log, "--top", "0", rc=2)
        self.assertIn("--top: must be a whole number in [1, 1000000000], got '0'", r.stderr)

    def test_show_of_a_log_says_the_speed_up_and_the_runoff(self):
        out = self.tuner("show", self.log).stdout
        self.assertIn("\nkernel/bucket  gemm/m<=512\n", out)
        # The best leaves the runoff's paired medians out, as the report does.
        self.assertIn("best: BM=64,BN=128 (0.1250 ms), 6 of 7 trials measured\n"
                      "speed-up 2.00x over the incumbent BM=64,BN=64 (0.2500 ms)\n"
                      f"runoff: {SENTENCE}\n", out)

    def test_show_of_a_record_says_the_speed_up_and_who_the_runoff_kept(self):
        entry = {"bucket": "m<=512", "cache_key": {"digest": KEY, "schema": "k1"},
                 "config": {"id": "BM=64,BN=128", "params": {"BM": 64, "BN": 128}},
                 "median_ms": 0.125, "pruned_space_hash": "6981f722580a1404", "runoff": RUNOFF,
                 "samples": 200, "source": "measured",
                 "incumbent": {"config_id": "BM=64,BN=64", "median_ms": 0.25}}
        record = {"arch": "sm_90", "context": {"device": "NVIDIA H200"}, "entries": [entry],
                  "kernel": "gemm", "schema_version": 1, "source_hash": "ef" * 32,
                  "space_hash": "cd" * 32, "toolchain": "nvcc 13.0.88, ptxas 13.0.88",
                  "tuner_version": "0.1.0"}
        path = self.dir / "gemm.json"
        path.write_text(json.dumps(record))
        out = self.tuner("show", path).stdout
        self.assertIn("\ntuner version  0.1.0\n", out)
        rows = [l.split() for l in out.splitlines() if l.startswith("m<=512 ")]
        self.assertEqual(rows, [["m<=512", "BM=64,BN=128", "0.1250", "200", "measured", "2.00x",
                                 "tie", "k1:" + KEY[:12]]])
        self.assertIn(f"m<=512: runoff: {SENTENCE}\n"
                      "m<=512: speed-up 2.00x over the incumbent BM=64,BN=64 (0.2500 ms)\n", out)
        # The incumbent reads back as written.
        self.assertEqual(json.loads(self.tuner("show", path, "--json").stdout)["entries"][0]
                         ["incumbent"], {"config_id": "BM=64,BN=64", "median_ms": 0.25})

    def test_report_marks_the_best_configs_values_and_formats_the_runoff(self):
        page_path = self.dir / "page.html"
        self.tuner("report", self.log, "-o", page_path)
        page = page_path.read_text()
        # The report's best leaves the runoff's trials out: BM=64,BN=128 at 0.125 ms.
        self.assertIn("Speed-up 2.00x over the incumbent BM=64,BN=64 (0.2500 ms).", page)
        self.assertIn(f"<p>{SENTENCE[0].upper() + SENTENCE[1:]}.</p>", page)
        self.assertIn("<tr><th>p-value</th><td>0.0132 (one-sided sign test; significant below "
                      "0.05)</td></tr>", page)
        self.assertIn("<tr><th>paired median difference</th><td>-0.63% (challenger against "
                      "incumbent)</td></tr>", page)
        self.assertNotIn("0.0132456789", page)
        # Which params matter: values by the median of their configs. BM=128 has the lowest
        # median (0.126 ms), but green goes to the best config's values (BM=64, BN=128), as
        # green marks the best config in "configs by median".
        params = page.split("<h3>Which params matter</h3>", 1)[1].split("</table>", 1)[0]
        self.assertIn("green</span>: the best config's value", params)
        rows, name = [], None
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", params):
            if "<th>" in row:
                continue
            named = re.search(r"<b>(\w+)</b>", row)
            name = named.group(1) if named else name
            value = re.findall(r"<td>([^<]*)</td>", row)[0]
            rows.append((name, value, "best-bar" in row))
        self.assertEqual(rows, [("BM", "128", False), ("BM", "64", True), ("BM", "32", False),
                                ("BN", "128", True), ("BN", "64", False)])
        doc = json.loads(self.tuner("report", self.log, "--json").stdout)["logs"][0]
        self.assertEqual(doc["incumbent"], {"id": "BM=64,BN=64", "median_ms": 0.25})
        self.assertAlmostEqual(doc["speed_up"], 2.0)

    def test_a_report_of_several_logs_starts_with_a_summary(self):
        other = self.dir / "m_gt_512.trials.jsonl"
        header = dict(HEADER, tuner="gemm/m>512")
        other.write_text("".join(json.dumps(x) + "\n" for x in
                                 [header, trial("BM=64,BN=64", "required", 1.0),
                                  trial("BM=64,BN=128", "search", 0.8)]))
        page_path = self.dir / "page.html"
        self.tuner("report", self.log, other, "-o", page_path)
        page = page_path.read_text()
        summary = page.split("<h2>Summary</h2>", 1)[1].split("</table>", 1)[0]
        self.assertIn('<a href="#log-1">gemm/m&lt;=512</a>', summary)
        self.assertIn('<a href="#log-2">gemm/m&gt;512</a></td><td>sm_90</td>'
                      '<td class="num">2 of 2</td><td class="cfg">BM=64,<wbr>BN=128</td>'
                      '<td class="num">0.8 ms</td><td class="num">1.25x</td><td>-</td>', summary)
        self.assertIn('<section id="log-2">', page)
        # One log: no summary table.
        self.tuner("report", self.log, "-o", page_path)
        self.assertNotIn("<h2>Summary</h2>", page_path.read_text())


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
