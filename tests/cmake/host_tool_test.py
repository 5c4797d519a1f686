#!/usr/bin/env python3
"""A consumer configured without TUNE_TUNER_EXECUTABLE: the first configure builds the host
tuner (it must read the spaces to write Ninja's graph), the next one only re-checks it, and
build steps run that same tool rather than building the in-tree `tuner` a second time; a
kernel's runner links tune's libraries from the host tool's tree, so that nothing of tune is
compiled twice.

Slow (it compiles tune_core and the tuner; Debug to keep it shorter), so it has its own label.
"""

import json
import unittest

import consumer
from consumer import Project
import multi_config_test  # its harness (not its tests: only the module is imported)


class HostToolTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # A snapshot of the tune sources: the test takes minutes, and edits to the checkout
        # meanwhile would rightly make the second configure rebuild the tool.
        source = consumer.snapshot_tune(consumer.ARGS.work / "tune-src")
        cls.p = Project("host-tool", tuner=False, tune_source=source)
        cls.first = cls.p.configure("-DTUNE_ARCH=sm_90", "-DTUNE_HOST_TOOL_BUILD_TYPE=Debug")

    def test_1_first_configure_builds_the_host_tool(self):
        self.assertEqual(self.first.rc, 0, self.first)
        tool_dir = self.p.build / "_tune_host_tool"
        self.assertIn(f"-- tune: building the host tuner once, in {tool_dir} (log: "
                      f"{tool_dir}.log); its configure and build output follow\n",
                      self.first.stdout)
        # The nested build's progress is in the configure's output, not only in the log.
        self.assertRegex(self.first.stdout, r"\[\d+/\d+\] Linking CXX executable tuner/tuner\n")
        self.assertIn("-- tune: scale: 4 candidates for sm_90\n", self.first.stdout)
        tool = tool_dir / "tuner" / "tuner"
        self.assertTrue(tool.is_file())
        manifest = json.loads(self.p.manifest("scale").read_text())
        self.assertEqual(manifest["tuner"], str(tool))

    def test_2_next_configure_only_rechecks_it(self):
        tool = self.p.build / "_tune_host_tool" / "tuner" / "tuner"
        before = tool.stat().st_mtime_ns
        again = self.p.configure()
        self.assertEqual(again.rc, 0, again)
        self.assertNotIn("building the host tuner", again.stdout)
        self.assertNotIn("bringing the host tuner", again.stdout)
        self.assertNotIn("no work to do", again.stdout)
        self.assertEqual(tool.stat().st_mtime_ns, before)
        log = (self.p.build / "_tune_host_tool.log").read_text()
        self.assertTrue(log.rstrip().endswith("ninja: no work to do."), log[-500:])

    def test_3_build_steps_run_the_host_tool(self):
        warm = self.p.build_target("warm.fill")
        self.assertEqual(warm.rc, 0, warm)
        self.assertIn("Bringing the host tuner up to date", warm.stdout)
        self.assertEqual(sorted(cid for _, cid in self.p.compile_log()),
                         ["BLOCK=128,SHARED_KIB=1", "BLOCK=256,SHARED_KIB=1",
                          "BLOCK=256,SHARED_KIB=64", "BLOCK=64,SHARED_KIB=1"])
        # The in-tree tuner was not built for it.
        self.assertFalse((self.p.build / "tune" / "tuner" / "tuner").exists())

    def test_4_an_edit_of_tune_rebuilds_the_tool_in_view(self):
        tool_dir = self.p.build / "_tune_host_tool"
        (self.p.tune_source / "tuner" / "cli" / "main.cpp").touch()
        again = self.p.configure()
        self.assertEqual(again.rc, 0, again)
        self.assertIn(f"-- tune: bringing the host tuner in {tool_dir} up to date (its build's "
                      f"output follows)\n", again.stdout)
        self.assertRegex(again.stdout, r"\[\d+/\d+\] Linking CXX executable tuner/tuner\n")

    def test_5_all_does_not_build_the_in_tree_tuner(self):
        b = consumer.run([consumer.ARGS.cmake, "--build", self.p.build])
        self.assertEqual(b.rc, 0, b)
        self.assertFalse((self.p.build / "tune" / "tuner" / "tuner").exists())
        self.assertFalse((self.p.build / "tune" / "tuner" / "libtune_core.a").exists())


    def test_6_a_runner_links_the_libraries_of_the_host_tree(self):
        text = (self.p.src / "CMakeLists.txt").read_text()
        text = text.replace("  ARCH sm_90\n  LINK_LIBRARIES scale_defs)",
                            "  ARCH sm_90\n  HARNESS harness/scale_harness.cpp\n"
                            "  LINK_LIBRARIES scale_defs)")
        self.p.write("CMakeLists.txt", text)
        self.p.write("harness/scale_harness.cpp", multi_config_test.HARNESS)
        again = self.p.configure()
        self.assertEqual(again.rc, 0, again)
        self.assertNotIn("building the host tuner", again.stdout)
        b = self.p.build_target("scale.runner")
        self.assertEqual(b.rc, 0, b)
        self.assertIn("Bringing tune's libraries up to date (in the host tuner's tree)", b.stdout)
        self.assertTrue((self.p.build / "tune" / "scale" / "scale.runner").is_file())
        # tune_core and the runner library come from the host tree, compiled there once.
        tool_dir = self.p.build / "_tune_host_tool"
        self.assertTrue((tool_dir / "tuner" / "libtune_runner.a").is_file())
        self.assertFalse((self.p.build / "tune" / "tuner" / "CMakeFiles").exists())
        link = consumer.run(["ninja", "-C", self.p.build, "-t", "commands", "scale.runner"])
        [line] = [l for l in link.stdout.splitlines() if "-o tune/scale/scale.runner" in l]
        # (Ninja names them relative to the build tree.)
        self.assertIn(" _tune_host_tool/tuner/libtune_runner.a ", line)
        self.assertIn(" _tune_host_tool/tuner/libtune_core.a ", line)
        # A second build has nothing to do.
        b = self.p.build_target("scale.runner")
        self.assertEqual(b.rc, 0, b)
        self.assertNotIn("Linking", b.stdout)


if __name__ == "__main__":
    consumer.main(need_tuner=False)
