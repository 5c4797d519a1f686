#!/usr/bin/env python3
"""The consumer project end to end: warm, the kernel cache, record tests and tune.

The steps build on each other (one build tree), so they run in order: test_1 ... test_9.
"""

import json
import hashlib
import unittest

import consumer
from consumer import Project

SCALE_IDS = {"BLOCK=128,UNROLL=1", "BLOCK=128,UNROLL=2", "BLOCK=256,UNROLL=1",
             "BLOCK=256,UNROLL=2"}
FILL_IDS = {"BLOCK=64,SHARED_KIB=1", "BLOCK=128,SHARED_KIB=1", "BLOCK=256,SHARED_KIB=1",
            "BLOCK=256,SHARED_KIB=64"}


class WarmTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.p = Project("warm")
        configure = cls.p.configure("-DTUNE_ARCH=sm_90")
        assert configure.rc == 0, configure
        cls.configure = configure
        cls.first_warm = cls.p.build_target("warm")
        cls.first_log = cls.p.compile_log()

    def test_1_configure_reports_the_candidates_and_writes_manifests(self):
        self.assertIn("-- tune: scale: 4 candidates for sm_90\n", self.configure.stdout)
        self.assertIn("-- tune: fill: 4 candidates for sm_90\n", self.configure.stdout)
        m = json.loads(self.p.manifest("scale").read_text())
        src = str(self.p.src)
        self.assertEqual(m["schema_version"], 1)
        self.assertEqual(m["kernel"], "scale")
        self.assertEqual(m["entry"], "scale")
        self.assertEqual(m["project_root"], src)
        self.assertEqual(m["sources"], [f"{src}/kernels/scale.cu"])
        self.assertEqual(m["archs"], ["sm_90"])
        self.assertEqual(m["records"], {"sm_90": f"{src}/records/scale.json"})
        # Inherited from the scale_defs target through LINK_LIBRARIES.
        self.assertEqual(m["include_directories"], [f"{src}/include"])
        self.assertEqual(m["definitions"], ["SCALE_FACTOR=2.0f"])
        self.assertEqual(m["runner"], None)
        self.assertEqual(m["tuner"], str(consumer.ARGS.tuner))
        fill = json.loads(self.p.manifest("fill").read_text())
        self.assertEqual(fill["archs"], ["sm_90"])  # from TUNE_ARCH
        self.assertEqual(fill["include_directories"], [])
        self.assertEqual(fill["definitions"], [])

    def test_2_warm_compiles_every_candidate_once(self):
        self.assertEqual(self.first_warm.rc, 0, self.first_warm)
        # One summary line per kernel and architecture, after its steps.
        self.assertIn("tuner warm: scale sm_90: 4 candidates: 4 compiled, 0 from the store, 0 "
                      "already cached; none invalid\n", self.first_warm.stdout)
        self.assertIn("tuner warm: fill sm_90: 4 candidates: 4 compiled, 0 from the store, 0 "
                      "already cached; 2 invalid (1 failed, 1 over_limit)\n",
                      self.first_warm.stdout)
        ids = [cid for _, cid in self.first_log]
        self.assertEqual(len(ids), 8, self.first_log)
        self.assertEqual(set(ids), SCALE_IDS | FILL_IDS)
        print(f"\nwarm of the consumer: {self.first_warm.seconds:.1f} s wall, "
              f"{len(self.first_log)} nvcc runs")

    def test_3_invalid_candidates_are_stored_and_do_not_fail_warm(self):
        entries = self.p.cache_entries()
        broken = entries["BLOCK=64,SHARED_KIB=1"]
        self.assertEqual(broken["status"], "failed")
        self.assertEqual(
            broken["reason"],
            f'the compiler exited with status 1: {self.p.src}/kernels/fill.cu:5:2: error: '
            f'#error "fill needs BLOCK >= 128"')
        self.assertIn('#error "fill needs BLOCK >= 128"', broken["compiler_output"])
        self.assertIsNone(broken["resources"])

        over = entries["BLOCK=256,SHARED_KIB=64"]
        self.assertEqual(over["status"], "over_limit")
        self.assertEqual(over["reason"],
                         "function 'fill' uses 65536 bytes of static shared memory, over the "
                         "limit of 49152 bytes on sm_90")
        self.assertIn("uses too much shared data (0x10000 bytes, 0xc000 max)",
                      over["compiler_output"])
        self.assertEqual(over["resources"]["shared_bytes"], 65536)

        # What warm printed for them (Ninja shows a step's output).
        cache = self.p.build / "tune" / "cache"
        self.assertIn(
            f"tuner warm: fill sm_90 BLOCK=256,SHARED_KIB=64: invalid (over_limit): function "
            f"'fill' uses 65536 bytes of static shared memory, over the limit of 49152 bytes on "
            f"sm_90 (see {cache}/{over['key']}.json)\n", self.first_warm.stdout)

        for cid in SCALE_IDS | {"BLOCK=128,SHARED_KIB=1", "BLOCK=256,SHARED_KIB=1"}:
            entry = entries[cid]
            self.assertEqual(entry["status"], "ok", cid)
            self.assertEqual(entry["reason"], "")
            cubin = cache / f"{entry['key']}.cubin"
            self.assertEqual(hashlib.sha256(cubin.read_bytes()).hexdigest(), entry["cubin_sha256"])
            self.assertGreater(entry["resources"]["registers"], 0)
            self.assertEqual(entry["arch"], "sm_90")
        self.assertEqual(entries["BLOCK=128,UNROLL=1"]["dependencies"],
                         ["kernels/scale.cu", "scale_tile.cuh"])
        self.assertEqual(entries["BLOCK=128,SHARED_KIB=1"]["resources"]["shared_bytes"], 1024)

        # Each stamp holds its candidate's key.
        stamps = sorted((self.p.build / "tune" / "fill" / "sm_90" / "warm").glob("c-*.stamp"))
        self.assertEqual(len(stamps), 4)
        keys = {key for key, cid in self.first_log if cid in FILL_IDS}
        self.assertEqual({s.read_text().strip() for s in stamps}, keys)

    def test_4_second_warm_does_nothing(self):
        again = self.p.build_target("warm")
        self.assertEqual(again.rc, 0, again)
        self.assertNotIn("warm scale", again.stdout)  # no step ran: only the summaries
        self.assertIn("tuner warm: scale sm_90: 4 candidates: 0 compiled, 0 from the store, 4 "
                      "already cached; none invalid\n", again.stdout)
        self.assertIn("tuner warm: fill sm_90: 4 candidates: 0 compiled, 0 from the store, 4 "
                      "already cached; 2 invalid (1 failed, 1 over_limit)\n", again.stdout)
        self.assertEqual(self.p.compile_log(), self.first_log)

    def test_5_record_test_fails_missing_then_passes_pinned(self):
        missing = self.p.ctest("^record\\.scale$")
        self.assertNotEqual(missing.rc, 0, missing)
        self.assertIn(
            f"records/scale.json: error: record: missing for kernel 'scale' arch 'sm_90', "
            f"expected at '{self.p.src}/records/scale.json'\n"
            f"records/scale.json: note: re-tune with: cmake --build {self.p.build} "
            f"--target tune.scale\n", missing.stdout)

        manifest = self.p.manifest("scale")
        for bucket, cid in (("small", "BLOCK=128,UNROLL=1"), ("large", "BLOCK=256,UNROLL=2")):
            pin = self.p.tuner("record", "set", "--manifest", manifest, "--bucket", bucket,
                               "--config", cid)
            self.assertEqual(pin.rc, 0, pin)
        fresh = self.p.ctest("^record\\.scale$", verbose=True)
        self.assertEqual(fresh.rc, 0, fresh)
        self.assertIn("\n1: records/scale.json: fresh (scale sm_90, 2 entries)\n", fresh.stdout)
        # The record's keys are warm's keys: one function names both.
        record = json.loads((self.p.src / "records" / "scale.json").read_text())
        logged = {cid: key for key, cid in self.first_log}
        for entry in record["entries"]:
            self.assertEqual(entry["cache_key"]["digest"], logged[entry["config"]["id"]])

    def test_6_fresh_tune_compiles_nothing_and_does_not_warm(self):
        warm_dir = self.p.build / "tune" / "scale" / "sm_90" / "warm"
        for stamp in warm_dir.glob("c-*.stamp"):
            stamp.unlink()  # were tune to depend on warm, these steps would now run
        tune = self.p.build_target("tune.scale")
        self.assertEqual(tune.rc, 0, tune)
        self.assertIn("tune.scale: record records/scale.json is fresh (sm_90), nothing to do\n",
                      tune.stdout)
        self.assertNotIn("warm scale", tune.stdout)
        self.assertEqual(list(warm_dir.glob("c-*.stamp")), [])
        self.assertEqual(self.p.compile_log(), self.first_log)

        # Warming again finds every candidate in the cache: stamps and depfiles come back and
        # nvcc does not run.
        rewarm = self.p.build_target("warm.scale")
        self.assertEqual(rewarm.rc, 0, rewarm)
        self.assertEqual(len(list(warm_dir.glob("c-*.stamp"))), 4)
        self.assertEqual(len(list(warm_dir.glob("c-*.stamp.d"))), 4)
        self.assertEqual(self.p.compile_log(), self.first_log)

    def test_7_header_edit_recompiles_exactly_the_kernel_that_includes_it(self):
        header = self.p.src / "include" / "scale_tile.cuh"
        header.write_text(header.read_text() + "// an edit\n")
        warm = self.p.build_target("warm")
        self.assertEqual(warm.rc, 0, warm)
        log = self.p.compile_log()
        new = log[len(self.first_log):]
        self.assertEqual(sorted(cid for _, cid in new), sorted(SCALE_IDS))
        old_keys = {key for key, _ in self.first_log}
        self.assertTrue(all(key not in old_keys for key, _ in new))
        self.assertIn("tuner warm: scale sm_90: 4 candidates: 4 compiled, 0 from the store, 0 "
                      "already cached; none invalid\n", warm.stdout)
        self.assertIn("tuner warm: fill sm_90: 4 candidates: 0 compiled, 0 from the store, 4 "
                      "already cached; 2 invalid (1 failed, 1 over_limit)\n", warm.stdout)
        self.assertNotIn("warm scale", self.p.build_target("warm").stdout)

    def test_8_stale_record_fails_with_the_reason_and_tune_cannot_tune(self):
        record = json.loads((self.p.src / "records" / "scale.json").read_text())
        stale = self.p.ctest("^record\\.scale$")
        self.assertNotEqual(stale.rc, 0, stale)
        current = {cid: key for key, cid in self.p.compile_log()}
        for entry in record["entries"]:
            self.assertIn(
                f"records/scale.json: error: entry '{entry['bucket']}' cache_key: record has "
                f"'k1:{entry['cache_key']['digest']}', current is "
                f"'k1:{current[entry['config']['id']]}'\n", stale.stdout)
        self.assertIn(f"records/scale.json: note: re-tune with: cmake --build {self.p.build} "
                      f"--target tune.scale\n", stale.stdout)

        tune = self.p.build_target("tune.scale")
        self.assertNotEqual(tune.rc, 0, tune)
        # tune.<name> has the terminal: its standard error is the build's.
        self.assertIn("tune.scale: record records/scale.json is stale (sm_90):\n", tune.stderr)
        self.assertIn(
            f"tune.scale: error: cannot tune 'scale' for sm_90: it has no HARNESS to measure it "
            f"with; add HARNESS <file> to its tune_add_kernel, or pin a config per bucket with "
            f"'tuner record set --manifest {self.p.manifest('scale')} --arch <arch> --bucket "
            f"<name> --config <id>'\n", tune.stderr)

        # The aggregate and the CI gate see it too; fill has no record at all.
        check = self.p.build_target("tune-check")
        self.assertNotEqual(check.rc, 0, check)

    def test_9_a_shared_cache_serves_a_second_build_tree(self):
        other = Project("warm-shared")
        configure = other.configure("-DTUNE_ARCH=sm_90",
                                    f"-DTUNE_CACHE_DIR={self.p.build / 'tune' / 'cache'}")
        self.assertEqual(configure.rc, 0, configure)
        # Same sources as the first tree before the header edit: every key is already cached.
        warm = other.build_target("warm")
        self.assertEqual(warm.rc, 0, warm)
        self.assertEqual(other.compile_log(), [])
        m = json.loads(other.manifest("scale").read_text())
        self.assertEqual(m["cache_dir"], str(self.p.build / "tune" / "cache"))

    def test_10_warm_from_the_command_line(self):
        manifest = self.p.manifest("fill")
        every = self.p.tuner("warm", "--manifest", manifest)
        self.assertEqual(every.rc, 0, every)
        self.assertTrue(every.stdout.endswith(
            "tuner warm: fill sm_90: 4 candidates: 0 compiled, 0 from the store, 4 already "
            "cached; 2 invalid (1 failed, 1 over_limit)\n"),
            every)
        one = self.p.tuner("warm", "--manifest", manifest, "--config", "BLOCK=256,SHARED_KIB=1",
                           "--json")
        self.assertEqual(one.rc, 0, one)
        out = json.loads(one.stdout)
        self.assertEqual((out["compiled"], out["cached"], out["invalid"]), (0, 1, 0))
        self.assertEqual(out["results"][0]["status"], "ok")

        unknown = self.p.tuner("warm", "--manifest", manifest, "--config", "BLOCK=512")
        self.assertEqual(unknown.rc, 2, unknown)
        self.assertEqual(
            unknown.stderr,
            f"tuner warm: error: config 'BLOCK=512' is not in the space "
            f"'{self.p.src}/spaces/fill.toml' of kernel 'fill' (re-run the CMake configure if the "
            f"space changed)\n")
        stamp = self.p.tuner("warm", "--manifest", manifest, "--stamp", self.p.root / "s")
        self.assertEqual(stamp.rc, 2, stamp)
        self.assertEqual(stamp.stderr,
                         "tuner warm: error: --stamp needs one --arch and one --config\n")
        listed = self.p.tuner("warm", "--list-candidates", self.p.src / "spaces" / "fill.toml")
        self.assertEqual(listed.rc, 0, listed)
        self.assertEqual(listed.stdout, "BLOCK=64,SHARED_KIB=1\nBLOCK=128,SHARED_KIB=1\n"
                                        "BLOCK=256,SHARED_KIB=1\nBLOCK=256,SHARED_KIB=64\n")

    def test_12_a_compiler_launcher_runs_every_compile_under_the_keys_of_a_build_without(self):
        # CMAKE_CUDA_COMPILER_LAUNCHER (a CMake list) goes into the manifest, and every warm step
        # compiles through it; it is no input of the key: the entries are the ones this test's
        # tree (no launcher) compiled from the same sources.
        other = Project("warm-launcher")
        launcher = other.root / "launch.sh"
        launched = other.root / "launched.txt"
        launcher.write_text(f'#!/bin/sh\n[ "$1" = "--via" ] && shift\necho "$@" >> {launched}\n'
                            'exec "$@"\n')
        launcher.chmod(0o755)
        configure = other.configure("-DTUNE_ARCH=sm_90",
                                    f"-DCMAKE_CUDA_COMPILER_LAUNCHER={launcher};--via")
        self.assertEqual(configure.rc, 0, configure)
        m = json.loads(other.manifest("scale").read_text())
        self.assertEqual(m["compiler_launcher"], [str(launcher), "--via"])
        warm = other.build_target("warm")
        self.assertEqual(warm.rc, 0, warm)
        lines = launched.read_text().splitlines()
        self.assertEqual(len(lines), 8, lines)  # scale's 4 and fill's 4, each through it
        self.assertTrue(all(" -cubin " in line for line in lines), lines)
        mine = {p.stem: json.loads(p.read_text())["status"]
                for p in (other.build / "tune" / "cache").glob("*.json")}
        theirs = {p.stem: json.loads(p.read_text())["status"]
                  for p in (self.p.build / "tune" / "cache").glob("*.json")}
        self.assertEqual(len(mine), 8)
        self.assertEqual({k: theirs.get(k) for k in mine}, mine)

    def test_11_all_builds_none_of_tune_s_own_targets(self):
        # Build steps run TUNE_TUNER_EXECUTABLE (or the host tool): `all` of a consumer that
        # adds tune with add_subdirectory compiles neither the in-tree tuner nor tune_core.
        dry = consumer.run([consumer.ARGS.cmake, "--build", self.p.build, "--", "-n"])
        self.assertEqual(dry.rc, 0, dry)
        for output in ("tune/tuner/tuner", "libtune_core.a", "libtune_cuda.a"):
            self.assertNotIn(output, dry.stdout)
        # They are still targets, built on request.
        targets = consumer.run([consumer.ARGS.cmake, "--build", self.p.build, "--target", "help"])
        self.assertIn("tuner: phony", targets.stdout)


if __name__ == "__main__":
    consumer.main()
