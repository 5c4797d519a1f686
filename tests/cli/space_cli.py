#!/usr/bin/env python3
"""CLI tests for `tuner space`.

- Every tests/data/spaces/invalid/<name>.toml is refused with exit 2, nothing on stdout, and
  exactly the diagnostic in <name>.expected on stderr (the data directory written as <data>).
- Every tests/data/spaces/valid/<name>.toml lists with exit 0: its text output is compared
  with <name>.txt and its --json output with <name>.json (golden files; TUNE_UPDATE_GOLDEN=1
  rewrites them). The JSON is also checked independently: ids recomputed from params, counts,
  and each bucket's pruned-space hash recomputed as FNV-1a (docs/formats.md "Search space").
- --bucket, an unknown bucket, a missing file and bad usage.
- A space that reads but can never give a record (a bucket never selected) is listed, then
  refused with the configure's diagnostic and a fix that works.
"""
import json
import os
import re
import subprocess
import sys
import unittest

import clitest

TUNER, DATA, WORK = clitest.paths()
SPACES = DATA / "spaces"
UPDATE_GOLDEN = os.environ.get("TUNE_UPDATE_GOLDEN") == "1"


def run(*args, cwd=None):
    return subprocess.run([TUNER, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def masked(text):
    return text.replace(str(DATA), "<data>")


def config_id(params):
    """The canonical id, computed independently: sorted keys, ints decimal, strings JSON."""
    parts = []
    for name in sorted(params):
        value = params[name]
        parts.append(f"{name}={json.dumps(value) if isinstance(value, str) else value}")
    return ",".join(parts)


def fnv_space_hash(ids):
    h = 0xCBF29CE484222325
    for i in sorted(ids):
        for b in i.encode() + b"\0":
            h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def check_golden(test, path, actual):
    if UPDATE_GOLDEN:
        path.write_text(actual)
        return
    test.assertTrue(path.exists(), f"missing golden file {path} (TUNE_UPDATE_GOLDEN=1 writes it)")
    test.assertEqual(actual, path.read_text(), f"output differs from {path}")


class InvalidSpaces(unittest.TestCase):
    def test_every_invalid_space_gives_its_expected_message(self):
        files = sorted((SPACES / "invalid").glob("*.toml"))
        self.assertGreaterEqual(len(files), 40)
        for toml in files:
            with self.subTest(space=toml.name):
                r = run("space", toml)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertEqual(r.stdout, "")
                check_golden(self, toml.with_suffix(".expected"), masked(r.stderr))

    def test_every_expected_file_has_its_space(self):
        for expected in (SPACES / "invalid").glob("*.expected"):
            self.assertTrue(expected.with_suffix(".toml").exists(), expected)

    def test_json_output_on_error_is_empty_too(self):
        r = run("space", SPACES / "invalid" / "prune_syntax.toml", "--json")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        self.assertEqual(
            masked(r.stderr),
            "<data>/spaces/invalid/prune_syntax.toml:3:16: error: invalid prune expression "
            "'BM * <= 4096': expected a number, a name, a string or '(', found '<='\n")


class ValidSpaces(unittest.TestCase):
    def valid_files(self):
        files = sorted((SPACES / "valid").glob("*.toml"))
        self.assertGreaterEqual(len(files), 4)
        return files

    def test_text_output_matches_golden(self):
        for toml in self.valid_files():
            with self.subTest(space=toml.name):
                r = run("space", toml)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stderr, "")
                check_golden(self, toml.with_suffix(".txt"), r.stdout)

    def test_json_output_matches_golden_and_is_consistent(self):
        for toml in self.valid_files():
            with self.subTest(space=toml.name):
                r = run("space", toml, "--json")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stderr, "")
                check_golden(self, toml.with_suffix(".json"), r.stdout)
                doc = json.loads(r.stdout)
                self.assertEqual(list(doc), ["kernel", "space_hash", "buckets"])
                self.assertRegex(doc["space_hash"], r"^[0-9a-f]{64}$")
                for bucket in doc["buckets"]:
                    self.assertEqual(list(bucket), ["name", "count", "space_hash", "configs"])
                    self.assertEqual(bucket["count"], len(bucket["configs"]))
                    ids = [c["id"] for c in bucket["configs"]]
                    self.assertEqual(ids, [config_id(c["params"]) for c in bucket["configs"]])
                    self.assertEqual(len(set(ids)), len(ids))
                    self.assertEqual(bucket["space_hash"], fnv_space_hash(ids))

    def test_text_and_json_agree(self):
        for toml in self.valid_files():
            with self.subTest(space=toml.name):
                doc = json.loads(run("space", toml, "--json").stdout)
                lines = []
                for bucket in doc["buckets"]:
                    lines.append(f"bucket '{bucket['name']}': {bucket['count']} configs")
                    lines.extend(c["id"] for c in bucket["configs"])
                self.assertEqual(run("space", toml).stdout, "\n".join(lines) + "\n")

    def test_example_space_in_the_repository_lists(self):
        example = DATA.parent.parent / "spaces" / "example.toml"
        r = run("space", example)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines()[0], "bucket 'm<=512': 41 configs")
        self.assertIn("bucket 'large': 31 configs", r.stdout.splitlines())


NEVER_SELECTED = """schema = 1
kernel = "pip"

[params]
BLOCK = [128, 256]

[[buckets]]
name = "n=20M"
shape = { N = 20000000 }

[[buckets]]
name = "n=1M"
shape = { N = 1000000 }
"""


class UnusableSpaces(unittest.TestCase):
    def write(self, text):
        WORK.mkdir(parents=True, exist_ok=True)
        path = WORK / "never_selected.toml"
        path.write_text(text)
        return path

    def test_a_bucket_never_selected_is_listed_then_refused_with_a_fix_that_works(self):
        space = self.write(NEVER_SELECTED)
        r = run("space", space)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("bucket 'n=1M': 2 configs", r.stdout)  # listed all the same
        self.assertEqual(
            r.stderr,
            f"{space}:11:1: error: bucket 'n=1M' is never selected: bucket 'n=20M' (line 7) "
            "before it has no 'when' and takes every shape: give 'n=20M' a 'when' that holds for "
            "its own shape (N=20000000) but not for that of 'n=1M' (N=1000000), for example "
            "when = \"N > 1000000\" (only the last bucket may go without a 'when')\n")
        j = run("space", space, "--json")
        self.assertEqual(j.returncode, 2)
        self.assertEqual(json.loads(j.stdout)["problems"], [r.stderr.strip()])
        # The fix applied: usable.
        fixed = self.write(NEVER_SELECTED.replace('name = "n=20M"\n',
                                                  'name = "n=20M"\nwhen = "N > 1000000"\n'))
        r = run("space", fixed)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        self.assertNotIn("problems", json.loads(run("space", fixed, "--json").stdout))


class BucketOption(unittest.TestCase):
    SPACE = SPACES / "valid" / "buckets.toml"

    def test_one_bucket(self):
        whole = run("space", self.SPACE).stdout
        r = run("space", self.SPACE, "--bucket", "n<=4096")
        self.assertEqual(r.returncode, 0, r.stderr)
        section = whole[whole.index("bucket 'n<=4096'"):whole.index("bucket 'large'")]
        self.assertEqual(r.stdout, section)

    def test_one_bucket_json(self):
        r = run("space", self.SPACE, "--bucket", "tiny n (f16)", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual([b["name"] for b in doc["buckets"]], ["tiny n (f16)"])
        self.assertEqual(doc["buckets"][0]["count"], 8)

    def test_unknown_bucket(self):
        r = run("space", self.SPACE, "--bucket", "huge")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        self.assertEqual(
            masked(r.stderr),
            "<data>/spaces/valid/buckets.toml: error: no bucket 'huge' in the space of 'gemv' "
            "(it has 'tiny n (f16)', 'n<=4096', 'large')\n")
        r = run("space", self.SPACE, "--bucket", "n<=4069")
        self.assertEqual(
            masked(r.stderr),
            "<data>/spaces/valid/buckets.toml: error: no bucket 'n<=4069' in the space of 'gemv', "
            "did you mean 'n<=4096'? (it has 'tiny n (f16)', 'n<=4096', 'large')\n")

    def test_unknown_bucket_of_the_implicit_default(self):
        r = run("space", "minimal.toml", "--bucket", "x", cwd=SPACES / "valid")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr,
                         "minimal.toml: error: no bucket 'x' in the space of 'minimal' (it has "
                         "'default')\n")


class Usage(unittest.TestCase):
    def test_missing_file(self):
        WORK.mkdir(parents=True, exist_ok=True)
        r = run("space", "nope.toml", cwd=WORK)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr, "nope.toml: error: no such file\n")

    def test_directory(self):
        r = run("space", ".", cwd=SPACES)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, ".: error: is a directory, expected a space file\n")

    def test_no_file_is_bad_usage(self):
        r = run("space")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        self.assertIn("space is required", r.stderr)

    def test_unknown_option_is_bad_usage(self):
        r = run("space", SPACES / "valid" / "minimal.toml", "--bukket", "x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--bukket", r.stderr)

    def test_help(self):
        r = run("space", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("--bucket", r.stdout)
        self.assertIn("--json", r.stdout)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
