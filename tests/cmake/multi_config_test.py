#!/usr/bin/env python3
"""A consumer under Ninja Multi-Config: a kernel with a HARNESS configures (one manifest for
every configuration, naming one runner path), a configuration's warm and header build, and the
record gate runs with `ctest -C <config>`.

Compile-only: the runner (which would compile tune_core) is never built, nothing runs a GPU.
"""

import json
import unittest

import consumer
from consumer import Project

HARNESS = """// The harness of kernels/scale.cu (configured, never built by this test).
#include <tune/kernel/scale.hpp>
#include <tuner/cuda/harness.hpp>

namespace {

tune::Launch setup(tune::SetupContext& ctx) {
  using namespace tune::kernel::scale;
  const int n = static_cast<int>(ctx.shape().int_(shape::N));
  const auto block = static_cast<unsigned>(ctx.params().int_(param::BLOCK));
  const auto unroll = static_cast<unsigned>(ctx.params().int_(param::UNROLL));
  tune::DeviceBuffer<float> x(n);
  x.fill_random(ctx.rng());
  tune::Function scale = ctx.entry();
  const unsigned grid = (static_cast<unsigned>(n) + block * unroll - 1) / (block * unroll);
  return [=](CUstream stream) { scale.launch(grid, block, 0, stream, x, n); };
}

}  // namespace

TUNE_HARNESS(setup)
"""


class MultiConfigTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.p = Project("multi_config")
        text = (cls.p.src / "CMakeLists.txt").read_text()
        text = text.replace("  ARCH sm_90\n  LINK_LIBRARIES scale_defs)",
                            "  ARCH sm_90\n  HARNESS harness/scale_harness.cpp\n"
                            "  LINK_LIBRARIES scale_defs)")
        # A definition that differs per configuration, as usage requirements often do.
        text = text.replace("target_compile_definitions(scale_defs INTERFACE SCALE_FACTOR=2.0f)",
                            "target_compile_definitions(scale_defs INTERFACE SCALE_FACTOR=2.0f "
                            "$<$<CONFIG:Debug>:SCALE_DEBUG=1>)")
        text += "tune_generate_header(scale OUTPUT winners/scale_winners.hpp)\n"
        assert "HARNESS harness/scale_harness.cpp" in text and "SCALE_DEBUG" in text
        cls.p.write("CMakeLists.txt", text)
        cls.p.write("harness/scale_harness.cpp", HARNESS)
        cls.configure = cls.p.configure("-DTUNE_ARCH=sm_90", generator="Ninja Multi-Config")

    def manifest(self):
        return json.loads(self.p.manifest("scale").read_text())

    def test_1_a_kernel_with_a_harness_configures(self):
        self.assertEqual(self.configure.rc, 0, self.configure)
        self.assertNotIn("written multiple times", self.configure.stderr)
        self.assertIn("-- tune: scale: 4 candidates for sm_90\n", self.configure.stdout)

    def test_2_one_runner_path_for_every_configuration(self):
        runner = self.p.build / "tune" / "scale" / "scale.runner"
        self.assertEqual(self.manifest()["runner"], str(runner))
        # Each configuration's build file names the runner by that path, without a
        # per-configuration folder (tune/scale/Debug/scale.runner).
        for config in ("Debug", "Release", "RelWithDebInfo"):
            ninja = (self.p.build / f"build-{config}.ninja").read_text()
            self.assertIn("build scale.runner: phony tune/scale/scale.runner\n", ninja, config)

    def test_3_the_manifest_carries_one_configuration(self):
        # Ninja Multi-Config's configurations start with Debug: its definition is there.
        self.assertIn("SCALE_DEBUG=1", self.manifest()["definitions"])
        r = self.p.configure("-DTUNE_MANIFEST_CONFIG=Release", generator="Ninja Multi-Config")
        self.assertEqual(r.rc, 0, r)
        self.assertNotIn("SCALE_DEBUG=1", self.manifest()["definitions"])
        self.assertIn("SCALE_FACTOR=2.0f", self.manifest()["definitions"])
        r = self.p.configure("-DTUNE_MANIFEST_CONFIG=Fast", generator="Ninja Multi-Config")
        self.assertNotEqual(r.rc, 0, r)
        self.assertIn("TUNE_MANIFEST_CONFIG 'Fast' is not one of", consumer.squash(r.stderr))
        r = self.p.configure("-DTUNE_MANIFEST_CONFIG=", generator="Ninja Multi-Config")
        self.assertEqual(r.rc, 0, r)

    def test_4_warm_header_and_the_gate_of_a_configuration(self):
        r = self.p.build_target("warm.scale", config="Release")
        self.assertEqual(r.rc, 0, r)
        self.assertIn("4 compiled", r.stdout)
        for bucket, config in (("small", "BLOCK=128,UNROLL=1"), ("large", "BLOCK=256,UNROLL=2")):
            pin = self.p.tuner("record", "set", "--manifest", self.p.manifest("scale"), "--arch",
                               "sm_90", "--bucket", bucket, "--config", config)
            self.assertEqual(pin.rc, 0, pin)
        r = self.p.build_target("tune_header.scale", config="Release")
        self.assertEqual(r.rc, 0, r)
        self.assertTrue((self.p.build / "winners" / "scale_winners.hpp").exists())
        # Under a multi-config generator ctest runs the tests of the configuration -C names.
        gate = consumer.run(["ctest", "--test-dir", self.p.build, "-C", "Release",
                             "--no-tests=error", "-L", "records", "-R", "^record\\.scale$",
                             "--output-on-failure"])
        self.assertEqual(gate.rc, 0, gate)
        self.assertIn("record.scale ", gate.stdout)
        self.assertIn("100% tests passed", gate.stdout)


    def test_5_tune_runners_builds_the_runners_and_nothing_else(self):
        # Issue 46 item 6: what a CI shard job builds before `tuner run --shard`.
        dry = consumer.run([consumer.ARGS.cmake, "--build", self.p.build, "--config", "Release",
                            "--target", "tune-runners", "--", "-n"])
        self.assertEqual(dry.rc, 0, dry)
        self.assertIn("Linking CXX executable tune/scale/scale.runner", dry.stdout)
        self.assertNotIn("warm ", dry.stdout)
        self.assertNotIn("tuner warm", dry.stdout)

    def test_6_the_tune_targets_take_the_total_budget(self):
        # Issue 46 item 11: TUNE_BUDGET_S reaches `tuner tune` of the tune target (every kernel of
        # the build at once) and of each tune.<name>; a value that is not seconds stops the
        # configure.
        r = self.p.configure("-DTUNE_BUDGET_S=3600", generator="Ninja Multi-Config")
        self.assertEqual(r.rc, 0, r)
        ninja = (self.p.build / "CMakeFiles" / "impl-Release.ninja").read_text()
        self.assertRegex(ninja, r"tune --build-dir \S+ --cmake \S+ --compile-jobs \d+ "
                                r"--total-budget 3600")
        self.assertRegex(ninja, r"tune --manifest \S+scale/manifest.json --cmake \S+ "
                                r"--compile-jobs \d+ --total-budget 3600")
        r = self.p.configure("-DTUNE_BUDGET_S=1h", generator="Ninja Multi-Config")
        self.assertNotEqual(r.rc, 0, r)
        self.assertIn("TUNE_BUDGET_S='1h' is not a number of seconds: set -DTUNE_BUDGET_S=3600 "
                      "for an hour, or empty for none", consumer.squash(r.stderr))
        r = self.p.configure("-DTUNE_BUDGET_S=", generator="Ninja Multi-Config")
        self.assertEqual(r.rc, 0, r)
        ninja = (self.p.build / "CMakeFiles" / "impl-Release.ninja").read_text()
        self.assertNotIn("--total-budget", ninja)


if __name__ == "__main__":
    consumer.main()
