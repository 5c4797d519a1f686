#!/usr/bin/env python3
"""CLI tests for `tuner header`: the generated header compiled into a host program.

Each test copies tests/data/header/project (one kernel, `pick`, with int and string params and
three buckets whose `when` predicates use strings, division, modulo and negation) into a fresh
directory, writes its manifest with clitest.manifest as tune_add_kernel would (sm_80 and sm_90),
pins sm_90 records with `tuner record set`, generates the header and compiles
tests/data/header/check.cpp against it with the host C++ compiler. Only nvcc --version runs; nothing is compiled for a GPU.
"""
import datetime
import json
import os
import shutil
import stat
import subprocess
import sys
import unittest

import clitest

TUNER, DATA_ROOT, WORK = clitest.paths()
DATA = DATA_ROOT / "header"
CXX = shutil.which("c++") or shutil.which("g++")


def run(*args):
    return subprocess.run([TUNER, *map(str, args)], capture_output=True, text=True, timeout=120,
                          errors="replace")


class HeaderCli(unittest.TestCase):
    def setUp(self):
        self.top = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.top, ignore_errors=True)
        self.root = self.top / "src"
        shutil.copytree(DATA / "project", self.root)
        self.manifest = clitest.manifest(self.top / "manifest.json", self.root, "pick",
                                         build=self.top / "build", archs=["sm_80", "sm_90"],
                                         tuner=TUNER)
        self.header = self.top / "out" / "pick_winners.hpp"

    def pin(self, bucket, config):
        r = run("record", "set", "--manifest", self.manifest, "--arch", "sm_90", "--bucket",
                bucket, "--config", config)
        self.assertEqual(r.returncode, 0, r.stderr)

    def generate(self):
        return run("header", "--manifest", self.manifest, "--output", self.header)

    def compile_and_run(self):
        exe = self.top / "check"
        c = subprocess.run([CXX, "-std=c++17", "-Wall", "-Wextra", "-Wconversion", "-Wshadow",
                            "-Werror", "-I", self.header.parent, DATA / "check.cpp", "-o", exe],
                           capture_output=True, text=True)
        self.assertEqual(c.returncode, 0, c.stderr)
        return subprocess.run([exe], capture_output=True, text=True).stdout.splitlines()

    def test_a_namespace_of_the_users_choice_compiles(self):
        # The when predicates use arithmetic: its helpers are named from the global namespace,
        # so the header compiles inside any namespace.
        r = run("header", "--manifest", self.manifest, "--output", self.header, "--namespace",
                "outer::inner")
        self.assertEqual(r.returncode, 0, r.stderr)
        main = self.top / "ns.cpp"
        main.write_text('#include "pick_winners.hpp"\n'
                        "int main() { return outer::inner::select({1024, \"col\", 8}) ? 0 : 1; }\n")
        exe = self.top / "ns"
        c = subprocess.run([CXX, "-std=c++17", "-Wall", "-Werror", "-I", self.header.parent, main,
                            "-o", exe], capture_output=True, text=True)
        self.assertEqual(c.returncode, 0, c.stderr)
        self.assertEqual(subprocess.run([exe]).returncode, 0)

    def test_names_the_standard_headers_define_compile(self):
        # A bucket `NULL` became `Bucket::NULL` (`__null` after <cstddef>), a kernel `linux`
        # the namespace `tune_winners::linux` (`1` under gnu++17): the build broke in generated
        # code. Such names get a '_' after them, as keywords do, in both headers.
        labels = ["NULL", "EOF", "errno", "INT_MAX", "CHAR_BIT", "PTRDIFF_MAX", "linux", "unix",
                  "stdin", "assert", "SIGINT", "M_PI", "offsetof"]
        root = self.top / "macros"
        (root / "kernels").mkdir(parents=True)
        (root / "spaces").mkdir()
        (root / "kernels" / "linux.cu").write_text('extern "C" __global__ void linux() {}\n')
        space = root / "spaces" / "linux.toml"
        space.write_text('schema = 1\nkernel = "linux"\nrequire = [{ major = 1, minor = 3, '
                         'Null = "a" }]\n[params]\nmajor = [1, 2]\nminor = [3]\n'
                         'Null = ["a"]\n' + "".join(
                             f'[[buckets]]\nname = "{b}"\nwhen = "N == {i}"\n'
                             f"shape = {{ N = {i}, eof = 1 }}\n" for i, b in enumerate(labels)))
        manifest = clitest.manifest(self.top / "mbuild" / "manifest.json", root, "linux",
                                    build=self.top / "mbuild", tuner=TUNER)
        names = self.top / "out" / "names.hpp"
        r = run("warm", "--list-candidates", space, "--kernel", "linux", "--names-header", names)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run("header", "--manifest", manifest, "--output", self.header)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = self.header.read_text()
        self.assertIn("namespace tune_winners::linux_ {", text)
        self.assertIn("  NULL_,  // 'NULL'\n  EOF_,  // 'EOF'\n  errno_,  // 'errno'\n", text)
        self.assertIn("namespace tune::kernel::linux_ {", names.read_text())
        main = self.top / "macros.cpp"
        std = ["cassert", "cerrno", "cfloat", "cinttypes", "climits", "clocale", "cmath",
               "csignal", "cstddef", "cstdint", "cstdio", "cstdlib", "cstring", "ctime", "cwchar"]
        main.write_text("".join(f"#include <{h}>\n" for h in std) +
                        '#include "pick_winners.hpp"\n#include "names.hpp"\n'
                        "int main() {\n"
                        "  auto b = tune_winners::linux_::select({5, 1});\n"
                        "  return b && *b == tune_winners::linux_::Bucket::PTRDIFF_MAX_ &&\n"
                        '         tune::kernel::linux_::shape::eof == "eof" ? 0 : 1;\n}\n')
        for std_flag in ["-std=gnu++17", "-std=c++20"]:
            exe = self.top / "macros_check"
            c = subprocess.run([CXX, std_flag, "-Wall", "-Werror", "-I", self.header.parent, main,
                                "-o", exe], capture_output=True, text=True)
            self.assertEqual(c.returncode, 0, f"{std_flag}: {c.stderr}")
            self.assertEqual(subprocess.run([exe]).returncode, 0, std_flag)
        # A param or a shape name that is such a macro is refused where the space says it: as
        # -DNULL=... it would redefine the macro in the kernel, and a member cannot be named so.
        for line, message in [
                ("[params]\nNULL = [1]\n", "4:1: error: param name 'NULL' is a macro of the C "
                 "and C++ standard headers or of the compiler: the kernel's -DNULL=... and the "
                 "generated headers would clash with it; rename it"),
                ('[params]\nA = [1]\n[[buckets]]\nname = "b"\nshape = { EOF = 1 }\n',
                 "7:11: error: shape name 'EOF' in bucket 'b' is a macro of the C and C++ "
                 "standard headers or of the compiler: the generated headers would clash with "
                 "it; rename it")]:
            space.write_text('schema = 1\nkernel = "linux"\n' + line)
            r = run("space", space)
            self.assertEqual(r.returncode, 2, r.stdout)
            self.assertEqual(r.stderr, f"{space}:{message}\n")

    def test_a_namespace_that_is_a_macro_is_refused(self):
        # `--namespace app::linux` wrote `namespace app::1` under -std=gnu++17.
        r = run("header", "--manifest", self.manifest, "--output", self.header, "--namespace",
                "app::linux")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr, "tuner header: error: --namespace: must be a C++ namespace "
                         "name such as 'app::winners', got 'app::linux': 'linux' is a C++ keyword, "
                         "a macro of the standard headers or the compiler, or a reserved name (run "
                         "'tuner header --help')\n")
        self.assertFalse(self.header.exists())

    def test_an_output_that_is_not_a_regular_file_is_refused(self):
        # A FIFO blocked the compare (read before write), and a rename would have replaced a
        # device or a FIFO with a regular file: each is refused, left as it was, at once.
        self.header.parent.mkdir(parents=True)
        os.mkfifo(self.header)
        r = subprocess.run([TUNER, "header", "--manifest", self.manifest, "--output", self.header],
                           capture_output=True, text=True, timeout=20)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn(f"'{self.header}' is a FIFO; tune writes a file only where a regular file or "
                      "nothing is", r.stderr)
        self.assertTrue(stat.S_ISFIFO(os.lstat(self.header).st_mode))
        os.remove(self.header)
        self.header.mkdir()
        r = self.generate()
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("is a directory", r.stderr)
        self.assertTrue(self.header.is_dir())

    def test_a_fresh_record_and_a_missing_one(self):
        self.pin("m<=512 & row", "BM=128,LAYOUT=col")
        self.pin("ratio", "BM=3000000000,LAYOUT=row")
        self.pin("default", "BM=128,LAYOUT=row")
        r = self.generate()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr.splitlines(), [
            "records/pick.sm_80.json: warning: no record for 'pick' sm_80: the header uses the "
            "first incumbent of spaces/pick.toml",
        ])
        today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        origin = f"record records/pick.sm_90.json ({today})"
        self.assertEqual(self.compile_and_run(), [
            f"row: m<=512 & row BM=128 LAYOUT=col id=BM=128,LAYOUT=\"col\" from={origin}",
            f"quoted: m<=512 & row BM=128 LAYOUT=col id=BM=128,LAYOUT=\"col\" from={origin}",
            f"ratio: ratio BM=3000000000 LAYOUT=row id=BM=3000000000,LAYOUT=\"row\" from={origin}",
            "zero: none",
            f"other: default BM=128 LAYOUT=row id=BM=128,LAYOUT=\"row\" from={origin}",
            "sm_80: 1",
        ])
        text = self.header.read_text()
        self.assertIn("// sm_80: no record (records/pick.sm_80.json is missing)\n", text)
        self.assertIn(f"// sm_90: {origin}, fresh\n", text)
        self.assertIn("enum class Bucket {\n  m_512_row,  // 'm<=512 & row'\n  ratio,  // 'ratio'\n"
                      "  default_,  // 'default'\n};\n", text)
        self.assertIn("// sm_80 'ratio': BM=64,LAYOUT=\"row\" (fallback: first incumbent)\n", text)
        # BM has a value outside int: long long in every winner.
        self.assertIn("  static constexpr long long BM = 3000000000LL;\n", text)
        self.assertIn("  static constexpr long long BM = 64LL;\n", text)
        self.assertNotIn("int BM", text)
        self.assertIn("  static constexpr const char* LAYOUT = \"row\";\n", text)
        # An unchanged header is not rewritten (its dependents do not rebuild).
        before = self.header.stat().st_mtime_ns
        self.assertEqual(self.generate().returncode, 0)
        self.assertEqual(self.header.stat().st_mtime_ns, before)

    def test_json_names_each_winner_and_its_origin(self):
        self.pin("m<=512 & row", "BM=128,LAYOUT=col")
        self.pin("ratio", "BM=3000000000,LAYOUT=row")
        self.pin("default", "BM=128,LAYOUT=row")
        r = run("header", "--manifest", self.manifest, "--output", self.header, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual((doc["header"], doc["written"]), (str(self.header), True))
        sm80, sm90 = doc["archs"]
        self.assertEqual((sm80["arch"], sm80["record_state"]), ("sm_80", "missing"))
        self.assertEqual(sm80["buckets"][1], {"bucket": "ratio", "config": 'BM=64,LAYOUT="row"',
                                              "source": "incumbent", "fallback": "no_record"})
        self.assertEqual((sm90["record"], sm90["record_state"]),
                         ("records/pick.sm_90.json", "fresh"))
        self.assertEqual(sm90["buckets"][0], {"bucket": "m<=512 & row",
                                              "config": 'BM=128,LAYOUT="col"',
                                              "source": "record", "fallback": None})
        again = run("header", "--manifest", self.manifest, "--output", self.header, "--json")
        self.assertFalse(json.loads(again.stdout)["written"])

    def test_no_record_and_no_incumbent_is_an_error(self):
        space = self.root / "spaces" / "pick.toml"
        space.write_text(space.read_text().replace('require = [{ BM = 64, LAYOUT = "row" }]\n', ""))
        r = self.generate()
        self.assertEqual(r.returncode, 1)
        lines = r.stderr.splitlines()
        self.assertEqual(lines[1], "records/pick.sm_80.json: error: no winner for 'pick' sm_80 "
                         "bucket 'm<=512 & row' and no incumbent to fall back to: pin one with "
                         "`tuner record set` or add `require` to spaces/pick.toml")
        self.assertFalse(self.header.exists())

    def test_a_param_named_like_a_keyword_is_refused(self):
        space = self.root / "spaces" / "pick.toml"
        space.write_text(space.read_text().replace("BM", "int"))
        r = self.generate()
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr, "tuner header: error: param 'int' of spaces/pick.toml cannot "
                         "be a C++ member name in the header\n")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
