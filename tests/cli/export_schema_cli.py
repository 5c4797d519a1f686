#!/usr/bin/env python3
"""`tuner export --format t4` writes documents that the T4 results schema accepts: the schema
that the installed kernel_tuner package ships (kernel_tuner/schema/T4/1.0.0/results-schema.json;
tune vendors no copy), checked with python3-jsonschema.

The package is found without importing it: kernel_tuner's __init__ imports numpy and the rest
of its dependencies, and CI installs it with --no-deps only for the schema. Without kernel_tuner
or jsonschema the test is skipped (exit status SKIP, ctest's SKIP_RETURN_CODE) with the reason
on stdout; export_cli.py tests the export itself either way.
"""
import importlib.util
import json
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

import clitest
from export_cli import exec_log

SKIP = 77
TUNER, DATA_ROOT, WORK = clitest.paths()
GEMM_LOG = DATA_ROOT / "records" / "gemm.trials.jsonl"


def t4_schema():
    """(the results schema as JSON, its path), or (None, the reason it is not there)."""
    spec = importlib.util.find_spec("kernel_tuner")
    if spec is None or not spec.submodule_search_locations:
        return None, ("kernel_tuner is not installed (pip install --no-deps "
                      "kernel_tuner==1.5.0 installs the schema)")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "schema" / "T4" / "1.0.0" / "results-schema.json"
        if path.is_file():
            return json.loads(path.read_text()), path
    return None, f"kernel_tuner at {spec.submodule_search_locations} has no T4 1.0.0 schema"


class ExportSchemaCli(unittest.TestCase):
    schema = None

    def setUp(self):
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)

    def exported(self, *logs):
        r = subprocess.run([TUNER, "export", "--format", "t4", *map(str, logs)],
                           capture_output=True, text=True, env=clitest.env(), timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def assert_valid(self, doc):
        import jsonschema
        validator = jsonschema.Draft202012Validator(self.schema)
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
        self.assertEqual(errors, [])

    def test_the_schema_refuses_a_broken_document(self):
        # The check has teeth: an invalidity outside the schema's enum fails.
        doc = self.exported(GEMM_LOG)
        doc["results"][1]["invalidity"] = "crashed"
        import jsonschema
        self.assertTrue(list(jsonschema.Draft202012Validator(self.schema).iter_errors(doc)))

    def test_an_exec_log_with_every_kind_of_trial_is_valid(self):
        log = exec_log(self.dir / "tile.trials.jsonl", "--timeout", 1, OBJ_HANG="BM=64,BN=32")
        doc = self.exported(log)
        self.assertEqual({r["invalidity"] for r in doc["results"]},
                         {"correct", "runtime", "timeout"})
        self.assert_valid(doc)

    def test_the_fixture_log_is_valid(self):
        self.assert_valid(self.exported(GEMM_LOG))

    def test_a_maximizing_log_and_a_merge_are_valid(self):
        score = exec_log(self.dir / "score.trials.jsonl", "--maximize", OBJ_SCORE=1)
        self.assert_valid(self.exported(score))
        again = exec_log(self.dir / "again" / "score.trials.jsonl", "--maximize", OBJ_SCORE=1)
        self.assert_valid(self.exported(score, again))


if __name__ == "__main__":
    ExportSchemaCli.schema, where = t4_schema()
    if ExportSchemaCli.schema is None:
        print(f"SKIP: {where}")
        sys.exit(SKIP)
    if importlib.util.find_spec("jsonschema") is None:
        print("SKIP: python's jsonschema is not installed (Debian: python3-jsonschema)")
        sys.exit(SKIP)
    print(f"schema: {where}")
    unittest.main(argv=[sys.argv[0]])
