#!/usr/bin/env python3
"""The harness API through the runner on a GPU (label gpu): tests/gpu/tune_harness_api is copied
to a scratch folder, configured with tune through add_subdirectory and tuned. Its kernel writes
an int per point (inside the unit circle or not) and allows at most 256 threads per block; its
space has BLOCK 128, 256, 512, 1024 and WRONG 0, 1 (WRONG=1 leaves a value per block unwritten).

test_1: `cmake --build build --target tune` finishes with one worker for all eight candidates:
- the fixture's reference was computed in prepare by the module's own naive kernel
  (BucketContext::module), so the correct candidates are measured;
- BLOCK 512 and 1024 are invalid with the launch's refusal (the function's own limit), found
  before launching: no CUDA error, so no worker is replaced;
- WRONG=1 with an allowed block is invalid with the exact check's message, computed on the
  device (tune::check_equal on int buffers);
- the winner is a correct candidate and the record verifies.

Arguments and the TUNE_GPU_E2E gate: gpu_consumer.py.
"""
import json
import sys
import unittest

from gpu_consumer import ARGS, configure, logged, run, skip_unless_enabled

skip_unless_enabled("tune_harness_api")

N = 1048576


class TuneHarnessApi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.src, cls.build, cls.env = configure("tune_harness_api")
        cls.manifest = cls.build / "tune" / "inside" / "manifest.json"
        cls.logdir = cls.build / "tune" / "inside" / ARGS.arch
        cls.log = cls.logdir / "all.trials.jsonl"
        cls.result = cls.logdir / "all.result.json"
        cls.record = cls.src / "records" / "inside.json"

    def test_1_ints_on_the_device_a_reference_in_prepare_and_refused_blocks(self):
        r = run([ARGS.cmake, "--build", self.build, "--target", "tune"], env=self.env)
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, out)
        by_id = {t["config_id"]: t for t in logged(self.log) if t["phase"] != "runoff"}
        self.assertEqual(len(by_id), 8, by_id.keys())
        for block in (128, 256):
            good = by_id[f"BLOCK={block},WRONG=0"]
            self.assertEqual(good["state"], "measured", good)
            wrong = by_id[f"BLOCK={block},WRONG=1"]
            self.assertEqual(wrong["state"], "invalid", wrong)
            self.assertTrue(wrong["reason"].startswith(
                f"'inside' is wrong: {N // block} of {N} values differ from the reference, the "
                f"first 5: at index {block - 1} got -1, expected "), wrong["reason"])
            print(f"tune_harness_api: BLOCK={block},WRONG=1 invalid: {wrong['reason'][:120]}")
        for block in (512, 1024):
            for wrong in (0, 1):
                t = by_id[f"BLOCK={block},WRONG={wrong}"]
                self.assertEqual(t["state"], "invalid", t)
                self.assertTrue(t["reason"].startswith(
                    f"launch of 'inside' refused: a block of {block} threads ({block}x1x1) is "
                    f"more than the 256 that 'inside' allows (it uses "), t["reason"])
        print(f"tune_harness_api: BLOCK=1024 invalid: {by_id['BLOCK=1024,WRONG=0']['reason']}")
        result = json.loads(self.result.read_text())
        self.assertEqual(result["invalid"], 6, result)
        self.assertEqual(result["workers_started"], 1, out)  # no candidate ended its worker
        self.assertIn(result["best"]["config_id"], {"BLOCK=128,WRONG=0", "BLOCK=256,WRONG=0"})
        record = json.loads(self.record.read_text())
        self.assertEqual([e["config"]["id"] for e in record["entries"]],
                         [result["best"]["config_id"]])
        v = run([ARGS.tuner, "verify", "--manifest", self.manifest])
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
