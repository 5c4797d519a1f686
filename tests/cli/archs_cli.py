#!/usr/bin/env python3
"""CLI tests for `tuner archs`: the known architectures, one per line, and as JSON with their
limits. tune_add_kernel reads the plain output at configure time to check ARCH."""
import json
import subprocess
import unittest

import clitest

TUNER, _, _ = clitest.paths()

KNOWN = ["sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62", "sm_70", "sm_72", "sm_75", "sm_80",
         "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_101", "sm_103", "sm_110", "sm_120",
         "sm_121"]


def run(*args):
    return subprocess.run([TUNER, *args], capture_output=True, text=True, env=clitest.env(),
                          timeout=60)


class ArchsCli(unittest.TestCase):
    def test_one_architecture_per_line(self):
        r = run("archs")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(r.stdout, "".join(f"{a}\n" for a in KNOWN))

    def test_json_gives_the_limits(self):
        r = run("archs", "--json")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        archs = json.loads(r.stdout)["archs"]
        self.assertEqual([a["arch"] for a in archs], KNOWN)
        by_name = {a["arch"]: a for a in archs}
        self.assertEqual(by_name["sm_90"], {"arch": "sm_90", "max_registers_per_thread": 255,
                                            "max_shared_per_block": 227 * 1024,
                                            "max_static_shared": 48 * 1024})
        self.assertEqual(by_name["sm_75"]["max_shared_per_block"], 64 * 1024)

    def test_unknown_option_is_bad_usage(self):
        r = run("archs", "--bogus")
        self.assertEqual(r.returncode, 2, r)
        self.assertIn("--bogus", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=[__file__])
