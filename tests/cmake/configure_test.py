#!/usr/bin/env python3
"""tune_add_kernel at configure time: the architecture rules, the space check, and every
malformed call stops the configure with a message that names the function.

One scratch project whose CMakeLists.txt is rewritten per case, configured again in the same
build tree (the compiler checks run once).
"""

import json
import unittest

import consumer
from consumer import Project, squash

HEAD = """cmake_minimum_required(VERSION 3.25...4.4)
project(tune_consumer LANGUAGES CXX)
enable_testing()
add_subdirectory("${TUNE_SOURCE_DIR}" tune)
add_library(scale_defs INTERFACE)
target_include_directories(scale_defs INTERFACE ${CMAKE_CURRENT_SOURCE_DIR}/include)
target_compile_definitions(scale_defs INTERFACE SCALE_FACTOR=2.0f)
"""

GOOD = "SOURCE kernels/scale.cu SPACE spaces/scale.toml RECORD records/scale.json"
DECLARE = f"tune_add_kernel(scale {GOOD} ARCH sm_90)"

KNOWN = ("sm_50, sm_52, sm_53, sm_60, sm_61, sm_62, sm_70, sm_72, sm_75, sm_80, sm_86, sm_87, "
         "sm_89, sm_90, sm_100, sm_101, sm_103, sm_110, sm_120, sm_121")


class ConfigureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.p = Project("configure")

    def configure(self, body, *defs, archs_unset=True):
        self.p.write("CMakeLists.txt", HEAD + body + "\n")
        extra = list(defs)
        if not any(d.startswith("-DTUNE_ARCH=") for d in extra):
            extra.append("-DTUNE_ARCH=")
        if archs_unset and not any(d.startswith("-DCMAKE_CUDA_ARCHITECTURES=") for d in extra):
            extra += ["-U", "CMAKE_CUDA_ARCHITECTURES"]
        return self.p.configure(*extra)

    def assert_fails(self, body, message, *defs, module="TuneKernel.cmake"):
        result = self.configure(body, *defs)
        self.assertNotEqual(result.rc, 0, result)
        self.assertIn(squash(message), squash(result.stderr), result)
        self.assertIn(module, result.stderr)

    def assert_header_fails(self, call, message, declare=DECLARE):
        """`call` after `declare` stops the configure in tune_generate_header with `message`."""
        self.assert_fails(f"{declare}\n{call}", message, module="TuneHeader.cmake")

    def test_unknown_arguments(self):
        self.assert_fails(
            f"tune_add_kernel(scale BOGUS 1 {GOOD} ARCH sm_90)",
            "tune_add_kernel(scale): unknown arguments: BOGUS 1 (expected SOURCE, SPACE, RECORD, "
            "HARNESS, ENTRY, ARCH, LINK_LIBRARIES, COMPILE_OPTIONS, INCLUDE_DIRECTORIES, "
            "DEFINITIONS)")

    def test_missing_required_argument(self):
        self.assert_fails(
            "tune_add_kernel(scale SOURCE kernels/scale.cu RECORD records/scale.json ARCH sm_90)",
            "tune_add_kernel(scale): SPACE is required: tune_add_kernel(<name> SOURCE <kernel.cu> "
            "SPACE <space.toml> RECORD <record.json> ...)")

    def test_keyword_without_value(self):
        self.assert_fails(f"tune_add_kernel(scale {GOOD} ARCH sm_90 ENTRY)",
                          "tune_add_kernel(scale): ENTRY given without a value")

    def test_missing_source_file(self):
        self.assert_fails(
            "tune_add_kernel(scale SOURCE kernels/none.cu SPACE spaces/scale.toml "
            "RECORD records/scale.json ARCH sm_90)",
            f"tune_add_kernel(scale): SOURCE 'kernels/none.cu' does not exist (looked for "
            f"'{self.p.src}/kernels/none.cu')")

    def test_link_library_that_is_not_a_target(self):
        self.assert_fails(
            f"tune_add_kernel(scale {GOOD} ARCH sm_90 LINK_LIBRARIES nope)",
            "tune_add_kernel(scale): LINK_LIBRARIES 'nope' is not a target (declare it before "
            "tune_add_kernel)")

    # -- issue 21: declarations that can never work, and clearer messages ---------------------

    def test_source_that_is_a_directory(self):
        self.assert_fails(
            "tune_add_kernel(scale SOURCE kernels SPACE spaces/scale.toml "
            "RECORD records/scale.json ARCH sm_90)",
            "tune_add_kernel(scale): SOURCE 'kernels' is a directory, expected a .cu file")

    def test_unknown_keyword_after_link_libraries(self):
        self.assert_fails(
            f"tune_add_kernel(scale {GOOD} ARCH sm_90 LINK_LIBRARIES scale_defs HARNES x.cpp)",
            "tune_add_kernel(scale): LINK_LIBRARIES 'HARNES' is not a target, nor a keyword of "
            "tune_add_kernel (SOURCE, SPACE, RECORD, HARNESS, ENTRY, ARCH, LINK_LIBRARIES, "
            "COMPILE_OPTIONS, INCLUDE_DIRECTORIES, DEFINITIONS)")

    def test_two_kernels_may_not_share_a_record(self):
        self.assert_fails(
            f"{DECLARE}\ntune_add_kernel(scale2 SOURCE kernels/scale.cu SPACE spaces/scale.toml "
            "RECORD records/scale.json ARCH sm_90)",
            "tune_add_kernel(scale2): RECORD 'records/scale.json' is already the record of kernel "
            "'scale': give each kernel its own record")

    def test_inherited_definition_with_quotes_is_refused(self):
        self.assert_fails(
            "add_library(quoted INTERFACE)\n"
            "target_compile_definitions(quoted INTERFACE VERSION_STR=\"1.2\")\n"
            f"tune_add_kernel(scale {GOOD} ARCH sm_90 LINK_LIBRARIES quoted)",
            "tune_add_kernel(scale): the definition 'VERSION_STR=\"1.2\"' inherited from "
            "LINK_LIBRARIES 'quoted' holds a quote or a backslash, which the kernel manifest "
            "cannot carry: define it without them (e.g. through a header), or pass it in "
            "DEFINITIONS")

    def test_compile_options_may_not_choose_the_architecture(self):
        self.assert_fails(
            f"tune_add_kernel(scale {GOOD} ARCH sm_90 COMPILE_OPTIONS -lineinfo -arch=sm_80)",
            "tune_add_kernel(scale): COMPILE_OPTIONS may not choose the architecture or the "
            "output ('-arch=sm_80'): warm compiles a cubin per ARCH")

    def test_unknown_architecture(self):
        self.assert_fails(
            f"tune_add_kernel(scale {GOOD} ARCH sm_91)",
            f"tune_add_kernel(scale): unknown architecture 'sm_91' in ARCH; known: {KNOWN} "
            f"(optionally with an 'a' or 'f' suffix)")

    def test_bare_architecture_number(self):
        self.assert_fails(f"tune_add_kernel(scale {GOOD} ARCH 90)",
                          "tune_add_kernel(scale): ARCH '90' is not of the form sm_XX: did you "
                          "mean 'sm_90'?")

    def test_no_architecture_at_all(self):
        self.assert_fails(
            f"tune_add_kernel(scale {GOOD})",
            "tune_add_kernel(scale): no architecture chosen: pass ARCH sm_90 or "
            "-DTUNE_ARCH=sm_90 (or set CMAKE_CUDA_ARCHITECTURES explicitly)")

    def test_native_cuda_architectures_refused(self):
        self.assert_fails(
            f"tune_add_kernel(scale {GOOD})",
            "tune_add_kernel(scale): CMAKE_CUDA_ARCHITECTURES='native' does not name the "
            "architectures a record is tuned for: pass ARCH sm_90 or -DTUNE_ARCH=sm_90",
            "-DCMAKE_CUDA_ARCHITECTURES=native")

    def test_tune_arch_all_refused(self):
        self.assert_fails(
            f"tune_add_kernel(scale {GOOD})",
            "tune_add_kernel(scale): TUNE_ARCH 'all' is not an architecture a record can be "
            "tuned for: pass ARCH sm_90 or -DTUNE_ARCH=sm_90 (the architectures of the GPUs you "
            "tune on)",
            "-DTUNE_ARCH=all")

    def test_cmake_default_cuda_architectures_refused(self):
        # enable_language(CUDA) fills in the compiler's default when nobody chose one.
        self.p.write("CMakeLists.txt", HEAD + "enable_language(CUDA)\n"
                     f"tune_add_kernel(scale {GOOD})\n")
        result = self.p.configure("-DTUNE_ARCH=", "-U", "CMAKE_CUDA_ARCHITECTURES")
        self.assertNotEqual(result.rc, 0, result)
        self.assertRegex(
            squash(result.stderr),
            r"tune_add_kernel\(scale\): no architecture chosen \(CMAKE_CUDA_ARCHITECTURES is "
            r"CMake's default '[0-9a-z;-]+'\): pass ARCH sm_90 or -DTUNE_ARCH=sm_90")

    def test_space_that_does_not_parse(self):
        self.p.write("spaces/bad.toml",
                     'schema = 1\nkernel = "scale"\n\n[params]\nBLOCK = [128, "x"]\n')
        diag = self.p.tuner("space", self.p.src / "spaces" / "bad.toml")
        self.assertEqual(diag.rc, 2, diag)
        self.assert_fails(
            "tune_add_kernel(scale SOURCE kernels/scale.cu SPACE spaces/bad.toml "
            "RECORD records/scale.json ARCH sm_90)",
            f"tune_add_kernel(scale): SPACE '{self.p.src}/spaces/bad.toml' is not a valid space:\n"
            f"{diag.stderr.strip()}\n(read by '{consumer.ARGS.tuner}'; fix the space file "
            f"and configure again)")

    def test_a_tuner_that_cannot_list_the_architectures(self):
        self.assert_fails(
            f"tune_add_kernel(scale {GOOD} ARCH sm_90)",
            "tune_add_kernel(scale): '/bin/false archs' did not list the known architectures "
            "(1): point TUNE_TUNER_EXECUTABLE at a tuner of this tune version",
            "-DTUNE_TUNER_EXECUTABLE=/bin/false")

    def test_template_entry_placeholder_naming_no_param(self):
        self.assert_fails(
            f'tune_add_kernel(scale {GOOD} ARCH sm_90 ENTRY "scale_t<{{BLOK}}>")',
            "tune_add_kernel(scale): ENTRY 'scale_t<{BLOK}>' (column 10): placeholder '{BLOK}' "
            "of template entry 'scale_t<{BLOK}>' names no param of 'scale' (params: 'BLOCK', "
            "'UNROLL'), did you mean 'BLOCK'?")

    def test_embed_winners_of_an_undeclared_kernel(self):
        self.assert_fails(
            f"{DECLARE}\nadd_executable(app app.cpp)\ntune_embed_winners(app KERNELS gemm)",
            "tune_embed_winners(app): no kernel 'gemm' (declared: scale): declare it with "
            "tune_add_kernel before tune_embed_winners", module="TuneEmbed.cmake")

    def test_header_unknown_arguments(self):
        self.assert_header_fails(
            "tune_generate_header(scale OUTPUT w/scale.hpp BOGUS 1)",
            "tune_generate_header(scale): unknown arguments: BOGUS 1 (expected OUTPUT, "
            "NAMESPACE)")

    def test_header_keyword_without_value(self):
        self.assert_header_fails("tune_generate_header(scale OUTPUT w/scale.hpp NAMESPACE)",
                                 "tune_generate_header(scale): NAMESPACE given without a value")

    def test_header_missing_output(self):
        self.assert_header_fails(
            "tune_generate_header(scale NAMESPACE app)",
            "tune_generate_header(scale): OUTPUT is required: tune_generate_header(<name> "
            "OUTPUT <file.hpp> [NAMESPACE <ns>])")

    def test_header_bad_kernel_name(self):
        self.assert_header_fails(
            "tune_generate_header(.scale OUTPUT w/scale.hpp)",
            "tune_generate_header: kernel name '.scale' may hold only letters, digits, '_', '.' "
            "and '-', and may not start with '.'")

    def test_header_of_an_undeclared_kernel(self):
        self.assert_header_fails(
            "tune_generate_header(scael OUTPUT w/scale.hpp)",
            "tune_generate_header(scael): no kernel 'scael' (declared: scale): declare it with "
            "tune_add_kernel before tune_generate_header")
        self.assert_header_fails(
            "tune_generate_header(scale OUTPUT w/scale.hpp)",
            "tune_generate_header(scale): no kernel 'scale' (none is declared yet): declare it "
            "with tune_add_kernel before tune_generate_header", declare="")

    def test_header_twice_for_one_kernel(self):
        self.assert_header_fails(
            "tune_generate_header(scale OUTPUT w/a.hpp)\n"
            "tune_generate_header(scale OUTPUT w/b.hpp)",
            "tune_generate_header(scale): the header of 'scale' is already generated (target "
            "tune_header.scale): call tune_generate_header once per kernel")

    def test_header_namespace_that_is_not_a_namespace_name(self):
        self.assert_header_fails(
            "tune_generate_header(scale OUTPUT w/scale.hpp NAMESPACE app::1st)",
            "tune_generate_header(scale): NAMESPACE 'app::1st' is not a C++ namespace name "
            "(identifiers joined by '::', such as 'app::winners')")

    def test_header_output_that_is_a_directory(self):
        self.assert_header_fails(
            "tune_generate_header(scale OUTPUT CMakeFiles)",
            f"tune_generate_header(scale): OUTPUT 'CMakeFiles' is a directory, expected a header "
            f"file (looked at '{self.p.build}/CMakeFiles')")

    def test_explicit_cuda_architectures_give_one_record_per_arch(self):
        result = self.configure(f"tune_add_kernel(scale {GOOD} LINK_LIBRARIES scale_defs)",
                                "-DCMAKE_CUDA_ARCHITECTURES=80-real;90")
        self.assertEqual(result.rc, 0, result)
        self.assertIn("-- tune: scale: 4 candidates for sm_80, sm_90\n", result.stdout)
        m = json.loads(self.p.manifest("scale").read_text())
        self.assertEqual(m["archs"], ["sm_80", "sm_90"])
        self.assertEqual(m["records"], {"sm_80": f"{self.p.src}/records/scale.sm_80.json",
                                        "sm_90": f"{self.p.src}/records/scale.sm_90.json"})
        tests = consumer.run(["ctest", "--test-dir", self.p.build, "-N"])
        self.assertIn("Test #1: record.scale.sm_80\n", tests.stdout)
        self.assertIn("Test #2: record.scale.sm_90\n", tests.stdout)
        targets = consumer.run(["ninja", "-C", self.p.build, "-t", "targets", "all"]).stdout
        for target in ("warm.scale.sm_80:", "warm.scale.sm_90:", "warm.scale:", "warm:",
                       "tune.scale:", "tune:", "tune-check:"):
            self.assertIn("\n" + target, "\n" + targets)

    def test_space_is_a_configure_dependency(self):
        result = self.configure(f"tune_add_kernel(scale {GOOD} ARCH sm_90)")
        self.assertEqual(result.rc, 0, result)
        self.assertIn("-- tune: scale: 4 candidates for sm_90\n", result.stdout)
        space = self.p.src / "spaces" / "scale.toml"
        space.write_text(space.read_text().replace("BLOCK = [128, 256]", "BLOCK = [64, 128, 256]"))
        # Any build re-runs the configure first, which re-reads the space.
        build = self.p.build_target("tune-check")
        self.assertIn("-- tune: scale: 6 candidates for sm_90\n", build.stdout)
        space.write_text(space.read_text().replace("BLOCK = [64, 128, 256]", "BLOCK = [128, 256]"))


if __name__ == "__main__":
    consumer.main()
