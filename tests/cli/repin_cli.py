#!/usr/bin/env python3
"""The no-GPU way back after a shared header changed (tuner record repin, tuner status): with
the real nvcc's version only (nothing is compiled),

- `tuner status` names the next step for a stale record, and `tuner record repin` pins every
  entry of every stale record of the build again to the config it records, in one command,
  after which the records verify;
- `tuner record set --config` takes the params in any order, and a config id that lacks a
  param says which.
"""
import json
import shutil
import subprocess
import sys
import unittest

import clitest

TUNER, DATA, WORK = clitest.paths()

KERNEL = """#include "tile.cuh"
extern "C" __global__ void scale(float* x) {
  x[blockIdx.x * BLOCK * ITEMS + threadIdx.x] *= TILE_FACTOR;
}
"""
SPACE = """schema = 1
kernel = "scale"

[params]
BLOCK = [64, 128]
ITEMS = [1, 2]

[[buckets]]
name = "small"
when = "N <= 4096"
shape = { N = 4096 }

[[buckets]]
name = "large"
shape = { N = 1048576 }
"""


class RepinCli(unittest.TestCase):
    def setUp(self):
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        (self.dir / "kernels").mkdir(parents=True)
        (self.dir / "spaces").mkdir()
        (self.dir / "kernels" / "scale.cu").write_text(KERNEL)
        (self.dir / "kernels" / "tile.cuh").write_text("#pragma once\n#define TILE_FACTOR 2.0f\n")
        (self.dir / "spaces" / "scale.toml").write_text(SPACE)
        self.build = self.dir / "build"
        self.m = clitest.manifest(self.build / "tune" / "scale" / "manifest.json", self.dir,
                                  "scale", build=self.build, archs=["sm_80", "sm_90"],
                                  runner=None, tuner=TUNER)

    def tuner(self, *args):
        return subprocess.run([TUNER, *map(str, args)], capture_output=True, text=True,
                              env=clitest.env(), timeout=300)

    def test_config_ids_in_any_order_and_a_missing_param(self):
        r = self.tuner("record", "set", "--manifest", self.m, "--arch", "sm_90", "--bucket",
                       "small", "--config", "ITEMS=2,BLOCK=128")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("pinned bucket 'small' to BLOCK=128,ITEMS=2", r.stdout)
        r = self.tuner("record", "set", "--manifest", self.m, "--arch", "sm_90", "--bucket",
                       "small", "--config", "ITEMS=2")
        self.assertEqual(r.returncode, 2)
        self.assertIn("is not in the space", r.stderr)
        self.assertIn(": it lacks 'BLOCK'\n", r.stderr)

    def test_status_names_repin_and_repin_brings_every_stale_record_back(self):
        pins = {("sm_80", "small"): "BLOCK=64,ITEMS=1", ("sm_80", "large"): "BLOCK=128,ITEMS=2",
                ("sm_90", "small"): "BLOCK=128,ITEMS=1", ("sm_90", "large"): "BLOCK=64,ITEMS=2"}
        for (arch, bucket), cid in pins.items():
            r = self.tuner("record", "set", "--manifest", self.m, "--arch", arch, "--bucket",
                           bucket, "--config", cid)
            self.assertEqual(r.returncode, 0, r.stderr)
        fresh = self.tuner("status", "--manifest", self.m)
        self.assertNotIn("repin", fresh.stdout)
        self.assertIsNone(json.loads(self.tuner("status", "--manifest", self.m, "--json")
                                     .stdout)["repin"])
        # A teammate edits the shared header: every entry is stale.
        (self.dir / "kernels" / "tile.cuh").write_text(
            "#pragma once\n#define TILE_FACTOR 2.0f\n// round_up\n")
        for arch in ("sm_80", "sm_90"):
            self.assertEqual(self.tuner("verify", "--manifest", self.m, "--arch", arch)
                             .returncode, 1)
        status = self.tuner("status", "--manifest", self.m)
        self.assertIn("stale", status.stdout)
        repin_line = f"tuner record repin --manifest {self.m}"
        self.assertIn("without a GPU: " + repin_line + "\n", status.stdout)
        self.assertEqual(json.loads(self.tuner("status", "--manifest", self.m, "--json")
                                    .stdout)["repin"], repin_line)
        r = self.tuner("record", "repin", "--manifest", self.m)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("tuner record repin: 4 entries pinned again in 2 stale records\n", r.stdout)
        for arch in ("sm_80", "sm_90"):
            v = self.tuner("verify", "--manifest", self.m, "--arch", arch)
            self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
            record = json.loads((self.dir / "records" / f"scale.{arch}.json").read_text())
            got = {e["bucket"]: e["config"]["id"] for e in record["entries"]}
            self.assertEqual(got, {b: c for (a, b), c in pins.items() if a == arch})
        # Nothing stale: nothing to do.
        r = self.tuner("record", "repin", "--manifest", self.m)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("tuner record repin: 0 entries pinned again in 0 stale records\n", r.stdout)
        self.assertNotIn("repin", self.tuner("status", "--manifest", self.m).stdout)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
