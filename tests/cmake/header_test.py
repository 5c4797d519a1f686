#!/usr/bin/env python3
"""tune_generate_header end to end, and a kernel tuned for two architectures.

The consumer (tests/cmake/header, over the kernels of tests/cmake/consumer) declares `scale`
for sm_80 and sm_90 and compiles a host-only program, `pick`, against the generated header.
The steps build on each other (one build tree), so they run in order: test_1 ... test_6.
"""

import datetime
import shutil
import unittest

import consumer
from consumer import HERE, Project

SHAPES = ["80", "4096", "fast", "90", "4096", "fast", "90", "65536", "slow", "90", "65537",
          "fast", "75", "4096", "fast", "86", "4096", "fast", "100", "4096", "fast"]


class HeaderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.p = Project("header")
        shutil.copytree(HERE / "header", cls.p.src, dirs_exist_ok=True)
        cls.configure = cls.p.configure()
        assert cls.configure.rc == 0, cls.configure
        cls.header = cls.p.build / "winners" / "scale_winners.hpp"
        cls.records = cls.p.src / "records"

    def pick(self):
        return consumer.run([self.p.build / "pick", *SHAPES])

    def build_pick(self):
        return self.p.build_target("pick")

    def pin(self, arch, bucket, config):
        r = self.p.tuner("record", "set", "--manifest", self.p.manifest("scale"), "--arch", arch,
                         "--bucket", bucket, "--config", config)
        self.assertEqual(r.rc, 0, r)

    def test_1_two_architectures_give_two_records_warm_targets_and_tests(self):
        self.assertIn("-- tune: scale: 4 candidates for sm_80, sm_90\n", self.configure.stdout)
        tests = consumer.run(["ctest", "--test-dir", self.p.build, "-N", "-L", "records"])
        self.assertIn("Test #1: record.scale.sm_80\n", tests.stdout)
        self.assertIn("Test #2: record.scale.sm_90\n", tests.stdout)
        self.assertIn("Total Tests: 2\n", tests.stdout)
        targets = consumer.run([consumer.ARGS.cmake, "--build", self.p.build, "--target", "help"])
        for t in ("/CMakeFiles/warm.scale.sm_80: phony\n", "/CMakeFiles/warm.scale.sm_90: phony\n"):
            self.assertIn(t, targets.stdout)
        # The header's target is no longer a top-level one: pick (TARGETS) depends on it.
        every = consumer.run(["ninja", "-C", self.p.build, "-t", "targets", "all"])
        self.assertIn("\ntune_header.scale: phony\n", every.stdout)
        stamps = [line for line in targets.stdout.splitlines() if "/warm/c-" in line]
        self.assertEqual(len([s for s in stamps if "/scale/sm_80/warm/" in s]), 4)
        self.assertEqual(len([s for s in stamps if "/scale/sm_90/warm/" in s]), 4)

    def test_2_missing_records_fall_back_to_the_first_incumbent(self):
        b = self.build_pick()
        self.assertEqual(b.rc, 0, b)
        for arch in ("sm_80", "sm_90"):
            self.assertIn(f"records/scale.{arch}.json: warning: no record for 'scale' {arch}: the "
                          "header uses the first incumbent of spaces/scale.toml\n", b.stdout)
        text = self.header.read_text()
        self.assertIn("// sm_80: no record (records/scale.sm_80.json is missing)\n", text)
        self.assertIn("// sm_90 'even': BLOCK=128,UNROLL=1 (fallback: first incumbent)\n", text)
        run = self.pick()
        self.assertEqual(run.rc, 0, run)
        self.assertEqual(run.stdout.splitlines(), [
            "sm 80 N=4096 MODE=fast: small: BLOCK=128 UNROLL=1 (BLOCK=128,UNROLL=1; fallback: "
            "first incumbent)",
            "sm 90 N=4096 MODE=fast: small: BLOCK=128 UNROLL=1 (BLOCK=128,UNROLL=1; fallback: "
            "first incumbent)",
            "sm 90 N=65536 MODE=slow: even: BLOCK=128 UNROLL=1 (BLOCK=128,UNROLL=1; fallback: "
            "first incumbent)",
            "sm 90 N=65537 MODE=fast: no bucket takes this shape",
            "sm 75: not tuned for this architecture",
            "sm 86 N=4096 MODE=fast: small: BLOCK=128 UNROLL=1 (BLOCK=128,UNROLL=1; fallback: "
            "first incumbent)",
            "sm 100: not tuned for this architecture",
        ])
        again = self.build_pick()
        self.assertEqual(again.rc, 0, again)
        self.assertIn("ninja: no work to do.", again.stdout)

    def test_3_pinned_records_regenerate_the_header_per_architecture(self):
        self.pin("sm_80", "small", "BLOCK=256,UNROLL=1")
        self.pin("sm_80", "even", "BLOCK=256,UNROLL=2")
        self.pin("sm_90", "small", "BLOCK=128,UNROLL=2")
        self.pin("sm_90", "even", "BLOCK=256,UNROLL=1")
        b = self.build_pick()
        self.assertEqual(b.rc, 0, b)
        self.assertNotIn("warning", b.stdout)
        text = self.header.read_text()
        today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        self.assertIn(f"// sm_80: record records/scale.sm_80.json ({today}), fresh\n", text)
        self.assertIn(f"// sm_90: record records/scale.sm_90.json ({today}), fresh\n", text)
        origin80 = f"record records/scale.sm_80.json ({today})"
        origin90 = f"record records/scale.sm_90.json ({today})"
        run = self.pick()
        self.assertEqual(run.rc, 0, run)
        self.assertEqual(run.stdout.splitlines(), [
            f"sm 80 N=4096 MODE=fast: small: BLOCK=256 UNROLL=1 (BLOCK=256,UNROLL=1; {origin80})",
            f"sm 90 N=4096 MODE=fast: small: BLOCK=128 UNROLL=2 (BLOCK=128,UNROLL=2; {origin90})",
            f"sm 90 N=65536 MODE=slow: even: BLOCK=256 UNROLL=1 (BLOCK=256,UNROLL=1; {origin90})",
            "sm 90 N=65537 MODE=fast: no bucket takes this shape",
            "sm 75: not tuned for this architecture",
            # 8.6 runs sm_80's code: the header hands it sm_80's winner.
            f"sm 86 N=4096 MODE=fast: small: BLOCK=256 UNROLL=1 (BLOCK=256,UNROLL=1; {origin80})",
            "sm 100: not tuned for this architecture",
        ])

    def test_4_both_record_tests_pass(self):
        r = consumer.run(["ctest", "--test-dir", self.p.build, "-L", "records"])
        self.assertEqual(r.rc, 0, r)
        # CTest 3.x says "100% tests passed, 0 tests failed out of 2", CTest 4.x leaves out the
        # middle part.
        self.assertRegex(r.stdout, r"100% tests passed(, 0 tests failed)? out of 2")

    def test_5_a_stale_record_still_builds_with_a_warning(self):
        kernel = self.p.src / "kernels" / "scale.cu"
        kernel.write_text(kernel.read_text() + "// edited after tuning\n")
        b = self.build_pick()
        self.assertEqual(b.rc, 0, b)
        self.assertIn("Generating the winners header of scale", b.stdout)
        for arch in ("sm_80", "sm_90"):
            self.assertIn(f"records/scale.{arch}.json: warning: stale record used for the header "
                          f"of 'scale' {arch}: source_hash:", b.stdout)
        self.assertIn("records/scale.sm_90.json: note: re-tune with: cmake --build "
                      f"{self.p.build} --target tune.scale\n", b.stdout)
        text = self.header.read_text()
        self.assertIn("// sm_90: stale record records/scale.sm_90.json (", text)
        run = self.pick()
        self.assertEqual(run.rc, 0, run)
        self.assertIn("sm 90 N=4096 MODE=fast: small: BLOCK=128 UNROLL=2 (BLOCK=128,UNROLL=2; "
                      "stale record records/scale.sm_90.json (", run.stdout)

    def test_6_the_stale_records_tests_fail(self):
        r = consumer.run(["ctest", "--test-dir", self.p.build, "-L", "records",
                          "--output-on-failure"])
        self.assertNotEqual(r.rc, 0, r)
        self.assertIn("0% tests passed, 2 tests failed out of 2", r.stdout)
        self.assertIn("record.scale.sm_80 (Failed)", r.stdout)
        self.assertIn("record.scale.sm_90 (Failed)", r.stdout)


if __name__ == "__main__":
    consumer.main()
