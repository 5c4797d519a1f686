#!/usr/bin/env python3
"""The installed package from a clean prefix: `cmake --install` of this build tree into a fresh
prefix, then a consumer (tests/cmake/installed) that finds tune with find_package(Tune CONFIG)
and CMAKE_PREFIX_PATH, declares a kernel, warms its one candidate, generates its winners header
and links tune::core, all with the installed tuner and without tune's sources.
The steps build on each other, so they run in order: test_1 ... test_8.
"""

import json
import re
import shutil
import unittest

import consumer
from consumer import HERE, run


def cxx_flags_of(build):
    """The CMAKE_CXX_FLAGS a tune build tree was configured with: a consumer of a sanitized
    package (the asan preset's) links its instrumented static libraries only with the same
    flags."""
    for line in (build / "CMakeCache.txt").read_text().splitlines():
        if line.startswith("CMAKE_CXX_FLAGS:"):
            return line.split("=", 1)[1]
    return ""


class InstallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tune_build = consumer.ARGS.tuner.resolve().parent.parent
        assert (cls.tune_build / "CMakeCache.txt").exists(), cls.tune_build
        cls.root = consumer.ARGS.work / "install"
        if cls.root.exists():
            shutil.rmtree(cls.root)
        cls.prefix = cls.root / "prefix"
        cls.src = cls.root / "src"
        cls.build = cls.root / "build"
        shutil.copytree(HERE / "installed", cls.src)
        cls.install = run([consumer.ARGS.cmake, "--install", cls.tune_build, "--prefix",
                           cls.prefix])
        assert cls.install.rc == 0, cls.install
        cls.flags = f"-DCMAKE_CXX_FLAGS={cxx_flags_of(cls.tune_build)}"
        cls.configure = run([consumer.ARGS.cmake, "-S", cls.src, "-B", cls.build, "-G", "Ninja",
                             f"-DCMAKE_PREFIX_PATH={cls.prefix}", cls.flags])

    def test_1_the_prefix_holds_the_tool_libraries_headers_and_package(self):
        for rel in ("bin/tuner", "lib/libtune_core.a", "lib/libtune_cuda.a",
                    "lib/libtune_runner.a", "include/tuner/core/base/config.hpp",
                    "include/tuner/core/space/space.hpp", "include/tuner/cuda/harness.hpp",
                    "lib/cmake/Tune/TuneConfig.cmake", "lib/cmake/Tune/TuneConfigVersion.cmake",
                    "lib/cmake/Tune/TuneTargets.cmake", "lib/cmake/Tune/Tune.cmake",
                    "lib/cmake/Tune/TuneHeader.cmake", "lib/cmake/Tune/TuneKernel.cmake"):
            self.assertTrue((self.prefix / rel).is_file(), rel)
        self.assertFalse((self.prefix / "include/tuner/core/base/config.cpp").exists())
        v = run([self.prefix / "bin" / "tuner", "--version"])
        self.assertEqual((v.rc, v.stdout), (0, "tuner 0.1.0\n"))

    def test_2_the_consumer_configures_with_the_installed_tuner(self):
        self.assertEqual(self.configure.rc, 0, self.configure)
        self.assertIn("-- tune: copy: 1 candidates for sm_90\n", self.configure.stdout)
        self.assertNotIn("building the host tuner", self.configure.stdout)
        self.assertFalse((self.build / "_tune_host_tool").exists())
        m = json.loads((self.build / "tune" / "copy" / "manifest.json").read_text())
        self.assertEqual(m["tuner"], str(self.prefix / "bin" / "tuner"))
        cache = (self.build / "CMakeCache.txt").read_text()
        self.assertIn(f"TUNE_TUNER_EXECUTABLE:FILEPATH={self.prefix}/bin/tuner\n", cache)

    def test_3_warm_compiles_the_candidate(self):
        b = run([consumer.ARGS.cmake, "--build", self.build, "--target", "warm"])
        self.assertEqual(b.rc, 0, b)
        log = (self.build / "tune" / "compile.log").read_text().splitlines()
        self.assertEqual([line.split(" ", 1)[1] for line in log], ["BLOCK=128"])
        entries = list((self.build / "tune" / "cache").glob("*.json"))
        self.assertEqual(len(entries), 1)
        self.assertEqual(json.loads(entries[0].read_text())["status"], "ok")

    def test_4_the_runner_links_the_installed_tune_runner(self):
        b = run([consumer.ARGS.cmake, "--build", self.build, "--target", "copy.runner"])
        self.assertEqual(b.rc, 0, b)
        runner = self.build / "tune" / "copy" / "copy.runner"
        m = json.loads((self.build / "tune" / "copy" / "manifest.json").read_text())
        self.assertEqual(m["runner"], str(runner))
        h = run([runner, "--help"])
        self.assertEqual(h.rc, 0, h)
        self.assertIn("measures candidates of one bucket of a tunable kernel on the GPU", h.stdout)

    def test_4b_a_misspelt_name_in_the_harness_does_not_compile(self):
        # The runner finds the kernel's names header by itself; through it a typo is a compile
        # error, not an invalid trial per candidate on the GPU.
        names = self.build / "tune" / "copy" / "include" / "tune" / "kernel" / "copy.hpp"
        self.assertIn('inline constexpr std::string_view BLOCK = "BLOCK";', names.read_text())
        src = self.root / "typo"
        shutil.copytree(HERE / "installed", src)
        harness = src / "copy_harness.cpp"
        harness.write_text(harness.read_text().replace("param::BLOCK", "param::BLOK"))
        build = self.root / "typo_build"
        c = run([consumer.ARGS.cmake, "-S", src, "-B", build, "-G", "Ninja",
                 f"-DCMAKE_PREFIX_PATH={self.prefix}", self.flags])
        self.assertEqual(c.rc, 0, c)
        b = run([consumer.ARGS.cmake, "--build", build, "--target", "copy.runner"])
        self.assertNotEqual(b.rc, 0, b)
        self.assertIn("copy_harness.cpp", b.stdout)
        # (GCC quotes with ‘’ under a UTF-8 locale, with '' under C.)
        self.assertRegex(b.stdout,
                         r"[‘']BLOK[’'] is not a member of [‘']tune::kernel::copy::param[’']")

    def test_5_the_header_and_the_library_work_from_the_prefix(self):
        b = run([consumer.ARGS.cmake, "--build", self.build, "--target", "show_winner",
                 "config_id"])
        self.assertEqual(b.rc, 0, b)
        self.assertIn("records/copy.json: warning: no record for 'copy' sm_90: the header uses "
                      "the first incumbent of spaces/copy.toml\n", b.stdout)
        show = run([self.build / "show_winner"])
        self.assertEqual((show.rc, show.stdout),
                         (0, "default: BLOCK=128 (fallback: first incumbent)\n"))
        cid = run([self.build / "config_id"])
        self.assertEqual((cid.rc, cid.stdout), (0, 'BM=64,LAYOUT="row"\n'))

    def test_6_the_public_headers_are_installed_and_closed(self):
        include = self.prefix / "include"
        installed = {p.relative_to(include).as_posix() for p in include.rglob("*") if p.is_file()}
        # Every core header is public but the internal ones (their first line says so); the
        # CLI's headers are not.
        source = consumer.ARGS.tune_source
        core = {p.relative_to(source).as_posix() for p in (source / "tuner" / "core").rglob("*.hpp")
                if not p.read_text().startswith("// Internal to tune_core (not installed)")}
        self.assertNotIn("tuner/core/space/space_parser.hpp", installed)
        self.assertEqual(core - installed, set())
        self.assertIn("tuner/core/base/version.hpp", installed)
        self.assertEqual([h for h in installed if h.startswith("tuner/cli/")], [])
        self.assertNotIn("tuner/cuda/nvml.hpp", installed)
        # Every `#include <tuner/...>` of an installed header names an installed header, so a
        # consumer compiles with the prefix alone.
        directive = re.compile(r'^\s*#\s*include\s*[<"](tuner/[^>"]+)[>"]', re.MULTILINE)
        missing = []
        for header in sorted(installed):
            for target in directive.findall((include / header).read_text()):
                if target not in installed:
                    missing.append(f"{header} includes {target}")
        self.assertEqual(missing, [])

    def test_7_the_functions_keep_tunes_policies_in_an_older_project(self):
        # find_package defines tune's functions in the consumer's scope, and CMake records the
        # policies where a function is defined: without tune's own policy block they would run
        # under this project's 3.10 settings, where warm's DEPFILE steps leave CMP0116 unset.
        src = self.root / "old_policies"
        shutil.copytree(HERE / "installed", src)
        lists = src / "CMakeLists.txt"
        lists.write_text(lists.read_text().replace("cmake_minimum_required(VERSION 3.25...4.4)",
                                                   "cmake_minimum_required(VERSION 3.10)"))
        r = run([consumer.ARGS.cmake, "-S", src, "-B", self.root / "old_policies_build", "-G",
                 "Ninja", f"-DCMAKE_PREFIX_PATH={self.prefix}", "-DCMAKE_POLICY_WARNING_CMP0116=ON",
                 self.flags])
        self.assertEqual(r.rc, 0, r)
        self.assertIn("-- tune: copy: 1 candidates for sm_90\n", r.stdout)
        self.assertNotIn("Policy CMP0116", r.stderr)
        self.assertNotIn("/lib/cmake/Tune/", r.stderr)

    def test_8_the_ci_recipe_with_a_shared_store_runs_without_a_gpu(self):
        # docs/scaling.md "An installed tuner and a shared store": what its jobs run before the
        # GPU. Two build trees (two runners) share a directory store.
        store = self.root / "store"
        tuner = self.prefix / "bin" / "tuner"

        def configure(build):
            return run([consumer.ARGS.cmake, "-S", self.src, "-B", build, "-G", "Ninja",
                        f"-DCMAKE_PREFIX_PATH={self.prefix}", f"-DTUNE_REMOTE_STORE={store}",
                        self.flags])

        first, second = self.root / "ci_plan", self.root / "ci_shard"
        self.assertEqual(configure(first).rc, 0)
        warm = run([consumer.ARGS.cmake, "--build", first, "--target", "warm"])
        self.assertEqual(warm.rc, 0, warm)
        self.assertIn("tuner warm: copy sm_90: 1 candidates: 1 compiled, 0 from the store, 0 "
                      "already cached; none invalid\n", warm.stdout)
        # The gate: no record yet, so it fails, naming both ways on.
        gate = run(["ctest", "--test-dir", first, "--no-tests=error", "-L", "records",
                    "--output-on-failure"])
        self.assertNotEqual(gate.rc, 0, gate)
        self.assertIn("note: re-tune with: cmake --build", gate.stdout)
        pin = re.search(r"note: or, without a GPU, pin a config instead: (tuner record set .*)",
                        gate.stdout)
        self.assertIsNotNone(pin, gate.stdout)
        self.assertIn("--bucket default --config BLOCK=128", pin.group(1))
        # The plan: the matrix over every kernel of the build.
        plan = run([tuner, "shards", "--build-dir", first, "--count", "2", "--json"])
        self.assertEqual(plan.rc, 0, plan)
        matrix = json.loads(plan.stdout)["include"]
        self.assertEqual([(e["shard"], e["arch"], e["kernels"]) for e in matrix],
                         [("1/2", "sm_90", ["copy"]), ("2/2", "sm_90", ["copy"])])
        self.assertEqual(sum(e["candidates"] for e in matrix), 1)
        # A shard job's runner: another build tree warms from the store and compiles nothing.
        self.assertEqual(configure(second).rc, 0)
        warm = run([consumer.ARGS.cmake, "--build", second, "--target", "warm"])
        self.assertEqual(warm.rc, 0, warm)
        self.assertIn("tuner warm: copy sm_90: 1 candidates: 0 compiled, 1 from the store, 0 "
                      "already cached; none invalid\n", warm.stdout)
        self.assertFalse((second / "tune" / "compile.log").exists())
        # Pinned as the note says (the recipe's way without a GPU), the gate passes.
        args = pin.group(1).split()[1:]
        self.assertEqual(run([tuner, *args]).rc, 0)
        gate = run(["ctest", "--test-dir", second, "--no-tests=error", "-L", "records"])
        self.assertEqual(gate.rc, 0, gate)
        (self.src / "records" / "copy.json").unlink()  # the other steps expect no record

    def test_9_the_runtime_component_alone(self):
        # What the package of a library that embeds winners finds: tune::runtime, and nothing
        # of the tuner (no tune::core, no functions, none of their dependencies looked for).
        src = self.root / "runtime_only"
        src.mkdir(exist_ok=True)
        (src / "CMakeLists.txt").write_text(
            "cmake_minimum_required(VERSION 3.25)\n"
            "project(runtime_only LANGUAGES CXX)\n"
            "find_package(Tune CONFIG REQUIRED COMPONENTS runtime)\n"
            "get_target_property(libs tune::runtime INTERFACE_LINK_LIBRARIES)\n"
            "get_target_property(features tune::runtime INTERFACE_COMPILE_FEATURES)\n"
            "message(STATUS \"runtime: ${Tune_runtime_FOUND} features: ${features} libs: "
            "${libs}\")\n"
            "if(TARGET tune::core OR COMMAND tune_add_kernel OR TARGET fmt::fmt)\n"
            "  message(FATAL_ERROR \"more than the runtime\")\n"
            "endif()\n")
        r = run([consumer.ARGS.cmake, "-S", src, "-B", src / "build", "-G", "Ninja",
                 f"-DCMAKE_PREFIX_PATH={self.prefix}"])
        self.assertEqual(r.rc, 0, r)
        line = re.search(r"-- runtime: TRUE features: cxx_std_17 libs: (.*)\n", r.stdout)
        self.assertIsNotNone(line, r.stdout)
        self.assertIn("$<LINK_ONLY:dl>", line.group(1))
        for heavy in ("tune::", "fmt", "OpenSSL", "CURL", "toml"):
            self.assertNotIn(heavy, line.group(1))
        for rel in ("lib/libtune_runtime.a", "lib/cmake/Tune/TuneRuntimeTargets.cmake",
                    "include/tuner/runtime/embedded.hpp"):
            self.assertTrue((self.prefix / rel).is_file(), rel)


if __name__ == "__main__":
    consumer.main()
