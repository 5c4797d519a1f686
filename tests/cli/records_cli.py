#!/usr/bin/env python3
"""CLI tests for records: `tuner key`, `verify`, `status`, `show`, `report` (its record row)
and `record set`.

Each test copies tests/data/records/project (two kernels, gemm and gemv, their headers and
spaces) into a fresh directory, writes the manifests by hand as tune_add_kernel would, and pins
records with `tuner record set`. Only `nvcc --version` and `ptxas --version` run; nothing is
compiled: the kernel cache entries `record set` looks at are written by the tests. Golden
outputs live in tests/data/records/golden with volatile parts masked: the project directory, the
toolchain, SHA-256 digests, shortened keys, the machine and the date.
"""
import datetime
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import unittest
from pathlib import Path

import clitest

TUNER, DATA_ROOT, WORK = clitest.paths()
DATA = DATA_ROOT / "records"
UPDATE_GOLDEN = os.environ.get("TUNE_UPDATE_GOLDEN") == "1"


def run(*args, env=None, cwd=None):
    full_env = dict(os.environ)
    full_env.pop("TUNE_FAULT_INJECT", None)
    if env:
        full_env.update(env)
    return subprocess.run([TUNER, *map(str, args)], capture_output=True, text=True, env=full_env,
                          cwd=cwd, timeout=120)


class RecordsCli(unittest.TestCase):
    def setUp(self):
        name = self.id().split(".")[-1]
        self.top = WORK / name
        shutil.rmtree(self.top, ignore_errors=True)
        self.root = self.top / "src"
        shutil.copytree(DATA / "project", self.root)
        self.build = self.root / "build"
        self.gemm = self.write_manifest("gemm")
        self.gemv = self.write_manifest(
            "gemv", archs=["sm_80", "sm_90"],
            records={"sm_80": "records/gemv.sm_80.json", "sm_90": "records/gemv.sm_90.json"})
        self.pin_out = []
        for bucket, config in (("m<=512", "BM=64,BN=128"), ("large", "BM=128,BN=128")):
            r = run("record", "set", "--manifest", self.gemm, "--bucket", bucket, "--config", config)
            self.assertEqual(r.returncode, 0, r.stderr)
            # Nothing was compiled here: pinned, with a note saying how to check it compiles.
            self.assertEqual(r.stderr, self.never_compiled(config))
            self.pin_out.append(r.stdout)
        r = run("record", "set", "--manifest", self.gemv, "--arch", "sm_90", "--bucket", "all",
                "--config", "VEC=2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.record = self.root / "records" / "gemm.json"
        self.toolchain = json.loads(self.record.read_text())["toolchain"]

    # -- helpers ---------------------------------------------------------------------------

    def write_manifest(self, kernel, root=None, build=None, manifest_dir=None, **fields):
        """clitest.manifest with every optional field set; `records` paths are relative to
        `root`. Written to <build>/tune/<kernel>/ as tune_add_kernel does, or `manifest_dir`."""
        root = Path(root or self.root)
        build = Path(build or root / "build")
        if "records" in fields:
            fields["records"] = {a: root / p for a, p in fields["records"].items()}
        optional = {
            "include_directories": [root / "kernels" / "include"],
            "definitions": ["USE_FAST=1"],
            "compile_options": [],
            "host_compiler": "GNU 12.2.0",
            "cache_dir": build / "tune" / "cache",
            "log_dir": build / "tune" / kernel,
            "compile_log": build / "tune" / "compile.log",
            "runner": None,
            "tuner": TUNER,
        }
        path = Path(manifest_dir or build / "tune" / kernel) / "manifest.json"
        return clitest.manifest(path, root, kernel, build=build, **{**optional, **fields})

    def never_compiled(self, config):
        """The note of `record set` for a config of gemm the kernel cache has no entry for."""
        return (f"records/gemm.json: note: config {config} was never compiled here (the kernel "
                f"cache {self.build / 'tune' / 'cache'} has no entry for it): pinned all the same; "
                f"to check that it compiles: tuner warm --manifest {self.gemm} --arch sm_90 "
                f"--config '{config}'\n")

    def cache_entry(self, config, status, reason=""):
        """Writes gemm's kernel cache entry of `config` as warm would have; returns its path."""
        key = self.key(self.gemm, config)
        cache = self.build / "tune" / "cache"
        cache.mkdir(parents=True, exist_ok=True)
        cubin = b"cubin of " + config.encode()
        if status == "ok":
            (cache / f"{key}.cubin").write_bytes(cubin)
        path = cache / f"{key}.json"
        path.write_text(json.dumps({
            "schema_version": 1, "key": key, "key_schema": "k1", "status": status,
            "reason": reason, "compiler_output": "", "resources": None,
            "cubin_sha256": hashlib.sha256(cubin).hexdigest() if status == "ok" else "",
            "arch": "sm_90", "config_id": config, "argv": [], "dependencies": []}))
        return path

    def entry(self, bucket):
        return [e for e in json.loads(self.record.read_text())["entries"]
                if e["bucket"] == bucket][0]

    def key(self, manifest, config, *extra):
        r = run("key", "--manifest", manifest, "--config", config, *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"^[0-9a-f]{64}\n$")
        return r.stdout.strip()

    def mask(self, text):
        text = text.replace(str(self.root), "<ROOT>").replace(str(self.top), "<TOP>")
        text = text.replace(self.toolchain, "<TOOLCHAIN>")
        text = re.sub(r"\b[0-9a-f]{64}\b", "<SHA256>", text)
        text = re.sub(r"\bk1:[0-9a-f]{12}\b", "k1:<KEY12>", text)
        text = text.replace(datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
                            "<DATE>")
        host = socket.gethostname()
        text = re.sub(r"(\"machine\": \"|machine +)" + re.escape(host), r"\1<MACHINE>", text)
        return text

    def golden(self, name, text):
        path = DATA / "golden" / name
        masked = self.mask(text)
        if UPDATE_GOLDEN:
            path.write_text(masked)
        self.assertEqual(masked, path.read_text())

    def edit_record(self, change, path=None):
        path = Path(path or self.record)
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data, indent=2) + "\n")

    def verify(self, *extra, manifest=None):
        return run("verify", "--manifest", manifest or self.gemm, *extra)

    def assert_stale(self, r, *errors):
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, "")
        expected = "".join(f"records/gemm.json: error: {e}\n" for e in errors)
        self.assertEqual(r.stderr[:len(expected)], expected)
        # Then notes: what changed (where the build can tell), the re-tune command and the
        # commands that pin without a GPU.
        notes = r.stderr[len(expected):].splitlines()
        self.assertTrue(all(n.startswith("records/gemm.json: note: ") for n in notes), notes)
        self.assertIn(f"records/gemm.json: note: re-tune with: cmake --build {self.build} "
                      "--target tune.gemm", notes)
        self.assertTrue(any(n.startswith(
            "records/gemm.json: note: or, without a GPU, pin a config instead: tuner record set "
            f"--manifest {self.gemm} --bucket 'm<=512' --config ") for n in notes), notes)

    # -- record set ------------------------------------------------------------------------

    def test_record_set_output_and_file(self):
        self.golden("record_set.txt", "".join(self.pin_out))
        self.golden("record_gemm.json", self.record.read_text())
        data = json.loads(self.record.read_text())
        key = self.key(self.gemm, "BM=64,BN=128")
        entry = [e for e in data["entries"] if e["bucket"] == "m<=512"][0]
        self.assertEqual(entry["cache_key"], {"schema": "k1", "digest": key})
        self.assertIsNone(entry["median_ms"])
        self.assertEqual(entry["samples"], 0)
        self.assertEqual(entry["source"], "pinned")
        self.assertEqual(self.pin_out[0],
                         f"records/gemm.json: pinned bucket 'm<=512' to BM=64,BN=128 "
                         f"(cache key k1:{key})\n")

    def test_record_set_over_a_measured_winner_says_what_it_drops(self):
        # Both configs compiled here (ok): nothing to say about the compile.
        self.cache_entry("BM=64,BN=64", "ok")
        self.cache_entry("BM=128,BN=128", "ok")
        data = json.loads(self.record.read_text())
        for e in data["entries"]:
            if e["bucket"] == "large":
                e.update(source="measured", median_ms=0.125, samples=50)
        self.record.write_text(json.dumps(data, indent=2) + "\n")
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "large",
                "--config", "BM=64,BN=64", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "records/gemm.json: note: bucket 'large' had the measured "
                                   "winner BM=128,BN=128 (0.125 ms over 50 samples); pinning "
                                   "drops that measurement (re-tune to measure again)\n")
        doc = json.loads(r.stdout)
        self.assertEqual((doc["record"], doc["kernel"], doc["arch"], doc["bucket"], doc["config"]),
                         (str(self.record), "gemm", "sm_90", "large", "BM=64,BN=64"))
        self.assertEqual(doc["cache_key"], "k1:" + self.key(self.gemm, "BM=64,BN=64"))
        self.assertEqual(doc["replaced"], {"config": "BM=128,BN=128", "source": "measured",
                                           "median_ms": 0.125, "samples": 50})
        self.assertEqual((doc["cache_status"], doc["forced"]), ("ok", False))
        # Over a pinned entry there is nothing to drop, and nothing to say.
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "large",
                "--config", "BM=128,BN=128", "--json")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(json.loads(r.stdout)["replaced"]["source"], "pinned")
        # A config the cache does not hold: its note, and "cache_status" null.
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "m<=512",
                "--config", "BM=64,BN=128", "--json")
        self.assertEqual((r.returncode, r.stderr), (0, self.never_compiled("BM=64,BN=128")))
        self.assertEqual((json.loads(r.stdout)["cache_status"], json.loads(r.stdout)["forced"]),
                         (None, False))

    def test_record_set_refuses_an_invalid_compile_unless_forced(self):
        before = self.record.read_bytes()
        reason = "ptxas error: Entry function 'gemm' uses too much shared data"
        for status, why in (("failed", "its compile failed for sm_90"),
                            ("over_limit", "its compile is over the limits of sm_90")):
            entry = self.cache_entry("BM=64,BN=64", status, reason)
            r = run("record", "set", "--manifest", self.gemm, "--bucket", "large",
                    "--config", "BM=64,BN=64")
            self.assertEqual((r.returncode, r.stdout), (2, ""))
            self.assertEqual(r.stderr, f"tuner record set: error: config BM=64,BN=64 of bucket "
                                       f"'large' is invalid ({status}): {why}: {reason} (see "
                                       f"{entry}): pin a config that compiles, or pass --force to "
                                       "pin it anyway (the entry is then marked forced)\n")
            self.assertEqual(self.record.read_bytes(), before)
        # --force pins it anyway, and the entry says so.
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "large",
                "--config", "BM=64,BN=64", "--force", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "records/gemm.json: warning: bucket 'large' pinned with --force "
                                   "to BM=64,BN=64, although its compile is over the limits of "
                                   f"sm_90: {reason}\n")
        doc = json.loads(r.stdout)
        self.assertEqual((doc["config"], doc["cache_status"], doc["forced"]),
                         ("BM=64,BN=64", "over_limit", True))
        e = self.entry("large")
        self.assertEqual((e["source"], e["forced"]),
                         ("pinned", {"status": "over_limit", "reason": reason}))
        # Fresh, but flagged wherever the record is looked at.
        flag = (f"entry 'large' config: pinned with --force to 'BM=64,BN=64', which is invalid "
                f"(over_limit): {reason}")
        r = self.verify()
        self.assertEqual((r.returncode, r.stdout, r.stderr),
                         (0, "records/gemm.json: fresh (gemm sm_90, 2 entries)\n",
                          f"records/gemm.json: warning: {flag}\n"))
        r = run("status", "--manifest", self.gemm)
        self.assertEqual((r.returncode, r.stdout),
                         (0, "gemm  sm_90  fresh  records/gemm.json (pinned, never measured): "
                             f"warning: {flag}\n"))
        r = run("show", self.record)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"\nlarge +BM=64,BN=64 +- +0 +pinned \(forced\) +- +- +k1:")
        self.assertIn(f"\nlarge: pinned with --force, although invalid (over_limit): {reason}\n",
                      r.stdout)
        self.assertIn('"forced": {\n', run("show", self.record, "--json").stdout)
        # A config that compiles, pinned over it, takes the mark away: the record is as before.
        self.cache_entry("BM=128,BN=128", "ok")
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "large",
                "--config", "BM=128,BN=128")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(self.record.read_bytes(), before)

    def test_record_set_pins_a_timed_out_compile_with_a_warning(self):
        self.cache_entry("BM=64,BN=64", "timed_out", "compile timed out after 60 s")
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "large",
                "--config", "BM=64,BN=64", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "records/gemm.json: warning: config BM=64,BN=64 timed out "
                                   "compiling for sm_90 (compile timed out after 60 s): pinned all "
                                   "the same, as a timeout does not say it cannot compile; a warm "
                                   "with a longer compile timeout tells\n")
        doc = json.loads(r.stdout)
        self.assertEqual((doc["cache_status"], doc["forced"]), ("timed_out", False))
        self.assertNotIn("forced", self.entry("large"))
        r = self.verify()
        self.assertEqual((r.returncode, r.stderr), (0, ""))

    def test_a_forced_mark_belongs_to_a_pinned_entry(self):
        self.edit_record(lambda d: d["entries"][0].update(
            source="measured", median_ms=0.125, samples=50,
            forced={"status": "failed", "reason": "no"}))
        r = self.verify()
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(": error: field 'entries[0].forced' must be null in an entry whose source "
                      "is not 'pinned', got {\"reason\":\"no\",\"status\":\"failed\"}\n", r.stderr)
        self.edit_record(lambda d: d["entries"][0].update(source="pinned", forced={"status": 1}))
        r = self.verify()
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(": error: field 'entries[0].forced.status' must be a string, got 1\n",
                      r.stderr)

    def test_record_errors_name_the_line_and_column(self):
        data = json.loads(self.record.read_text())
        data["entries"][1]["samples"] = "many"
        self.record.write_text(json.dumps(data, indent=2) + "\n")
        lines = self.record.read_text().splitlines()
        line = next(i for i, l in enumerate(lines) if '"many"' in l)
        col = lines[line].index('"many"') + 1
        r = self.verify()
        self.assertEqual((r.returncode, r.stderr),
                         (2, f"records/gemm.json:{line + 1}:{col}: error: field "
                             "'entries[1].samples' must be an integer, got \"many\"\n"))
        self.record.write_text('{\n  "schema_version": 1,\n  "kernel": "gemm",,\n}\n')
        r = self.verify()
        self.assertEqual(r.returncode, 2)
        self.assertTrue(r.stderr.startswith("records/gemm.json:3:20: error: not valid JSON: "),
                        r.stderr)

    def test_status_reads_only_the_declared_kernels_and_each_stands_alone(self):
        # The configure lists its kernels (tune/kernels.list); a kernel removed from the
        # CMakeLists leaves a manifest that status no longer reads.
        tune = self.build / "tune"
        (tune / "kernels.list").write_text("gemm\n")
        (tune / "gemv" / "manifest.json").write_text("{ broken")
        r = run("status", "--build-dir", self.build, "--check")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(r.stdout,
                         "gemm  sm_90  fresh  records/gemm.json (pinned, never measured)\n")
        # A declared kernel whose manifest does not read is its own line; the others are shown.
        (tune / "kernels.list").write_text("gemv\ngemm\n")
        r = run("status", "--build-dir", self.build, "--json")
        self.assertEqual(r.returncode, 2)
        self.assertTrue(r.stderr.startswith(f"{tune}/gemv/manifest.json:1:3: error: not valid "
                                            "JSON: ") or
                        r.stderr.startswith(f"{tune}/gemv/manifest.json: error: not valid JSON: "),
                        r.stderr)
        kernels = json.loads(r.stdout)["kernels"]
        self.assertEqual([(k["kernel"], k["arch"], k["state"]) for k in kernels],
                         [("gemv", None, "error"), ("gemm", "sm_90", "fresh")])
        r = run("status", "--build-dir", self.build)
        self.assertEqual(r.returncode, 2)
        self.assertRegex(r.stdout, r"^gemv  -      error  \S+/gemv/manifest\.json: not valid JSON")
        self.assertIn("\ngemm  sm_90  fresh  records/gemm.json (pinned, never measured)\n",
                      r.stdout)

    def test_status_blames_the_missing_space_not_the_manifest(self):
        space = self.root / "spaces" / "gemv.toml"
        space.rename(self.root / "spaces" / "gemv.toml.away")
        r = run("status", "--build-dir", self.build)
        self.assertEqual(r.returncode, 2)
        line = [l for l in r.stdout.splitlines() if l.startswith("gemv")][0]
        self.assertIn(f"error  {space}: ", line)
        self.assertNotIn("manifest.json", line)

    def test_record_set_is_deterministic(self):
        before = self.record.read_bytes()
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "large",
                "--config", "BM=128,BN=128")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.record.read_bytes(), before)
        self.assertTrue(before.endswith(b"}\n"))

    def test_record_set_refuses_configs_outside_the_bucket(self):
        before = self.record.read_bytes()
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "m<=512",
                "--config", "BM=128,BN=64")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        self.assertEqual(
            r.stderr,
            f"tuner record set: error: config 'BM=128,BN=64' is pruned from bucket 'm<=512': pin "
            f"one of its 2 configs (tuner space {self.root}/spaces/gemm.toml --bucket 'm<=512' "
            "lists them)\n")
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "large",
                "--config", "BM=32,BN=64")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, "tuner record set: error: config 'BM=32,BN=64' is not in the "
                                   f"space '{self.root}/spaces/gemm.toml': a value is not one the "
                                   "space lists (tuner space lists its configs)\n")
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "small",
                "--config", "BM=64,BN=64")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, f"{self.root}/spaces/gemm.toml: error: no bucket 'small' in "
                                   "the space of 'gemm' (it has 'm<=512', 'large')\n")
        self.assertEqual(self.record.read_bytes(), before)

    def test_a_crash_during_save_leaves_the_old_record(self):
        before = self.record.read_bytes()
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "large",
                "--config", "BM=64,BN=64", env={"TUNE_FAULT_INJECT": "record-save-before-rename"})
        self.assertEqual(r.returncode, -9)
        self.assertEqual(r.stdout, "")
        self.assertEqual(self.record.read_bytes(), before)
        self.assertEqual(self.verify().returncode, 0)
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "large",
                "--config", "BM=64,BN=64")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotEqual(self.record.read_bytes(), before)

    # -- verify ----------------------------------------------------------------------------

    def test_fresh_records_verify(self):
        r = self.verify()
        self.assertEqual((r.returncode, r.stdout, r.stderr),
                         (0, "records/gemm.json: fresh (gemm sm_90, 2 entries)\n", ""))
        r = self.verify("--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout), {"records": [{
            "kernel": "gemm", "arch": "sm_90", "record": str(self.record), "state": "fresh",
            "errors": [], "warnings": [], "changes": [],
            "retune": f"cmake --build {self.build} --target tune.gemm", "pin": []}]})

    def test_missing_record(self):
        r = self.verify(manifest=self.gemv)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "records/gemv.sm_90.json: fresh (gemv sm_90, 1 entry)\n")
        missing = self.root / "records" / "gemv.sm_80.json"
        self.assertEqual(
            r.stderr,
            f"records/gemv.sm_80.json: error: record: missing for kernel 'gemv' arch 'sm_80', "
            f"expected at '{missing}'\n"
            f"records/gemv.sm_80.json: note: re-tune with: cmake --build {self.build} "
            "--target tune.gemv\n"
            f"records/gemv.sm_80.json: note: or, without a GPU, pin a config instead: tuner "
            f"record set --manifest {self.gemv} --arch sm_80 --bucket all --config VEC=1\n")
        r = self.verify("--arch", "sm_90", manifest=self.gemv)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_editing_an_included_header_changes_exactly_the_affected_keys(self):
        gemm_keys = {c: self.key(self.gemm, c) for c in ("BM=64,BN=128", "BM=128,BN=128")}
        gemv_key = self.key(self.gemv, "VEC=2", "--arch", "sm_90")
        with open(self.root / "kernels" / "include" / "tile.cuh", "a") as f:
            f.write("// tuned differently now\n")
        new_keys = {c: self.key(self.gemm, c) for c in gemm_keys}
        for c in gemm_keys:
            self.assertNotEqual(new_keys[c], gemm_keys[c])
        self.assertEqual(self.key(self.gemv, "VEC=2", "--arch", "sm_90"), gemv_key)
        self.assert_stale(
            self.verify(),
            f"entry 'large' cache_key: record has 'k1:{gemm_keys['BM=128,BN=128']}', current is "
            f"'k1:{new_keys['BM=128,BN=128']}'",
            f"entry 'm<=512' cache_key: record has 'k1:{gemm_keys['BM=64,BN=128']}', current is "
            f"'k1:{new_keys['BM=64,BN=128']}'")
        self.assertEqual(self.verify("--arch", "sm_90", manifest=self.gemv).returncode, 0)
        # A header both include changes both kernels' keys.
        with open(self.root / "kernels" / "include" / "common.cuh", "a") as f:
            f.write("// shared edit\n")
        self.assertNotEqual(self.key(self.gemv, "VEC=2", "--arch", "sm_90"), gemv_key)
        self.assertEqual(self.verify("--arch", "sm_90", manifest=self.gemv).returncode, 1)

    def test_pinning_after_an_edit_leaves_the_other_entries_stale(self):
        old_key = self.key(self.gemm, "BM=64,BN=128")
        with open(self.root / "kernels" / "include" / "tile.cuh", "a") as f:
            f.write("// edited\n")
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "large",
                "--config", "BM=128,BN=128")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_stale(self.verify(),
                          f"entry 'm<=512' cache_key: record has 'k1:{old_key}', current is "
                          f"'k1:{self.key(self.gemm, 'BM=64,BN=128')}'")
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "m<=512",
                "--config", "BM=64,BN=128")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.verify().returncode, 0)

    def test_editing_a_file_the_kernel_does_not_include_changes_nothing(self):
        key = self.key(self.gemm, "BM=64,BN=128")
        with open(self.root / "kernels" / "include" / "unused.cuh", "a") as f:
            f.write("// edited\n")
        with open(self.root / "kernels" / "gemv.cu", "a") as f:
            f.write("// edited\n")
        self.assertEqual(self.key(self.gemm, "BM=64,BN=128"), key)
        self.assertEqual(self.verify().returncode, 0)

    def test_another_checkout_and_build_directory_change_no_key(self):
        key = self.key(self.gemm, "BM=64,BN=128")
        other = self.top / "elsewhere" / "checkout"
        shutil.copytree(self.root, other)
        moved = self.write_manifest("gemm", root=other, build=self.top / "out-of-tree-build")
        self.assertEqual(self.key(moved, "BM=64,BN=128"), key)
        r = self.verify(manifest=moved)
        self.assertEqual(r.returncode, 0, r.stderr)
        release = self.write_manifest("gemm", build=self.root / "build-release")
        self.assertEqual(self.key(release, "BM=64,BN=128"), key)

    def test_definitions_include_directories_and_arch_change_the_key(self):
        key = self.key(self.gemm, "BM=64,BN=128")
        (self.root / "more").mkdir()
        variants = {
            "definitions": self.write_manifest("gemm", manifest_dir=self.top / "d",
                                               definitions=["USE_FAST=1", "EXTRA=2"]),
            "include_directories": self.write_manifest(
                "gemm", manifest_dir=self.top / "i",
                include_directories=[str(self.root / "more"),
                                     str(self.root / "kernels" / "include")]),
            "compile_options": self.write_manifest("gemm", manifest_dir=self.top / "o",
                                                   compile_options=["-maxrregcount=64"]),
        }
        for name, manifest in variants.items():
            with self.subTest(name):
                self.assertNotEqual(self.key(manifest, "BM=64,BN=128"), key)
        two = self.write_manifest("gemm", manifest_dir=self.top / "a", archs=["sm_80", "sm_90"],
                                  records={"sm_80": "records/gemm.sm_80.json",
                                           "sm_90": "records/gemm.json"})
        self.assertEqual(self.key(two, "BM=64,BN=128", "--arch", "sm_90"), key)
        self.assertNotEqual(self.key(two, "BM=64,BN=128", "--arch", "sm_80"), key)
        # Without --arch, every arch's key, each line naming its arch.
        r = run("key", "--manifest", two, "--config", "BM=64,BN=128")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines()[1], f"{key}  sm_90")
        self.assertTrue(r.stdout.splitlines()[0].endswith("  sm_80"))

    def test_keys_do_not_depend_on_the_host_compiler(self):
        key = self.key(self.gemm, "BM=64,BN=128")
        gcc_dir = subprocess.run(["g++", "-print-file-name=include"], capture_output=True,
                                 text=True).stdout.strip() or "/usr/lib/gcc/x86_64-linux-gnu/12/include"
        clang_dir = "/usr/lib/llvm-14/lib/clang/14.0.6/include"
        if shutil.which("clang"):
            resource = subprocess.run(["clang", "-print-resource-dir"], capture_output=True,
                                      text=True).stdout.strip()
            if resource:
                clang_dir = resource + "/include"
        include = str(self.root / "kernels" / "include")
        gnu = self.write_manifest("gemm", manifest_dir=self.top / "gnu", host_compiler="GNU 12.2.0",
                                  include_directories=[include, gcc_dir, "/usr/include"])
        clang = self.write_manifest("gemm", manifest_dir=self.top / "clang",
                                    host_compiler="Clang 14.0.6",
                                    include_directories=[include, clang_dir, "/usr/local/include"])
        self.assertEqual(self.key(gnu, "BM=64,BN=128"), key)
        self.assertEqual(self.key(clang, "BM=64,BN=128"), key)
        r = self.verify(manifest=clang)
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stderr, "records/gemm.json: warning: context.host_compiler: record has "
                                   "'GNU 12.2.0', current is 'Clang 14.0.6'\n")

    def test_records_that_do_not_match_are_refused_naming_the_field(self):
        original = self.record.read_text()
        data = json.loads(original)
        src, space = data["source_hash"], data["space_hash"]
        large = [e for e in data["entries"] if e["bucket"] == "large"][0]
        large_key = "k1:" + large["cache_key"]["digest"]

        def case(change, *errors):
            self.record.write_text(original)
            self.edit_record(change)
            self.assert_stale(self.verify(), *errors)

        def set_field(name, value):
            return lambda d: d.__setitem__(name, value)

        case(set_field("kernel", "gemv"), "kernel: record has 'gemv', current is 'gemm'")
        case(set_field("arch", "sm_80"), "arch: record has 'sm_80', current is 'sm_90'")
        case(set_field("source_hash", "0" * 64),
             f"source_hash: record has '{'0' * 64}', current is '{src}'")
        case(set_field("space_hash", "1" * 64),
             f"space_hash: record has '{'1' * 64}', current is '{space}'")
        case(set_field("schema_version", 2), "schema_version: record has '2', current is '1'")
        case(lambda d: d["entries"].append(dict(d["entries"][0])),
             "entries: record has bucket 'large' 2 times, current is one entry per bucket")
        case(lambda d: d["entries"].pop(0),
             "entries: record has no entry for bucket 'large', current space declares it")
        case(lambda d: d["entries"][0].__setitem__("bucket", "huge"),
             "entries: record has bucket 'huge', which the current space lacks (it has "
             "'m<=512', 'large')",
             "entries: record has no entry for bucket 'large', current space declares it")
        case(lambda d: d["entries"][0].__setitem__("bucket", "m<=521"),
             "entries: record has bucket 'm<=521', which the current space lacks, did you mean "
             "'m<=512'? (it has 'm<=512', 'large')",
             "entries: record has no entry for bucket 'large', current space declares it")
        case(lambda d: d["entries"][0]["config"].__setitem__("id", "BM=64,BN=64"),
             "entry 'large' config.id: record has 'BM=64,BN=64', its params give "
             "'BM=128,BN=128'")
        case(lambda d: d["entries"][0].pop("cache_key"),
             f"entry 'large' cache_key: record has none, current is '{large_key}'")
        case(lambda d: d["entries"][0]["cache_key"].__setitem__("digest", "ab" * 32),
             f"entry 'large' cache_key: record has 'k1:{'ab' * 32}', current is '{large_key}'")

    def test_toolchain_drift_fails_unless_allowed(self):
        old = "nvcc 12.4.131, ptxas 12.4.131"
        self.edit_record(lambda d: d.__setitem__("toolchain", old))
        self.assert_stale(self.verify(),
                          f"toolchain: record has '{old}', current is '{self.toolchain}'")
        r = self.verify("--allow-toolchain-drift")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout, "records/gemm.json: fresh (gemm sm_90, 2 entries)\n")
        self.assertEqual(r.stderr, f"records/gemm.json: warning: toolchain: record has '{old}', "
                                   f"current is '{self.toolchain}' (drift allowed: cache keys not "
                                   "compared)\n")

    def test_tool_version_and_context_drift_warn(self):
        def change(d):
            d["tuner_version"] = "0.0.9"
            d["context"]["host_compiler"] = "GNU 13.3.0"
            d["context"]["device"] = "NVIDIA H200"  # no device here: nothing to compare with
            d["entries"][1]["cache_key"]["schema"] = "k0"
        self.edit_record(change)
        r = self.verify()
        self.assertEqual(r.returncode, 0)
        self.assertEqual(
            r.stderr,
            "records/gemm.json: warning: entry 'm<=512' cache_key: record has key schema 'k0', "
            "current is 'k1' (incomparable, not checked)\n"
            "records/gemm.json: warning: context.host_compiler: record has 'GNU 13.3.0', current "
            "is 'GNU 12.2.0'\n"
            "records/gemm.json: warning: tuner_version: record has '0.0.9', current is '0.1.0'\n")

    def test_unreadable_record_and_bad_manifest_are_bad_input(self):
        self.record.write_text('{"schema_version": 1, "kernel": 3}\n')
        r = self.verify()
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr,
                         "records/gemm.json:1:33: error: field 'kernel' must be a string, got 3\n")
        bad = self.top / "bad.json"
        bad.write_text('{"schema_version": 1}\n')
        r = self.verify(manifest=bad)
        self.assertEqual((r.returncode, r.stderr),
                         (2, f"{bad}: error: missing required field 'kernel'\n"))

    def test_broken_environment_and_other_kernels_records(self):
        no_nvcc = self.write_manifest("gemm", manifest_dir=self.top / "n",
                                      nvcc=str(self.top / "no-cuda" / "bin" / "nvcc"))
        r = self.verify(manifest=no_nvcc)
        self.assertEqual((r.returncode, r.stdout), (3, ""))
        self.assertEqual(r.stderr, f"tuner: error: cannot run '{self.top}/no-cuda/bin/nvcc': "
                                   "No such file or directory\n")
        # `record set` never overwrites another kernel's record.
        shutil.copy(self.root / "records" / "gemv.sm_90.json", self.record)
        before = self.record.read_bytes()
        r = run("record", "set", "--manifest", self.gemm, "--bucket", "large",
                "--config", "BM=64,BN=64")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, "tuner record set: error: 'records/gemm.json' is a record of "
                                   "schema 1 for kernel 'gemv' arch 'sm_90', not of schema 1 for "
                                   "'gemm' 'sm_90': move it away or fix the manifest\n")
        self.assertEqual(self.record.read_bytes(), before)
        r = run("key", "--manifest", self.gemm, "--config", "BM=1,BN=1")
        self.assertEqual((r.returncode, r.stderr),
                         (2, f"tuner key: error: config 'BM=1,BN=1' is not in the space "
                             f"'{self.root}/spaces/gemm.toml'\n"))

    # -- key --explain, status, show -------------------------------------------------------

    def test_key_explain(self):
        r = run("key", "--manifest", self.gemm, "--config", "BM=64,BN=128", "--explain")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.golden("key_explain.txt", r.stdout)
        r = run("key", "--manifest", self.gemm, "--config", "BM=64,BN=128", "--json")
        j = json.loads(r.stdout)
        self.assertEqual(j["digest"], self.key(self.gemm, "BM=64,BN=128"))
        self.assertEqual(j["dependencies"],
                         [str(self.root / p) for p in ("kernels/gemm.cu",
                                                       "kernels/include/common.cuh",
                                                       "kernels/include/tile.cuh")])

    def test_status(self):
        with open(self.root / "kernels" / "include" / "tile.cuh", "a") as f:
            f.write("// edited\n")
        r = run("status", "--build-dir", self.build)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.golden("status.txt", r.stdout)
        r = run("status", "--build-dir", self.build, "--check")
        self.assertEqual(r.returncode, 1)
        r = run("status", "--manifest", self.gemv, "--check", "--json")
        self.assertEqual(r.returncode, 1)
        states = [(k["kernel"], k["arch"], k["state"]) for k in json.loads(r.stdout)["kernels"]]
        self.assertEqual(states, [("gemv", "sm_80", "missing"), ("gemv", "sm_90", "fresh")])
        r = run("status", "--manifest", self.gemm, "--check")
        self.assertEqual(r.returncode, 1)
        (self.root / "kernels" / "include" / "tile.cuh").write_text(
            (DATA / "project" / "kernels" / "include" / "tile.cuh").read_text())
        r = run("status", "--manifest", self.gemm, "--check")
        self.assertEqual((r.returncode, r.stdout),
                         (0, "gemm  sm_90  fresh  records/gemm.json (pinned, never measured)\n"))
        r = run("status", "--build-dir", self.top / "nothing")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, f"tuner status: error: no manifests in '{self.top}/nothing/tune"
                                   "/*/manifest.json': configure the build with CMake first, or "
                                   "name them with --manifest\n")

    def test_status_says_where_a_fresh_records_entries_came_from(self):
        def status():
            r = run("status", "--manifest", self.gemm)
            self.assertEqual(r.returncode, 0, r.stderr)
            return r.stdout

        r = run("status", "--manifest", self.gemm, "--json")
        k = json.loads(r.stdout)["kernels"][0]
        self.assertEqual((k["state"], k["sources"]),
                         ("fresh", {"large": "pinned", "m<=512": "pinned"}))
        # entries[0] is 'large', entries[1] 'm<=512' (sorted by label).
        self.edit_record(lambda d: d["entries"][0].update(source="measured", median_ms=0.125,
                                                          samples=50))
        self.assertEqual(status(),
                         "gemm  sm_90  fresh  records/gemm.json (1 measured, 1 pinned)\n")
        # An adopted entry (the budget ended before its check) was never measured here: not
        # fresh (docs/trust.md), with what to do.
        self.edit_record(lambda d: d["entries"][1].update(source="adopted", origin="shard 2/4",
                                                          median_ms=0.5, samples=10))
        self.assertEqual(status(),
                         "gemm  sm_90  stale  records/gemm.json: entry 'm<=512' source: "
                         "'BM=64,BN=128' was adopted from shard 2/4 and never measured here: a "
                         "tune measures it (the record is not fresh until then)\n"
                         "next: re-tune the stale ones on a GPU (cmake --build <build> --target "
                         "tune), or pin every stale record again to the configs it records, "
                         f"without a GPU: tuner record repin --manifest {self.gemm}\n")
        for e in range(2):
            self.edit_record(lambda d: d["entries"][e].update(source="measured", origin=None))
        self.assertEqual(status(), "gemm  sm_90  fresh  records/gemm.json\n")
        # A stale record's sources are in --json too; a missing one has none.
        with open(self.root / "kernels" / "include" / "tile.cuh", "a") as f:
            f.write("// edited\n")
        r = run("status", "--manifest", self.gemm, "--manifest", self.gemv, "--json")
        self.assertEqual([(k["state"], k["sources"]) for k in json.loads(r.stdout)["kernels"]],
                         [("stale", {"large": "measured", "m<=512": "measured"}),
                          ("missing", None), ("fresh", {"all": "pinned"})])

    def test_report_shows_the_record_entry_of_a_logs_bucket(self):
        # A log in the kernel's build folder, as a tune leaves it beside the manifest.
        log = self.build / "tune" / "gemm" / "sm_90" / "m%3C%3D512.trials.jsonl"
        log.parent.mkdir(parents=True)
        shutil.copy(DATA / "gemm.trials.jsonl", log)
        r = run("report", log, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["logs"][0]["record"], {
            "record": "records/gemm.json", "config": "BM=64,BN=128", "source": "pinned",
            "median_ms": None, "samples": 0, "origin": None, "forced": None})
        page = self.top / "page.html"

        def row():
            r = run("report", log, "-o", page)
            self.assertEqual(r.returncode, 0, r.stderr)
            return re.search(r"<tr><th>record</th><td>([^<]*)</td></tr>", page.read_text())[1]

        self.assertEqual(row(), "records/gemm.json: BM=64,BN=128, pinned (never measured)")
        self.edit_record(lambda d: d["entries"][1].update(source="measured", median_ms=0.0979,
                                                          samples=50))
        self.assertEqual(row(), "records/gemm.json: BM=64,BN=128, measured (0.0979 ms over 50 "
                                "samples)")
        self.edit_record(lambda d: d["entries"][1].update(
            source="pinned", median_ms=None, samples=0,
            forced={"status": "failed", "reason": "error: no"}))
        self.assertEqual(row(), "records/gemm.json: BM=64,BN=128, pinned (never measured); pinned "
                                "with --force, although invalid (failed): error: no")
        self.edit_record(lambda d: d.update(entries=d["entries"][:1]))
        self.assertEqual(row(), "records/gemm.json: no entry for this bucket")
        # A log with no manifest beside it has no record row.
        r = run("report", DATA / "gemm.trials.jsonl", "--json")
        self.assertIsNone(json.loads(r.stdout)["logs"][0]["record"])

    def test_show_record(self):
        r = run("show", self.record)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.golden("show_record.txt", r.stdout)
        r = run("show", self.record, "--json")
        self.assertEqual(r.stdout, self.record.read_text())

    def test_show_log(self):
        log = DATA / "gemm.trials.jsonl"
        r = run("show", "gemm.trials.jsonl", cwd=DATA)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "gemm.trials.jsonl:4: warning: skipped a line that is not valid "
                                   "JSON\n")
        self.golden("show_log.txt", r.stdout)
        r = run("show", log, "--json")
        j = json.loads(r.stdout)
        self.assertEqual(j["header"]["tuner"], "gemm/m<=512")
        self.assertEqual(len(j["trials"]), 4)
        r = run("show", self.top / "none.json")
        self.assertEqual((r.returncode, r.stderr),
                         (2, f"tuner show: error: cannot read '{self.top}/none.json'\n"))


if __name__ == "__main__":
    WORK.mkdir(parents=True, exist_ok=True)
    unittest.main(argv=[sys.argv[0]])
