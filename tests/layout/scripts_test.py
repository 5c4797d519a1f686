#!/usr/bin/env python3
"""README's two commands, scripts/bootstrap.sh and scripts/test.sh, configure one build tree
the same way (one preset, the same cache variables), so the test command after the bootstrap
reuses its build instead of compiling everything again.

Runs both scripts on a copy of them with stand-ins for cmake and ctest on the PATH that write
down their arguments (nothing is configured or built).

Usage: scripts_test.py [--root <repository>]
"""
import argparse
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

STAND_IN = """#!/bin/sh
printf '%s\\n' "$(basename "$0") $*" >> "$TUNE_TEST_CALLS"
"""


class ScriptsTest(unittest.TestCase):
    def run_script(self, name, env_extra):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "scripts").mkdir()
            shutil.copy2(ROOT / "scripts" / name, tmp / "scripts" / name)
            bin_dir = tmp / "bin"
            bin_dir.mkdir()
            for tool in ("cmake", "ctest"):
                (bin_dir / tool).write_text(STAND_IN)
                (bin_dir / tool).chmod(0o755)
            calls = tmp / "calls.txt"
            env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "TUNE_TEST_CALLS": str(calls),
                   "TUNE_SKIP_INSTALL": "1", "HOME": str(tmp), **env_extra}
            proc = subprocess.run(["bash", str(tmp / "scripts" / name)], env=env,
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            return calls.read_text().splitlines()

    def configure(self, calls):
        """The configure command: the cmake call that is not --build."""
        found = [c for c in calls if c.startswith("cmake ") and " --build " not in f" {c} "]
        self.assertEqual(len(found), 1, calls)
        return found[0]

    def test_both_configure_one_tree_with_one_preset(self):
        for env in ({}, {"TUNE_BUILD_DIR": "b", "TUNE_TOMLPP_INCLUDE_DIR": "/t",
                         "TUNE_EIGEN_INCLUDE_DIR": "/e"}):
            bootstrap = self.configure(self.run_script("bootstrap.sh", env))
            test = self.configure(self.run_script("test.sh", env))
            self.assertEqual(bootstrap, test, env)
            self.assertIn("--preset ci", test)
            self.assertIn(f"-B {env.get('TUNE_BUILD_DIR', 'build')}", test)

    def test_test_sh_builds_the_tree_it_configured(self):
        calls = self.run_script("test.sh", {"TUNE_BUILD_DIR": "b"})
        self.assertIn("cmake --build b", calls)
        self.assertTrue(any(c.startswith("ctest --test-dir b ") for c in calls), calls)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, default=ROOT)
    ROOT = parser.parse_args().root
    unittest.main(argv=[sys.argv[0]])
