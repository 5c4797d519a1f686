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

    def configure(self, body, *defs, archs_unset=True, head=HEAD):
        self.p.write("CMakeLists.txt", head + body + "\n")
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

    def test_remote_store_locations_that_leak_or_escape_are_refused(self):
        # The configure asks the tuner (`tuner store check`), the one reader of locations: its
        # own regular expressions missed a leading blank, and the password went into every
        # manifest.
        creds = ("tune_add_kernel(scale): TUNE_REMOTE_STORE: error: the remote store URL holds "
                 "credentials: remove them and set TUNE_REMOTE_STORE_TOKEN, "
                 "TUNE_REMOTE_STORE_BASIC_AUTH or a netrc file instead (the value is not shown: "
                 "it may hold a secret; docs/store.md says how to pass credentials)")
        query = ("TUNE_REMOTE_STORE: error: the remote store location holds a query, a fragment "
                 "or a parameter ('?', '#' or ';'): a token belongs in TUNE_REMOTE_STORE_TOKEN, "
                 "never in the location")
        dots = ("TUNE_REMOTE_STORE: error: the remote store location holds a '.' or '..' "
                "segment: name the store's own folder")
        control = ("TUNE_REMOTE_STORE: error: the remote store location holds a control "
                   "character, a bidi control or bytes that are not UTF-8: write it as plain text")
        try:
            for location, message in [
                    ("HTTP://bob:s3cr3t@host/store", creds),
                    ("http://host/store?token=s3cr3t", query),
                    ("http://host/store#s3cr3t", query),
                    (" http://bob:s3cr3t@host/store", creds),
                    ("\thttp://bob:s3cr3t@host/store ", creds),
                    ("http://host/store;token=s3cr3t", query),
                    ("http://host/store/../../etc", dots),
                    ("http://host/store/%2e%2e/etc", dots),
                    ("http://host/s3cr3t\x1b[31m", control),
                    ("http://host/s3cr3t\u202e", control)]:
                result = self.configure(DECLARE, f"-DTUNE_REMOTE_STORE={location}")
                self.assertNotEqual(result.rc, 0, result)
                self.assertIn(squash(message), squash(result.stderr), result)
                self.assertNotIn("s3cr3t", result.stderr + result.stdout)
            # What the manifest gets is what the tuner read: without the blanks, the scheme in
            # lowercase, no trailing '/'.
            result = self.configure(DECLARE, "-DTUNE_REMOTE_STORE= HTTP://cache:8080/tune/ ")
            self.assertEqual(result.rc, 0, result)
            manifest = json.loads(self.p.manifest("scale").read_text())
            self.assertEqual(manifest["remote_store"], "http://cache:8080/tune")
        finally:
            self.configure(DECLARE, "-DTUNE_REMOTE_STORE=")
        manifest = json.loads(self.p.manifest("scale").read_text())
        self.assertEqual(manifest["remote_store"], "")

    def test_warm_jobs_past_the_tuners_range_are_refused(self):
        # TUNE_WARM_JOBS=2000 configured and warmed, and then the tune target failed on
        # --compile-jobs' range.
        try:
            for jobs in ["2000", "99999999999", "0", "abc"]:
                self.assert_fails(DECLARE, f"TUNE_WARM_JOBS='{jobs}' must be a whole number of "
                                  "jobs in [1, 1024]", f"-DTUNE_WARM_JOBS={jobs}")
            result = self.configure(DECLARE, "-DTUNE_WARM_JOBS=1024")
            self.assertEqual(result.rc, 0, result)
        finally:
            self.configure(DECLARE, "-DTUNE_WARM_JOBS=2")

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

    def test_two_kernels_with_one_cxx_name_are_refused(self):
        # Both were accepted, and a program including both generated headers failed on
        # `redefinition of 'tune_winners::sax_py::kernel'`.
        for kernel in ["sax-py", "sax_py"]:
            self.p.write(f"spaces/{kernel}.toml",
                         (self.p.src / "spaces/scale.toml").read_text().replace('"scale"', f'"{kernel}"'))
        self.assert_fails(
            "tune_add_kernel(sax-py SOURCE kernels/scale.cu SPACE spaces/sax-py.toml "
            "RECORD records/a.json ENTRY scale ARCH sm_90)\n"
            "tune_add_kernel(sax_py SOURCE kernels/scale.cu SPACE spaces/sax_py.toml "
            "RECORD records/b.json ENTRY scale ARCH sm_90)",
            "tune_add_kernel(sax_py): kernels 'sax-py' and 'sax_py' have one C++ name, 'sax_py' "
            "(the namespaces tune::kernel::sax_py and tune_winners::sax_py of their generated "
            "headers): rename one of them")

    def test_inherited_definition_with_quotes_is_refused(self):
        self.assert_fails(
            "add_library(quoted INTERFACE)\n"
            "target_compile_definitions(quoted INTERFACE VERSION_STR=\"1.2\")\n"
            f"tune_add_kernel(scale {GOOD} ARCH sm_90 LINK_LIBRARIES quoted)",
            "tune_add_kernel(scale): the definition 'VERSION_STR=\"1.2\"' inherited from "
            "LINK_LIBRARIES 'quoted' holds a quote or a backslash, which the kernel manifest "
            "cannot carry: define it without them (e.g. through a header), or pass it in "
            "DEFINITIONS")

    def test_inherited_definition_with_quotes_deeper_down_is_refused(self):
        self.assert_fails(
            "add_library(inner INTERFACE)\n"
            "target_compile_definitions(inner INTERFACE VERSION_STR=\"1.2\")\n"
            "add_library(middle INTERFACE)\n"
            "target_link_libraries(middle INTERFACE inner)\n"
            "add_library(outer INTERFACE)\n"
            "target_link_libraries(outer INTERFACE middle scale_defs)\n"
            f"tune_add_kernel(scale {GOOD} ARCH sm_90 LINK_LIBRARIES outer)",
            "tune_add_kernel(scale): the definition 'VERSION_STR=\"1.2\"' inherited from "
            "LINK_LIBRARIES 'outer' (through 'outer' -> 'middle' -> 'inner') holds a quote or a "
            "backslash, which the kernel manifest cannot carry")

    def test_space_of_another_kernel_is_refused(self):
        self.assert_fails(
            "tune_add_kernel(fill2 SOURCE kernels/fill.cu SPACE spaces/fill.toml "
            "RECORD records/fill2.json ARCH sm_90)",
            f"{self.p.src}/spaces/fill.toml:2:1: error: the space is of kernel 'fill', but it is "
            "declared as kernel 'fill2' (tune_add_kernel(fill2)): set kernel = \"fill2\" in the "
            "space, or declare the kernel as 'fill'")

    def space_with_buckets(self, buckets, prune="BLOCK * UNROLL <= N"):
        self.p.write("spaces/buckets.toml",
                     f'schema = 1\nkernel = "scale"\nprune = ["{prune}"]\n\n[params]\n'
                     f'BLOCK = [128, 256]\nUNROLL = [1, 2]\n\n{buckets}')
        return ("tune_add_kernel(scale SOURCE kernels/scale.cu SPACE spaces/buckets.toml "
                "RECORD records/scale.json ARCH sm_90)")

    def test_bucket_after_a_catch_all_is_refused(self):
        call = self.space_with_buckets(
            '[[buckets]]\nname = "all"\nshape = { N = 4096 }\n\n'
            '[[buckets]]\nname = "large"\nwhen = "N > 4096"\nshape = { N = 1048576 }\n')
        self.assert_fails(
            call,
            f"{self.p.src}/spaces/buckets.toml:13:1: error: bucket 'large' is never selected: "
            "bucket 'all' (line 9) before it has no 'when' and takes every shape: move 'large' "
            "before 'all', or give 'all' a 'when'")

    def test_shadowed_bucket_is_refused(self):
        call = self.space_with_buckets(
            '[[buckets]]\nname = "big"\nwhen = "N >= 1024"\nshape = { N = 1048576 }\n\n'
            '[[buckets]]\nname = "small"\nwhen = "N <= 4096"\nshape = { N = 4096 }\n')
        self.assert_fails(
            call,
            f"{self.p.src}/spaces/buckets.toml:14:1: error: bucket 'small' is shadowed: its own "
            "shape (N=4096) selects bucket 'big' (line 9, when 'N >= 1024'), which comes first, "
            "so its winner would never run for the shape it is tuned on: move 'small' before "
            "'big', or narrow the 'when' of 'big'")

    def test_bucket_without_candidates_is_refused(self):
        call = self.space_with_buckets(
            '[[buckets]]\nname = "tiny"\nwhen = "N < 128"\nshape = { N = 64 }\n\n'
            '[[buckets]]\nname = "large"\nshape = { N = 1048576 }\n')
        self.assert_fails(
            call,
            f"{self.p.src}/spaces/buckets.toml:9:1: error: bucket 'tiny' keeps no config after "
            "pruning, so it can never have a winner: loosen the 'prune' expressions for its "
            "shape (N=64) or add a [[configs]] entry that passes them")

    def test_space_without_candidates_is_refused(self):
        call = self.space_with_buckets("", prune="BLOCK > 1000")
        self.assert_fails(
            call,
            f"{self.p.src}/spaces/buckets.toml: error: bucket 'default' keeps no config after "
            "pruning, so it can never have a winner")

    def test_removed_kernel_leaves_no_stale_manifest(self):
        both = (f"{DECLARE}\ntune_add_kernel(fill SOURCE kernels/fill.cu SPACE spaces/fill.toml "
                "RECORD records/fill.json ARCH sm_90)")
        result = self.configure(both)
        self.assertEqual(result.rc, 0, result)
        tune_dir = self.p.build / "tune"
        self.assertEqual((tune_dir / "kernels.list").read_text(), "scale\nfill\n")
        self.assertTrue(self.p.manifest("fill").exists())
        # Each kernel's status stands alone: a corrupt manifest is its own line, with its error.
        good = self.p.manifest("scale").read_text()
        self.p.manifest("scale").write_text("{ not json")
        status = self.p.tuner("status", "--build-dir", self.p.build)
        self.assertEqual(status.rc, 2, status)
        self.assertRegex(status.stdout, r"(?m)^scale +- +error +.*manifest\.json: ")
        self.assertRegex(status.stdout, r"(?m)^fill +sm_90 +missing +")
        self.assertIn(f"{self.p.manifest('scale')}: error: ", status.stderr)
        self.p.manifest("scale").write_text(good)

        # fill taken out of the CMakeLists: its manifest goes, and status no longer reads it.
        result = self.configure(DECLARE)
        self.assertEqual(result.rc, 0, result)
        self.assertIn("-- tune: removed the manifest of 'fill', no longer declared", result.stdout)
        self.assertEqual((tune_dir / "kernels.list").read_text(), "scale\n")
        self.assertFalse(self.p.manifest("fill").exists())
        # Even a manifest left there by other means is not read: only declared kernels are.
        self.p.manifest("fill").write_text("{ not json")
        status = self.p.tuner("status", "--build-dir", self.p.build)
        self.assertEqual(status.rc, 0, status)
        self.assertNotIn("fill", status.stdout + status.stderr)
        self.assertRegex(status.stdout, r"(?m)^scale +sm_90 +missing +")
        self.p.manifest("fill").unlink()

    def test_a_project_without_testing_is_warned_once_naming_the_kernels(self):
        both = (f"{DECLARE}\ntune_add_kernel(fill SOURCE kernels/fill.cu SPACE spaces/fill.toml "
                "RECORD records/fill.json ARCH sm_90)")
        untested = HEAD.replace("enable_testing()\n", "")
        result = self.configure(both, head=untested)
        self.assertEqual(result.rc, 0, result)
        warning = ("tune: testing is not enabled where kernel(s) scale, fill are declared, so "
                   "their record tests (record.<name>, label records) are not registered")
        self.assertEqual(squash(result.stderr).count(squash(warning)), 1, result)
        self.assertIn("run the gate as `ctest --no-tests=error -L records`", squash(result.stderr))
        # Why it matters: plain ctest passes on no test, the documented gate does not.
        plain = consumer.run(["ctest", "--test-dir", self.p.build, "-L", "records"])
        self.assertEqual(plain.rc, 0, plain)
        gate = consumer.run(["ctest", "--test-dir", self.p.build, "--no-tests=error", "-L",
                             "records"])
        self.assertNotEqual(gate.rc, 0, gate)
        # Testing enabled in the top directory: no warning, and the gate finds both tests (they
        # fail: no record is committed).
        result = self.configure(both)
        self.assertEqual(result.rc, 0, result)
        self.assertNotIn("testing is not enabled", result.stderr)
        listed = consumer.run(["ctest", "--test-dir", self.p.build, "-N", "-L", "records"])
        self.assertIn("Total Tests: 2", listed.stdout, listed)
        # BUILD_TESTING=OFF is a choice: no warning.
        result = self.configure(both, "-DBUILD_TESTING=OFF", head=untested)
        self.assertEqual(result.rc, 0, result)
        self.assertNotIn("testing is not enabled", result.stderr)
        # A kernel declared in a subdirectory that the top-level file adds before
        # enable_testing() is not tested either: only it is named.
        self.p.write("sub/CMakeLists.txt",
                     "tune_add_kernel(fill SOURCE ../kernels/fill.cu SPACE ../spaces/fill.toml "
                     "RECORD ../records/fill.json ARCH sm_90)\n")
        result = self.configure(f"{DECLARE}\nadd_subdirectory(sub)\nenable_testing()",
                                "-UBUILD_TESTING", head=untested)
        self.assertEqual(result.rc, 0, result)
        self.assertIn("tune: testing is not enabled where kernel(s) fill are declared",
                      squash(result.stderr))

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
            "NAMESPACE, TARGETS, INCLUDES, TYPE_PARAMS)")

    def test_header_targets_that_are_not_targets(self):
        self.assert_header_fails(
            "tune_generate_header(scale OUTPUT w/scale.hpp TARGETS app)",
            "tune_generate_header(scale): TARGETS 'app' is not a target: define it before "
            "tune_generate_header, or link the library tune_winners.scale where you define it")

    def test_header_keyword_without_value(self):
        self.assert_header_fails("tune_generate_header(scale OUTPUT w/scale.hpp NAMESPACE)",
                                 "tune_generate_header(scale): NAMESPACE given without a value")

    def test_header_missing_output(self):
        self.assert_header_fails(
            "tune_generate_header(scale NAMESPACE app)",
            "tune_generate_header(scale): OUTPUT is required: tune_generate_header(<name> "
            "OUTPUT <file.hpp> [NAMESPACE <ns>] [TARGETS <target>...])")

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
