#!/usr/bin/env python3
"""The adaptive compile cap (docs/search.md "Compile cost"): in a tune that a budget ends, once
16 candidates compiled, a compile that runs past max(compile_cap_floor_s, compile_cap_factor x
the 90th percentile of the compiles so far) is stopped and its candidate logged `compile_slow`
(an invalid trial whose reason says so), the tune goes on, and its summary counts them. A tune
that measures every candidate compiles them in full. The compiler is a stand-in whose compiles of
two configs sleep; the measuring worker is the fake one.
"""
import json
import shutil
import subprocess
import sys
import time
import unittest

import clitest

TUNER, DATA_ROOT, WORK = clitest.paths()
RUNNER_DATA = DATA_ROOT / "runner"

# The tests' stand-in nvcc, whose compiles of BLOCK=1000 and BLOCK=1001 sleep 3 s first.
SLOW_NVCC = clitest.FAKE_NVCC.replace(
    'echo "compile $out"',
    'case " $* " in *" -DBLOCK=1000 "*|*" -DBLOCK=1001 "*) sleep 3 ;; esac\necho "compile $out"')
assert "sleep 3" in SLOW_NVCC

BLOCKS = list(range(32, 32 + 20)) + [1000, 1001]


def space(search):
    return f"""schema = 1
kernel = "saxpy"
require = [{{ BLOCK = 32 }}]

[params]
BLOCK = {json.dumps(BLOCKS)}

[search]
timeout_s = 60
compile_cap_floor_s = 0.5
{search}
"""


class CompileCapCli(unittest.TestCase):
    def tune(self, name, search, fresh=True):
        top = WORK / name
        if fresh:
            shutil.rmtree(top, ignore_errors=True)
        else:
            shutil.rmtree(top / "tree" / "src", ignore_errors=True)
            shutil.rmtree(top / "tree" / "build" / "tune" / "saxpy", ignore_errors=True)
        nvcc = clitest.fake_cuda(top / "cuda" / "bin", SLOW_NVCC)
        manifest = clitest.saxpy_tree(top / "tree", nvcc,
                                      RUNNER_DATA / "fake_worker.py", DATA_ROOT, space(search))
        env = clitest.env(TUNE_RUNNER_WORKER_CMD=f"{sys.executable} {RUNNER_DATA / 'fake_worker.py'}",
                          FAKE_TAME="1", TUNE_COMPILE_JOBS="2")
        started = time.monotonic()
        r = subprocess.run([TUNER, "run", "--manifest", str(manifest), "--bucket", "default",
                            "--compile-ahead"], capture_output=True, text=True, env=env,
                           timeout=120)
        took = time.monotonic() - started
        self.assertEqual(r.returncode, 0, r.stderr)
        log = next((top / "tree" / "build" / "tune" / "saxpy").rglob("default.trials.jsonl"))
        trials = [json.loads(line) for line in log.read_text().splitlines()[1:]]
        search_trials = {t["config_id"]: t for t in trials if t["phase"] != "runoff"}
        return r, took, search_trials

    def test_a_budgeted_tune_stops_the_slow_compiles_and_goes_on(self):
        r, took, trials = self.tune("budgeted", "budget_s = 600")
        slow = {f"BLOCK={b}": trials[f"BLOCK={b}"] for b in (1000, 1001)}
        for config, t in slow.items():
            self.assertEqual(t["state"], "invalid", config)
            self.assertTrue(t["reason"].startswith(
                "compile_slow: the compile was stopped after 0.5 s by the adaptive compile cap, "
                "max(0.5 s, 3 x "), t["reason"])
        measured = [c for c, t in trials.items() if t["state"] == "measured"]
        self.assertEqual(len(measured), len(BLOCKS) - 2, trials)
        self.assertIn("default: compile cap: 2 compiles stopped at max(0.5 s, 3 x ", r.stderr)
        self.assertLess(took, 3 + 2.5, r.stderr)  # the two 3 s compiles did not run out

    def test_a_tune_of_every_candidate_compiles_the_slow_ones_in_full(self):
        r, took, trials = self.tune("complete", "")
        for b in (1000, 1001):
            self.assertEqual(trials[f"BLOCK={b}"]["state"], "measured", trials[f"BLOCK={b}"])
        self.assertNotIn("compile cap:", r.stderr)
        self.assertGreaterEqual(took, 3, r.stderr)

    def test_a_later_tune_of_every_candidate_compiles_what_the_cap_stopped(self):
        # The kernel cache keeps the capped compiles as stopped at 0.5 s: a tune without a cap
        # (its compile timeout the default 600 s) compiles them again, in full.
        self.tune("again", "budget_s = 600")
        r, took, trials = self.tune("again", "", fresh=False)
        for b in (1000, 1001):
            self.assertEqual(trials[f"BLOCK={b}"]["state"], "measured", trials[f"BLOCK={b}"])
        self.assertGreaterEqual(took, 3, r.stderr)

    def test_a_factor_of_zero_turns_the_cap_off(self):
        r, took, trials = self.tune("off", "budget_s = 600\ncompile_cap_factor = 0")
        for b in (1000, 1001):
            self.assertEqual(trials[f"BLOCK={b}"]["state"], "measured", trials[f"BLOCK={b}"])
        self.assertNotIn("compile cap:", r.stderr)

    def test_cost_weight_zero_turns_the_compile_cost_model_off_for_every_strategy(self):
        # A cold kernel cache: compile-bound. anneal and random weigh costs unless the space
        # sets cost_weight = 0, which the summary names; bayes takes it as its weight.
        for strategy in ("anneal", "random", "bayes"):
            r, _, _ = self.tune(f"weigh-{strategy}",
                                f'strategy = "{strategy}"\nmax_evals = 8\ncompile_cap_factor = 0')
            self.assertIn("default: compile cost: weighed, the tune is compile-bound (0 of 22 "
                          "candidates in the kernel cache)", r.stderr)
            r, _, _ = self.tune(f"off-{strategy}", f'strategy = "{strategy}"\nmax_evals = 8\n'
                                "compile_cap_factor = 0\ncost_weight = 0")
            self.assertIn("default: compile cost: not weighed, the space sets cost_weight = 0 (0 "
                          "of 22 candidates in the kernel cache)", r.stderr)

    def test_a_space_without_a_strategy_may_set_cost_weight(self):
        # auto takes bayes's settings (this bucket of 22 gets grid): accepted, and the summary
        # says the model is off.
        r, _, _ = self.tune("auto-off", "max_evals = 8\ncompile_cap_factor = 0\ncost_weight = 0")
        self.assertIn("strategy: grid (auto: grid for 22 configs", r.stderr)
        self.assertIn("default: compile cost: not weighed, the space sets cost_weight = 0 (0 "
                      "of 22 candidates in the kernel cache)", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
