#!/usr/bin/env python3
"""Hostile-input CLI tests: every reader refuses bad files with exit code 2 and a clear message.

Drives `tuner space`, `tuner show`, `tuner verify`, `tuner record set` and `tuner exec` with
path traversal in names, absurd sizes (100 MB files, made sparse so the test stays cheap), deep
nesting (100000 levels) and numbers out of range. Small inputs live in tests/data/hostile;
large ones are generated into the work directory. The limits are those of
tuner/core/base/input_limits.hpp: a space file <= 1 MiB, a record or manifest <= 16 MiB, a log line
<= 1 MiB, JSON nesting <= 64 levels, expressions <= 128 levels.
"""
import json
import os
import shutil
import subprocess
import sys
import unittest

import clitest

TUNER, DATA, WORK = clitest.paths()
HOSTILE = DATA / "hostile"
HUGE = 100 * 1024 * 1024
DEEP = 100000
TOO_DEEP_JSON = "arrays and objects nest deeper than 64 levels"


def run(*args, cwd=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUNE_")}
    return subprocess.run([TUNER, *map(str, args)], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)


class HostileCli(unittest.TestCase):
    def setUp(self):
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)

    def sparse(self, name, size=HUGE):
        path = self.dir / name
        with open(path, "wb") as f:
            f.truncate(size)
        return path

    def write(self, name, text):
        path = self.dir / name
        path.write_text(text)
        return path

    def assert_refused(self, r, stderr, stdout=""):
        self.assertEqual((r.returncode, r.stderr, r.stdout), (2, stderr, stdout))

    # -- spaces ----------------------------------------------------------------------------

    def test_space_refuses_a_traversing_kernel_name(self):
        path = HOSTILE / "kernel_traversal.toml"
        self.assert_refused(run("space", path),
                            f"{path}:3:10: error: kernel name '../../x' may hold only letters, "
                            "digits, '_', '.' and '-', and may not start with '.'\n")

    def test_space_refuses_a_traversing_string_value(self):
        path = HOSTILE / "value_traversal.toml"
        self.assert_refused(run("space", path),
                            f"{path}:6:18: error: param 'LAYOUT' value '../../etc/passwd' may hold "
                            "only letters, digits, '_', '.', ':', '+' and '-' (it becomes a -D "
                            "token)\n")

    def test_space_refuses_an_int_beyond_int64(self):
        path = HOSTILE / "int_out_of_range.toml"
        r = run("space", path)
        self.assert_refused(r, f"{path}:6:30: error: invalid TOML: error while parsing decimal "
                               "integer: '9223372036854775808' is not representable in 64 bits\n")

    def test_space_refuses_a_100MB_file_before_reading_it(self):
        path = self.sparse("huge.toml")
        self.assert_refused(run("space", path),
                            f"{path}: error: the file is 104857600 bytes, more than the 1 MiB a "
                            "space file may hold\n")

    def test_space_refuses_deep_toml_nesting(self):
        path = self.write("deep.toml",
                          'schema = 1\nkernel = "k"\n[params]\nA = ' + "[" * DEEP + "\n")
        self.assert_refused(run("space", path),
                            f"{path}:4:261: error: invalid TOML: error while parsing value: "
                            "exceeded maximum nested value depth of 256 (TOML_MAX_NESTED_VALUES)\n")

    def test_space_refuses_a_deep_prune_expression(self):
        prune = "(" * 200 + "BM > 1" + ")" * 200
        path = self.write("deep_prune.toml", 'schema = 1\nkernel = "k"\nprune = ["' + prune +
                          '"]\n[params]\nBM = [1, 2]\n')
        self.assert_refused(run("space", path),
                            f"{path}:3:139: error: invalid prune expression '{prune}': the "
                            "expression nests deeper than 128 levels; split it into several "
                            "prune entries or simplify it\n")

    def test_a_bucket_label_is_free_text(self):
        r = run("space", HOSTILE / "bucket_traversal.toml", "--json")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual([b["name"] for b in json.loads(r.stdout)["buckets"]], ["../../etc"])

    # -- records through `tuner show` ------------------------------------------------------

    def test_show_refuses_a_100MB_record(self):
        path = self.sparse("huge.json")
        self.assert_refused(run("show", path),
                            f"{path}: error: the file is 104857600 bytes, more than the 16 MiB a "
                            "record may hold\n")

    def test_show_refuses_a_deeply_nested_record(self):
        path = self.write("deep.json", '{"runoff": ' + "[" * DEEP + "]" * DEEP + "}")
        self.assert_refused(run("show", path), f"{path}:1:75: error: {TOO_DEEP_JSON}\n")

    def test_show_refuses_numbers_out_of_range(self):
        for name, at, field, expected in [
                ("record_negative_samples.json", "1:245", "samples", "an integer >= 0, got -5"),
                ("record_int_overflow.json", "1:232", "config.params.BM",
                 "an integer that fits in 64 bits, got 18446744073709551615")]:
            with self.subTest(name):
                path = HOSTILE / name
                self.assert_refused(run("show", path),
                                    f"{path}:{at}: error: field 'entries[0].{field}' must be "
                                    f"{expected}\n")

    def test_show_refuses_a_number_beyond_double(self):
        path = HOSTILE / "record_median_inf.json"
        self.assert_refused(run("show", path),
                            f"{path}: error: not valid JSON: [json.exception.out_of_range.406] "
                            "number overflow parsing '1e999'\n")

    def test_show_skips_deep_and_long_log_lines(self):
        header = {"log_schema": 1, "tuner": "k/b", "space_hash": "x", "arch": "",
                  "source_hash": None, "toolchain": None, "objective": "minimize"}
        trial = {"config_id": "A=1", "params": {"A": 1}, "state": "invalid", "reason": "r",
                 "phase": "search"}
        path = self.write("deep.jsonl", json.dumps(header) + "\n" + '{"a":' * DEEP + "\n" +
                          '"' + "x" * (1 << 20) + '"\n' + json.dumps(trial) + "\n")
        r = run("show", path)
        self.assertEqual((r.returncode, r.stderr),
                         (0, f"{path}:2: warning: skipped a line nesting deeper than 64 levels\n"
                             f"{path}:3: warning: skipped a line longer than 1 MiB\n"))
        self.assertTrue(r.stdout.endswith("best: none, 0 of 1 trials measured\n"), r.stdout)

    def test_show_refuses_a_log_with_a_deep_header(self):
        path = self.write("deep_header.jsonl", '{"log_schema":' * DEEP + "\n")
        self.assert_refused(run("show", path),
                            f"{path}:1: error: not a trial log: the first line is longer than "
                            "1 MiB or nests deeper than 64 levels\n")

    # -- manifests and records through `tuner verify` / `tuner record set` ------------------

    def project(self, kernel="gemm", **fields):
        root = self.dir / "src"
        if not root.exists():
            shutil.copytree(DATA / "records" / "project", root)
        build = root / "build"
        fields = {"entry": "gemm", "sources": [root / "kernels" / "gemm.cu"],
                  "space": root / "spaces" / "gemm.toml",
                  "records": {"sm_90": root / "records" / "gemm.json"},
                  "include_directories": [root / "kernels" / "include"],
                  "host_compiler": "GNU 12.2.0", **fields}
        return clitest.manifest(build / "tune" / "gemm" / "manifest.json", root, kernel,
                                build=build, **fields)

    def test_record_set_refuses_a_traversing_kernel_name(self):
        manifest = self.project(kernel="../../x")
        self.assert_refused(run("record", "set", "--manifest", manifest, "--bucket", "large",
                                "--config", "BM=128,BN=128"),
                            f"{manifest}: error: field 'kernel' must be a kernel name "
                            "([A-Za-z0-9_.-]+, not starting with '.'), got \"../../x\"\n")

    def test_verify_refuses_a_100MB_manifest_and_a_deep_one(self):
        manifest = self.sparse("manifest.json")
        self.assert_refused(run("verify", "--manifest", manifest),
                            f"{manifest}: error: the file is 104857600 bytes, more than the "
                            "16 MiB a manifest may hold\n")
        manifest = self.write("deep_manifest.json", "[" * DEEP)
        self.assert_refused(run("verify", "--manifest", manifest),
                            f"{manifest}:1:65: error: {TOO_DEEP_JSON}\n")

    def test_verify_refuses_hostile_records(self):
        manifest = self.project()
        huge = self.sparse("huge.json")
        deep = self.write("deep.json", "{" * DEEP)
        # Issue 21: verify names the line and column where the reader knows them.
        for record, at, message in [
                (huge, "", "the file is 104857600 bytes, more than the 16 MiB a record may hold"),
                (deep, ":1:65", TOO_DEEP_JSON),
                (HOSTILE / "record_negative_samples.json", ":1:245",
                 "field 'entries[0].samples' must be an integer >= 0, got -5")]:
            with self.subTest(record.name):
                self.assert_refused(run("verify", "--manifest", manifest, "--record", record),
                                    f"{record}{at}: error: {message}\n")

    # -- `tuner exec` ----------------------------------------------------------------------

    def exec(self, space, log):
        return run("exec", space, "--bucket", "default", "--log", log, "--", "true")

    def test_exec_refuses_a_hostile_space_and_writes_no_log(self):
        log = self.dir / "t.jsonl"
        space = self.sparse("huge.toml")
        self.assert_refused(self.exec(space, log),
                            f"{space}: error: the file is 104857600 bytes, more than the 1 MiB a "
                            "space file may hold\n")
        self.assertFalse(log.exists())

    def test_exec_refuses_a_log_with_a_deep_header_and_leaves_it_untouched(self):
        space = self.write("s.toml", 'schema = 1\nkernel = "k"\n[params]\nA = [1]\n')
        text = "[" * DEEP + "\n"
        log = self.write("t.jsonl", text)
        self.assert_refused(self.exec(space, log),
                            f"{log}:1: error: not a trial log: the first line is longer than "
                            "1 MiB or nests deeper than 64 levels\n")
        self.assertEqual(log.read_text(), text)


if __name__ == "__main__":
    WORK.mkdir(parents=True, exist_ok=True)
    unittest.main(argv=[sys.argv[0]])
