#!/usr/bin/env python3
"""What `tuner warm` says of invalid candidates, with the real nvcc (compile-only, a tiny
kernel):

- a bucket whose every candidate is invalid fails the warm (exit 1), naming the bucket, and the
  candidates that failed the same way are one line with a count, not one line each; a single
  build step (--stamp) still succeeds for an invalid candidate, and says nothing of it (the
  summary after the steps does, grouped);
- one invalid candidate among valid ones is a line of its own and no failure;
- after the kernel cache is deleted under a warmed build, the summary removes the stamps of
  the candidates it lost, so that the command it advises compiles them again.
"""
import hashlib
import shutil
import subprocess
import sys
import unittest

import clitest

TUNER, DATA, WORK = clitest.paths()

KERNEL = """#if BLOCK < 64
#error "scale needs BLOCK >= 64"
#endif
extern "C" __global__ void mylib_scale(float* x) {
  x[blockIdx.x * BLOCK + threadIdx.x] *= 2.0f;
}
"""
SPACE = """schema = 1
kernel = "scale"

[params]
BLOCK = [32, 64, 128, 256]
"""


class WarmCli(unittest.TestCase):
    def setUp(self):
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        (self.dir / "kernels").mkdir(parents=True)
        (self.dir / "spaces").mkdir()
        (self.dir / "kernels" / "scale.cu").write_text(KERNEL)
        (self.dir / "spaces" / "scale.toml").write_text(SPACE)
        self.build = self.dir / "build"
        self.cache = self.build / "tune" / "cache"

    def manifest(self, entry="mylib_scale"):
        return clitest.manifest(self.build / "tune" / "scale" / "manifest.json", self.dir, "scale",
                                build=self.build, entry=entry, runner=None, tuner=TUNER)

    def tuner(self, *args):
        return subprocess.run([TUNER, *map(str, args)], capture_output=True, text=True,
                              env=clitest.env(), timeout=300)

    def stamp(self, config_id):
        """The stamp tune_add_kernel gives a warm step (cmake/TuneKernel.cmake)."""
        h = hashlib.sha256(config_id.encode()).hexdigest()[:16]
        return self.build / "tune" / "scale" / "sm_90" / "warm" / f"c-{h}.stamp"

    def test_a_bucket_with_no_valid_candidate_fails_and_one_reason_is_one_line(self):
        m = self.manifest(entry="scale")  # not the symbol: every candidate that compiles fails
        r = self.tuner("warm", "--manifest", m)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("4 invalid (4 failed)", r.stdout)
        lines = r.stdout.splitlines()
        entry = [l for l in lines if "the cubin defines no function 'scale'" in l]
        self.assertEqual(len(entry), 1, r.stdout)
        self.assertTrue(entry[0].startswith(
            "tuner warm: scale sm_90: 3 candidates invalid (failed) the same way: the cubin "
            "defines no function 'scale'"), entry[0])
        self.assertIn("(BLOCK=64, BLOCK=128, BLOCK=256; see ", entry[0])
        # The one that failed another way has a line of its own.
        self.assertIn("tuner warm: scale sm_90 BLOCK=32: invalid (failed): the compiler exited "
                      "with status 1: ", r.stdout)
        self.assertIn("tuner warm: scale sm_90: error: bucket 'default' has no valid candidate "
                      "(all 4 invalid, above): it can never be tuned or pinned; fix the kernel, "
                      "its flags or its space\n", r.stderr)
        # The summary of the build's steps says the same, and fails the same way.
        s = self.tuner("warm", "--manifest", m, "--summary")
        self.assertEqual(s.returncode, 1, s.stdout + s.stderr)
        self.assertEqual([l for l in s.stdout.splitlines() if "defines no function" in l], entry)
        self.assertIn("has no valid candidate", s.stderr)
        # One build step never fails for its invalid candidate, and leaves the telling to the
        # summary.
        step = self.tuner("warm", "--manifest", m, "--arch", "sm_90", "--config", "BLOCK=64",
                          "--stamp", self.stamp("BLOCK=64"))
        self.assertEqual(step.returncode, 0, step.stdout + step.stderr)
        self.assertNotIn("invalid", step.stdout)

    def test_one_invalid_candidate_among_valid_ones_is_no_failure(self):
        r = self.tuner("warm", "--manifest", self.manifest())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("4 candidates: 4 compiled, 0 from the store, 0 already cached; 1 invalid "
                      "(1 failed)", r.stdout)
        self.assertIn("tuner warm: scale sm_90 BLOCK=32: invalid (failed): ", r.stdout)
        self.assertNotIn("error:", r.stderr)

    def test_after_the_cache_is_deleted_the_advice_compiles_again(self):
        m = self.manifest()
        ids = ["BLOCK=32", "BLOCK=64", "BLOCK=128", "BLOCK=256"]
        for cid in ids:  # the build's steps
            step = self.tuner("warm", "--manifest", m, "--arch", "sm_90", "--config", cid,
                              "--stamp", self.stamp(cid), "--depfile", f"{self.stamp(cid)}.d")
            self.assertEqual(step.returncode, 0, step.stderr)
            self.assertTrue(self.stamp(cid).exists())
        self.assertEqual(self.tuner("warm", "--manifest", m, "--summary").returncode, 0)
        shutil.rmtree(self.cache)  # a CI cache rotated under a kept build tree
        s = self.tuner("warm", "--manifest", m, "--summary")
        self.assertEqual(s.returncode, 0, s.stdout + s.stderr)
        self.assertIn(
            f"4 not in the cache (never warmed, or the cache lost them since: their warm steps "
            f"run again on the next 'cmake --build {self.build} --target warm.scale', or 'tuner "
            f"warm --manifest {m} --arch sm_90' compiles them now)", s.stdout)
        # Their stamps are gone, so Ninja runs those steps again.
        for cid in ids:
            self.assertFalse(self.stamp(cid).exists(), cid)
        again = self.tuner("warm", "--manifest", m, "--arch", "sm_90")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertIn("4 candidates: 4 compiled", again.stdout)
        s = self.tuner("warm", "--manifest", m, "--summary")
        self.assertNotIn("not in the cache", s.stdout)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
