#!/usr/bin/env python3
"""This repository's committed records (tuned on an H200) against this machine's checkout.

- each kernel's record verifies here (the cross-machine case: another OS, host compiler and
  checkout path);
- `tuner tune` on a fresh record prints one line and compiles nothing (the compile log stays
  as it was);
- in a scratch copy of the project, an edit to a kernel source or to a header it includes makes
  its record fail verification, naming what drifted, while the other kernels stay fresh.

Usage: repo_records.py --tuner T --build B --source S --work W
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--tuner", required=True)
parser.add_argument("--build", required=True)
parser.add_argument("--source", required=True)
parser.add_argument("--work", required=True)
ARGS, _ = parser.parse_known_args()
BUILD = Path(ARGS.build).resolve()
SOURCE = Path(ARGS.source).resolve()
WORK = Path(ARGS.work).resolve()
KERNELS = ["gemm", "softmax", "reduce"]


def tuner(*args):
    return subprocess.run([ARGS.tuner, *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def manifest(kernel):
    return BUILD / "tune" / kernel / "manifest.json"


def scratch_copy():
    """The project's kernels, spaces and records under WORK, with manifests pointing there."""
    root = WORK / "project"
    shutil.rmtree(WORK, ignore_errors=True)
    root.mkdir(parents=True)
    for d in ["kernels", "spaces", "records"]:
        shutil.copytree(SOURCE / d, root / d)
    manifests = {}
    for k in KERNELS:
        m = json.loads(manifest(k).read_text())
        text = json.dumps(m).replace(str(SOURCE), str(root))
        m = json.loads(text)
        m["compile_log"] = str(WORK / "compile.log")
        path = WORK / f"{k}.manifest.json"
        path.write_text(json.dumps(m, indent=2))
        manifests[k] = path
    return root, manifests


class RepoRecords(unittest.TestCase):
    def test_committed_records_verify_here(self):
        for k in KERNELS:
            r = tuner("verify", "--manifest", manifest(k))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn(f"fresh ({k} sm_90, 2 entries)", r.stdout + r.stderr)

    def test_fresh_tune_compiles_nothing(self):
        log = BUILD / "tune" / "compile.log"
        before = log.read_text() if log.exists() else ""
        for k in KERNELS:
            r = tuner("tune", "--manifest", manifest(k))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual(r.stdout.strip().splitlines(),
                             [f"tune.{k}: record records/{k}.json is fresh (sm_90), nothing to do"])
        after = log.read_text() if log.exists() else ""
        self.assertEqual(before, after)

    def test_edits_in_a_scratch_copy_make_the_record_stale(self):
        root, manifests = scratch_copy()
        for k in KERNELS:
            self.assertEqual(tuner("verify", "--manifest", manifests[k]).returncode, 0)
        # An included header: gemm goes stale (its keys), the others stay fresh.
        header = root / "kernels/gemm/include/gemm_tile.cuh"
        original = header.read_text()
        header.write_text(original + "\n// an edit\n")
        r = tuner("verify", "--manifest", manifests["gemm"])
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("cache_key", r.stdout + r.stderr)
        self.assertIn("skinny", r.stdout + r.stderr)
        self.assertIn("square", r.stdout + r.stderr)
        for k in ["softmax", "reduce"]:
            self.assertEqual(tuner("verify", "--manifest", manifests[k]).returncode, 0)
        header.write_text(original)
        self.assertEqual(tuner("verify", "--manifest", manifests["gemm"]).returncode, 0)
        # A kernel source: its source hash drifts.
        source = root / "kernels/reduce/reduce.cu"
        source.write_text(source.read_text() + "\n// an edit\n")
        r = tuner("verify", "--manifest", manifests["reduce"])
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("source_hash", r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
