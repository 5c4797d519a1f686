#!/usr/bin/env python3
"""One identity for every reused result (docs/manifest.md "Identity"), through the tuner with the
real nvcc (compile-only, tiny kernels):

- the entry symbol is in the cache key: a wrong ENTRY's `failed` verdict is not served to the
  fixed build, and `tuner warm --retry-invalid` compiles cached invalid entries again;
- warm names a param that never changes the binary;
- `tuner key --explain` works for a kernel of several architectures;
- a record names, in a tree with no kernel cache, exactly the header that changed.
"""
import json
import shutil
import subprocess
import sys
import unittest

import clitest

TUNER, DATA, WORK = clitest.paths()

KERNEL = """#include "tile.cuh"
extern "C" __global__ void mylib_scale(float* x) {
  x[blockIdx.x * BLOCK + threadIdx.x] *= TILE_FACTOR;
}
"""
SPACE = """schema = 1
kernel = "scale"

[params]
BLOCK = [64, 128]
ITEMS = [1, 2]
"""


class IdentityCli(unittest.TestCase):
    def setUp(self):
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        (self.dir / "kernels").mkdir(parents=True)
        (self.dir / "spaces").mkdir()
        (self.dir / "kernels" / "scale.cu").write_text(KERNEL)
        (self.dir / "kernels" / "tile.cuh").write_text("#pragma once\n#define TILE_FACTOR 2.0f\n")
        (self.dir / "spaces" / "scale.toml").write_text(SPACE)
        self.build = self.dir / "build"
        self.cache = self.build / "tune" / "cache"

    def manifest(self, entry="scale", archs=("sm_90",)):
        return clitest.manifest(self.build / "tune" / "scale" / "manifest.json", self.dir, "scale",
                                build=self.build, entry=entry, archs=list(archs),
                                runner=None, tuner=TUNER)

    def tuner(self, *args):
        return subprocess.run([TUNER, *map(str, args)], capture_output=True, text=True,
                              env=clitest.env(), timeout=300)

    def test_a_wrong_entry_is_not_served_to_the_fixed_build_and_retry_compiles_again(self):
        wrong = self.tuner("warm", "--manifest", self.manifest(entry="scale"))
        self.assertEqual(wrong.returncode, 1, wrong.stderr)  # no valid candidate is left
        self.assertIn("4 invalid (4 failed)", wrong.stdout)
        self.assertIn("the cubin defines no function 'scale'", wrong.stdout)
        self.assertIn("--retry-invalid", wrong.stderr)  # how to drop what the mistake cached
        # The fix the message suggests: the entry's symbol. A new key, compiled anew.
        fixed = self.tuner("warm", "--manifest", self.manifest(entry="mylib_scale"))
        self.assertEqual(fixed.returncode, 0, fixed.stderr)
        self.assertIn("4 candidates: 4 compiled, 0 from the store, 0 already cached; none invalid",
                      fixed.stdout)
        # The wrong entry's verdicts are still cached under their own keys: --retry-invalid
        # compiles them again (and they fail again, for the same reason).
        again = self.tuner("warm", "--manifest", self.manifest(entry="scale"))
        self.assertIn("0 compiled, 0 from the store, 4 already cached; 4 invalid", again.stdout)
        retried = self.tuner("warm", "--manifest", self.manifest(entry="scale"), "--retry-invalid")
        self.assertEqual(retried.returncode, 1, retried.stderr)
        self.assertIn("4 candidates: 4 compiled, 0 from the store, 0 already cached; 4 invalid",
                      retried.stdout)
        # A valid entry is never compiled again by --retry-invalid.
        valid = self.tuner("warm", "--manifest", self.manifest(entry="mylib_scale"),
                           "--retry-invalid")
        self.assertIn("0 compiled, 0 from the store, 4 already cached; none invalid", valid.stdout)

    def test_warm_names_a_param_that_never_changes_the_binary(self):
        r = self.tuner("warm", "--manifest", self.manifest(entry="mylib_scale"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("tuner warm: scale sm_90: warning: param 'ITEMS' never changes the binary: "
                      "4 candidates, 2 distinct;", r.stderr)
        self.assertNotIn("param 'BLOCK'", r.stderr)
        # The CMake path's summary says the same from the cache.
        s = self.tuner("warm", "--manifest", self.manifest(entry="mylib_scale"), "--summary")
        self.assertIn("warning: param 'ITEMS' never changes the binary", s.stderr)

    def test_key_explain_works_for_several_architectures(self):
        m = self.manifest(entry="mylib_scale", archs=("sm_80", "sm_90"))
        r = self.tuner("key", "--manifest", m, "--config", "BLOCK=64,ITEMS=1", "--explain")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertRegex(lines[0], r"^[0-9a-f]{64}  sm_80$")
        self.assertIn("inputs of cache key k1:", r.stdout)
        self.assertIn("(config BLOCK=64,ITEMS=1, sm_90):", r.stdout)
        self.assertIn("  entry         mylib_scale\n", r.stdout)
        j = json.loads(self.tuner("key", "--manifest", m, "--config", "BLOCK=64,ITEMS=1",
                                  "--json").stdout)
        self.assertEqual([k["arch"] for k in j["keys"]], ["sm_80", "sm_90"])
        one = self.tuner("key", "--manifest", m, "--config", "BLOCK=64,ITEMS=1", "--arch",
                         "sm_90")
        self.assertEqual(one.stdout.strip(), j["keys"][1]["digest"])

    def test_a_record_names_the_header_that_changed_without_a_kernel_cache(self):
        m = self.manifest(entry="mylib_scale")
        pin = self.tuner("record", "set", "--manifest", m, "--bucket", "default", "--config",
                         "BLOCK=64,ITEMS=1")
        self.assertEqual(pin.returncode, 0, pin.stderr)
        record = json.loads((self.dir / "records" / "scale.json").read_text())
        self.assertTrue(record["identity"].startswith("i1:"))
        self.assertEqual(sorted(record["inputs"]["files"]), ["kernels/scale.cu", "kernels/tile.cuh"])
        (self.dir / "kernels" / "tile.cuh").write_text("#pragma once\n#define TILE_FACTOR 3.0f\n")
        shutil.rmtree(self.cache, ignore_errors=True)  # a CI gate's fresh tree
        v = self.tuner("verify", "--manifest", m)
        self.assertEqual(v.returncode, 1, v.stderr)
        self.assertIn("note: the cache key of entry 'default' changed: 'kernels/tile.cuh' "
                      "changed\n",
                      v.stderr)
        s = self.tuner("status", "--manifest", m)
        self.assertIn("stale", s.stdout)
        self.assertIn("'kernels/tile.cuh' changed", s.stdout)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
