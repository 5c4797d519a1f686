#!/usr/bin/env python3
"""CPU tests of shards: `tuner run --shard K/N`, `tuner merge`, `tuner shards` and `tuner tune`
over several devices (TUNE_DEVICES), with the fake worker of the runner tests
(tests/data/runner/fake_worker.py, through TUNE_RUNNER_WORKER_CMD) in the place of the GPU.

The space is tests/data/runner/saxpy.toml: two buckets of 7 candidates each, BLOCK=64 required.
FAKE_TAME is set, so every compiled candidate is measured at 1000 / BLOCK ms; BLOCK=32 has no
cache entry and BLOCK=2048 a failed one (both invalid without a worker). Split 3 ways the plan is
'n<=4096' [0, 5) | 'n<=4096' [5, 7) and 'large' [0, 2) | 'large' [2, 7).
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest
from pathlib import Path

import clitest

TUNER, DATA_ROOT, WORK = clitest.paths()
DATA = DATA_ROOT / "runner"
RUNNER = os.environ.get("TUNE_TEST_RUNNER", "")
WORKER_CMD = f"{sys.executable} {DATA / 'fake_worker.py'}"
BUCKETS = ["n<=4096", "large"]
ENC = {"n<=4096": "n%3C%3D4096", "large": "large"}


def block(b):
    return f"BLOCK={b}"


class ShardProject:
    """A copy of the saxpy project with its kernel cache written, and the tuner's commands on
    it (also used by slurm_cli.py)."""

    def setUp(self):
        self.assertTrue(RUNNER and os.path.exists(RUNNER), f"no runner at '{RUNNER}'")
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        (self.dir / "src").mkdir(parents=True)
        self.build = self.dir / "build"
        self.cache = self.build / "tune" / "cache"
        self.logdir = self.build / "tune" / "saxpy"
        self.cache.mkdir(parents=True)
        self.logdir.mkdir(parents=True)
        shutil.copy(DATA / "saxpy.cu", self.dir / "src" / "saxpy.cu")
        shutil.copy(DATA / "saxpy.toml", self.dir / "src" / "saxpy.toml")
        self.record = self.dir / "src" / "saxpy.json"
        self.side = self.dir / "side.txt"
        self.shards = self.logdir / "shards"
        self.manifest = clitest.manifest(
            self.logdir / "manifest.json", self.dir / "src", "saxpy", build=self.build,
            sources=[self.dir / "src" / "saxpy.cu"], space=self.dir / "src" / "saxpy.toml",
            records={"sm_90": self.record}, cache_dir=self.cache, log_dir=self.logdir,
            runner=RUNNER)
        for b in [64, 128, 256, 512, 1024, 2048]:
            self.write_entry(b, ok=b != 2048)

    def write_entry(self, b, ok):
        r = subprocess.run([TUNER, "key", "--manifest", str(self.manifest), "--config", block(b)],
                           capture_output=True, text=True, check=True)
        key = r.stdout.strip().split()[-1]
        cubin = b"fake cubin " + str(b).encode()
        if ok:
            (self.cache / f"{key}.cubin").write_bytes(cubin)
        (self.cache / f"{key}.json").write_text(json.dumps({
            "schema_version": 1, "key": key, "key_schema": "k1",
            "status": "ok" if ok else "over_limit", "reason": "" if ok else "too many registers",
            "compiler_output": "", "resources": None,
            "cubin_sha256": hashlib.sha256(cubin).hexdigest() if ok else "",
            "arch": "sm_90", "config_id": block(b), "argv": [], "dependencies": []}))

    def env(self, **extra):
        settings = {"TUNE_RUNNER_WORKER_CMD": WORKER_CMD, "FAKE_SIDE": self.side, "FAKE_TAME": 1}
        settings.update(extra)
        return clitest.env(**settings)

    def tuner(self, *args, env=None, timeout=120):
        return subprocess.run([TUNER, *args], capture_output=True, text=True,
                              env=env or self.env(), timeout=timeout)

    def shard(self, spec, *extra, env=None):
        return self.tuner("run", "--manifest", str(self.manifest), "--timeout", "5", "--shard",
                          spec, *extra, env=env)

    def merge(self, *extra, env=None):
        return self.tuner("merge", "--manifest", str(self.manifest), "--timeout", "5", *extra,
                          env=env)

    def side_lines(self, prefix):
        lines = self.side.read_text().splitlines() if self.side.exists() else []
        return [l for l in lines if l.startswith(prefix)]

    def winners(self):
        record = json.loads(self.record.read_text())
        return {e["bucket"]: e["config"]["id"] for e in record["entries"]}

    def run_all(self, n, **kw):
        """Every shard of `n`, all at once (each its own process)."""
        procs = [subprocess.Popen([TUNER, "run", "--manifest", str(self.manifest), "--timeout",
                                   "5", "--shard", f"{k}/{n}"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=self.env(**kw))
                 for k in range(1, n + 1)]
        for p in procs:
            out, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)


class ShardsCli(ShardProject, unittest.TestCase):
    # -- the split -----------------------------------------------------------------------------

    def test_shards_json_lists_the_split_for_a_matrix(self):
        r = self.tuner("shards", "--manifest", str(self.manifest), "--count", "3", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        matrix = json.loads(r.stdout)
        self.assertEqual([e["shard"] for e in matrix["include"]], ["1/3", "2/3", "3/3"])
        self.assertEqual([e["candidates"] for e in matrix["include"]], [5, 4, 5])
        self.assertEqual([e["buckets"] for e in matrix["include"]],
                         [["n<=4096"], ["n<=4096", "large"], ["large"]])
        self.assertEqual({e["arch"] for e in matrix["include"]}, {"sm_90"})
        r = self.tuner("shards", "--manifest", str(self.manifest), "--count", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "sm_90 shard 1/2: 7 candidates: 'n<=4096' 1..7\n"
                                   "sm_90 shard 2/2: 7 candidates: 'large' 1..7\n")

    def second_kernel(self):
        """A second kernel in the build tree, `axpy`, on the same space, tuned for sm_80 and
        sm_90; both kernels declared. Its manifest's path."""
        other = clitest.manifest(
            self.build / "tune" / "axpy" / "manifest.json", self.dir / "src", "axpy",
            build=self.build, sources=[self.dir / "src" / "saxpy.cu"],
            space=self.dir / "src" / "saxpy.toml", archs=["sm_80", "sm_90"],
            cache_dir=self.cache, log_dir=self.build / "tune" / "axpy", runner=RUNNER)
        (self.build / "tune" / "kernels.list").write_text("saxpy\naxpy\n")
        return other

    def test_shards_of_a_whole_build_tree(self):
        other = self.second_kernel()
        r = self.tuner("shards", "--build-dir", str(self.build), "--count", "3", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        matrix = json.loads(r.stdout)["include"]
        self.assertEqual([(e["arch"], e["shard"]) for e in matrix],
                         [("sm_90", "1/3"), ("sm_90", "2/3"), ("sm_90", "3/3"),
                          ("sm_80", "1/3"), ("sm_80", "2/3"), ("sm_80", "3/3")])
        self.assertEqual([e["kernels"] for e in matrix], [["saxpy", "axpy"]] * 3 + [["axpy"]] * 3)
        self.assertEqual([e["candidates"] for e in matrix], [10, 8, 10, 5, 4, 5])
        self.assertEqual(matrix[1]["buckets"], ["saxpy/n<=4096", "saxpy/large", "axpy/n<=4096",
                                                "axpy/large"])
        # --arch keeps the kernels tuned for it; only declared kernels count.
        r = self.tuner("shards", "--build-dir", str(self.build), "--count", "2", "--arch",
                       "sm_80")
        self.assertEqual((r.returncode, r.stdout),
                         (0, "sm_80 shard 1/2: 7 candidates: 'axpy/n<=4096' 1..7\n"
                             "sm_80 shard 2/2: 7 candidates: 'axpy/large' 1..7\n"), r.stderr)
        # A line said twice is one kernel: it doubled the kernel's 14 candidates.
        (self.build / "tune" / "kernels.list").write_text("saxpy\nsaxpy\n")
        r = self.tuner("shards", "--build-dir", str(self.build), "--count", "1", "--json")
        self.assertEqual([(e["kernels"], e["candidates"])
                          for e in json.loads(r.stdout)["include"]], [(["saxpy"], 14)])
        self.assertTrue(other.exists())
        # One of --manifest and --build-dir.
        r = self.tuner("shards", "--count", "2")
        self.assertEqual(r.returncode, 2)
        self.assertIn("pass --manifest <kernel's manifest.json> or --build-dir <build tree>",
                      r.stderr)
        r = self.tuner("shards", "--build-dir", str(self.dir / "nowhere"), "--count", "2")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no kernel in the build tree", r.stderr)

    def test_stale_only_plans_the_stale_kernels_and_architectures(self):
        # Issue 46 item 6: a plan job measures nothing that is fresh.
        other = self.second_kernel()
        # saxpy (sm_90) pinned fresh; axpy has no records (sm_80, sm_90): both stale.
        for bucket in BUCKETS:
            r = self.tuner("record", "set", "--manifest", str(self.manifest), "--bucket", bucket,
                           "--config", block(64))
            self.assertEqual(r.returncode, 0, r.stderr)
        r = self.tuner("shards", "--build-dir", str(self.build), "--count", "2", "--stale-only",
                       "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        matrix = json.loads(r.stdout)["include"]
        self.assertEqual([(e["arch"], e["shard"], e["kernels"]) for e in matrix],
                         [("sm_80", "1/2", ["axpy"]), ("sm_80", "2/2", ["axpy"]),
                          ("sm_90", "1/2", ["axpy"]), ("sm_90", "2/2", ["axpy"])])
        # Without it, every kernel.
        r = self.tuner("shards", "--build-dir", str(self.build), "--count", "1", "--json")
        self.assertEqual([e["kernels"] for e in json.loads(r.stdout)["include"]],
                         [["saxpy", "axpy"], ["axpy"]])
        # --count 1: one entry per architecture, the merge matrix.
        r = self.tuner("shards", "--build-dir", str(self.build), "--count", "1", "--stale-only",
                       "--json")
        self.assertEqual([(e["arch"], e["kernels"]) for e in json.loads(r.stdout)["include"]],
                         [("sm_80", ["axpy"]), ("sm_90", ["axpy"])])
        # Nothing stale: an empty matrix, and stderr says so.
        (self.build / "tune" / "kernels.list").write_text("saxpy\n")
        r = self.tuner("shards", "--build-dir", str(self.build), "--count", "2", "--stale-only",
                       "--json")
        self.assertEqual((r.returncode, r.stdout, r.stderr),
                         (0, '{"include":[]}\n',
                          "tuner shards: every record is fresh: no shard to run\n"))
        self.assertTrue(other.exists())

    def test_bad_shard_is_refused(self):
        for spec, why in [("0/2", "the index must be between 1 and 2"),
                          ("3/2", "the index must be between 1 and 2"),
                          ("2", "expected K/N, e.g. '2/4'"),
                          ("a/b", "expected K/N with whole numbers, e.g. '2/4'"),
                          ("1/0", "the shard count must be at least 1")]:
            r = self.shard(spec)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(r.stderr, f"tuner run: error: bad shard '{spec}': {why}\n")
        r = self.shard("1/2", "--bucket", "large")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--shard measures its share of every bucket", r.stderr)

    # -- shards and their merge ----------------------------------------------------------------

    def test_sharded_tune_gives_the_winners_of_the_unsharded_one(self):
        r = self.tuner("run", "--manifest", str(self.manifest), "--timeout", "5")
        self.assertEqual(r.returncode, 0, r.stderr)
        unsharded = self.winners()
        self.record.unlink()
        self.side.unlink()

        self.run_all(3)
        # Each shard measured only its slices, each slice with the incumbent BLOCK=64, no
        # runoff; every shard has its own log per bucket and its summary.
        measured = self.side_lines("measure ")
        self.assertEqual(sorted(measured), sorted(
            [f"measure {block(b)}" for b in [64, 128, 256, 512, 1024]] +  # n<=4096 [0, 5)
            [f"measure {block(64)}"] +                                     # n<=4096 [5, 7)
            [f"measure {block(b)}" for b in [64, 128]] +                  # large [0, 2)
            [f"measure {block(b)}" for b in [64, 256, 512, 1024]]))       # large [2, 7)
        self.assertEqual(self.side_lines("runoff "), [])
        for k in (1, 2, 3):
            self.assertTrue((self.shards / "sm_90" / f"shard-{k}-of-3.json").exists())
        self.assertTrue((self.shards / "sm_90" / "n%3C%3D4096.shard-2-of-3.trials.jsonl").exists())
        self.assertTrue((self.shards / "sm_90" / "large.shard-2-of-3.trials.jsonl").exists())
        self.assertFalse(self.record.exists())

        self.side.unlink()
        r = self.merge()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("tuner merge: saxpy sm_90: 3 of 3 shards\n", r.stderr)
        # Each trial says which shard measured it (it said "(from the log)").
        self.assertIn("(shard 2/3)", r.stderr)
        self.assertNotIn("(from the log)", r.stderr)
        # Honest shards: every trial is of its own slice or an incumbent, and no slice lacks one.
        self.assertNotIn("outside its slice", r.stderr)
        self.assertNotIn("slice lacks", r.stderr)
        self.assertNotIn(" in shard 1/3 and ", r.stderr)
        # The finalists, adopted from the shards, are measured here once (issue 35), then their
        # runoff runs on one device, per bucket; nothing else is measured again.
        self.assertEqual(self.side_lines("measure "),
                         [f"measure {block(1024)}", f"measure {block(512)}"] * 2)
        self.assertEqual(self.side_lines("runoff "),
                         [f"runoff {block(1024)} {block(512)}"] * 2)
        self.assertEqual(self.winners(), unsharded)
        self.assertEqual(self.winners(), {"n<=4096": block(1024), "large": block(1024)})
        self.assertIn("saxpy: wrote ", r.stdout)
        result = json.loads((self.logdir / "sm_90" / "n%3C%3D4096.result.json").read_text())
        self.assertEqual(result["trials"], 8)  # 5 + 2 candidates, and the incumbent again
        self.assertEqual(result["device"], "Fake GPU")
        merged = (self.logdir / "sm_90" / "n%3C%3D4096.merged.trials.jsonl").read_text()
        # The header, the shards' trials, the two checks of the finalists, the runoff.
        self.assertEqual(len(merged.splitlines()), 1 + 8 + 2 + 2)
        lines = [json.loads(l) for l in merged.splitlines()[1:]]
        self.assertEqual({l.get("shard") for l in lines[:8]}, {"1/3", "2/3"})
        self.assertEqual([l["checks"]["from"] for l in lines[8:10]], ["shard 1/3"] * 2)
        self.assertTrue(all(l["checks"]["agreed"] for l in lines[8:10]))
        record = json.loads(self.record.read_text())
        self.assertEqual({e["source"] for e in record["entries"]}, {"measured"})
        r = self.tuner("verify", "--manifest", str(self.manifest))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def forge_large(self, shard_log):
        """Gives BLOCK=128 and BLOCK=256 of 'large' fast times in a shard's log."""
        lines = shard_log.read_text().splitlines()
        for i, line in enumerate(lines[1:], 1):
            t = json.loads(line)
            if t["config_id"] in (block(128), block(256)):
                t["median_ms"] = t["min_ms"] = 0.01
                lines[i] = json.dumps(t)
        shard_log.write_text("\n".join(lines) + "\n")

    def test_forged_shard_log_is_refused_against_its_summary(self):
        # Issue 35: a forged shard log was merged unchecked, and its two fast trials of slow
        # configs became the finalists.
        self.run_all(2)
        summary = self.shards / "sm_90" / "shard-2-of-2.json"
        log = self.shards / "sm_90" / "large.shard-2-of-2.trials.jsonl"
        digest = json.loads(summary.read_text())["buckets"][0]["log_sha256"]
        self.assertEqual(digest, hashlib.sha256(log.read_bytes()).hexdigest())
        self.forge_large(log)
        r = self.merge()
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"tuner merge: {log}: error: the trial log of shard 2/2 is not the one its "
                      f"summary '{summary}' describes", r.stderr)
        self.assertIn("run the shard again (tuner run --shard 2/2) or restore its log", r.stderr)
        self.assertFalse(self.record.exists())

        # A summary of an older tuner has no digest: merged with a warning, and the forged
        # finalists are measured here, discarded, and the truly fastest wins on its own time.
        s = json.loads(summary.read_text())
        for b in s["buckets"]:
            del b["log_sha256"]
        summary.write_text(json.dumps(s))
        self.side.unlink()
        r = self.merge()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{log}: warning: the summary '{summary}' has no digest of this log",
                      r.stderr)
        self.assertIn("large: warning: BLOCK=128 measured 7.812 ms here, and shard 2/2 said 0.01 "
                      "ms (more than 3% apart): that adopted trial is discarded", r.stderr)
        self.assertEqual(self.winners(), {"n<=4096": block(1024), "large": block(1024)})
        self.assertIn(f"runoff {block(1024)} {block(512)}", self.side_lines("runoff "))
        record = json.loads(self.record.read_text())
        large = next(e for e in record["entries"] if e["bucket"] == "large")
        self.assertEqual(large["source"], "measured")
        self.assertAlmostEqual(large["median_ms"], 1000 / 1024, places=4)

    # -- a shard's log counts for its own slice only -----------------------------------------------

    def log_of(self, k, n, bucket):
        return self.shards / "sm_90" / f"{ENC[bucket]}.shard-{k}-of-{n}.trials.jsonl"

    def reseal(self, k, n, bucket, log=None, trials=0):
        """Makes shard k's summary agree with its (forged) log of `bucket`: the digest of `log`
        (default its own log) and `trials` more trials."""
        summary = self.shards / "sm_90" / f"shard-{k}-of-{n}.json"
        s = json.loads(summary.read_text())
        b = next(b for b in s["buckets"] if b["bucket"] == bucket)
        log = log or self.log_of(k, n, bucket)
        b["log"] = log.name
        b["log_sha256"] = hashlib.sha256(log.read_bytes()).hexdigest()
        b["result"]["trials"] += trials
        summary.write_text(json.dumps(s))
        return summary

    def test_a_shard_cannot_override_another_shards_trial(self):
        # Shard 2 of 3 measures 'n<=4096' [5, 7) (BLOCK=32 and 2048) and the incumbent BLOCK=64.
        # Its log gets a copy of shard 1's trial of the best config, BLOCK=1024, made slow.
        self.run_all(3)
        ours = self.log_of(2, 3, "n<=4096")
        theirs = [json.loads(l) for l in self.log_of(1, 3, "n<=4096").read_text().splitlines()]
        forged = next(t for t in theirs[1:] if t["config_id"] == block(1024))
        forged["median_ms"] = forged["min_ms"] = 50.0
        ours.write_text(ours.read_text() + json.dumps(forged) + "\n")
        self.reseal(2, 3, "n<=4096", trials=1)
        r = self.merge()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"n<=4096: warning: shard 2/3's log '{ours}' has trials of 1 config "
                      f"outside its slice (first {block(1024)}): dropped", r.stderr)
        self.assertNotIn("50.0000 ms", r.stderr)
        # The true best wins, on the time of the shard whose slice it is.
        self.assertEqual(self.winners(), {"n<=4096": block(1024), "large": block(1024)})
        merged = (self.logdir / "sm_90" / "n%3C%3D4096.merged.trials.jsonl").read_text()
        from_two = [json.loads(l)["config_id"] for l in merged.splitlines()[1:]
                    if json.loads(l).get("shard") == "2/3"]
        self.assertEqual(sorted(from_two), sorted([block(64), block(32), block(2048)]))

    def test_a_slice_config_missing_from_its_log_is_measured_by_the_merge(self):
        # Shard 1's log of 'n<=4096' loses its trial of the best config, BLOCK=1024, and its
        # summary is made to agree: no shard measured it, so the merge does.
        self.run_all(3)
        log = self.log_of(1, 3, "n<=4096")
        lines = log.read_text().splitlines()
        log.write_text("\n".join(l for l in lines if block(1024) not in l) + "\n")
        summary = self.reseal(1, 3, "n<=4096", trials=-1)
        self.side.unlink()
        r = self.merge()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"n<=4096: note: shard 1/3's slice lacks 1 config ({block(1024)}): "
                      "measured here", r.stderr)
        # Measured in the search here, then the adopted finalist BLOCK=512 checked, per bucket.
        self.assertEqual(self.side_lines("measure "),
                         [f"measure {block(1024)}", f"measure {block(512)}"] * 2)
        self.assertEqual(self.winners(), {"n<=4096": block(1024), "large": block(1024)})
        result = json.loads((self.logdir / "sm_90" / "n%3C%3D4096.result.json").read_text())
        self.assertEqual(result["trials"], 8)  # 7 from the shards, 1 measured here

        # A shard whose budget ran out measured part of its slice, as it may: nothing of it is
        # measured here (the record goes, or its winner BLOCK=1024 would be an incumbent).
        s = json.loads(summary.read_text())
        s["buckets"][0]["result"]["budget_exhausted"] = True
        summary.write_text(json.dumps(s))
        self.record.unlink()
        self.side.unlink()
        r = self.merge()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("slice lacks", r.stderr)
        self.assertEqual(self.side_lines("measure "),
                         [f"measure {block(b)}" for b in (512, 256, 1024, 512)])
        self.assertEqual(self.winners(), {"n<=4096": block(512), "large": block(1024)})

    def test_a_summary_naming_another_shards_log_is_refused(self):
        # Shard 3's summary names shard 2's log of 'large' (with its digest) as its own: the
        # merge would read that log twice and shard 3's slice [2, 7) never.
        self.run_all(3)
        summary = self.reseal(3, 3, "large", log=self.log_of(2, 3, "large"))
        r = self.merge()
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"tuner merge: {summary}: error: the \"log\" of bucket 'large' is "
                      "'large.shard-2-of-3.trials.jsonl', and shard 3/3 logs that bucket only to "
                      "'large.shard-3-of-3.trials.jsonl': a summary describes its own shard's "
                      "logs; run the shard again (tuner run --shard 3/3)\n", r.stderr)
        self.assertFalse(self.record.exists())

    def test_shards_that_disagree_on_an_incumbent_are_warned_of(self):
        # Both shards of 'n<=4096' measure the incumbent BLOCK=64 (15.625 ms); shard 2's log
        # says 1 ms.
        self.run_all(3)
        log = self.log_of(2, 3, "n<=4096")
        lines = log.read_text().splitlines()
        for i, line in enumerate(lines[1:], 1):
            t = json.loads(line)
            if t["config_id"] == block(64):
                t["median_ms"] = t["min_ms"] = 1.0
                lines[i] = json.dumps(t)
        log.write_text("\n".join(lines) + "\n")
        self.reseal(2, 3, "n<=4096")
        r = self.merge()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.count(" in shard 1/3 and "), 1, r.stderr)
        self.assertIn(f"n<=4096: warning: {block(64)} measured 15.62 ms in shard 1/3 and 1 ms in "
                      "shard 2/3 (more than 3% apart): both are kept as hints, and the finalists "
                      "are measured here", r.stderr)
        # The fast one became a finalist, was measured here and discarded.
        self.assertIn(f"{block(64)} measured 15.62 ms here, and shard 2/3 said 1 ms", r.stderr)
        self.assertEqual(self.winners(), {"n<=4096": block(1024), "large": block(1024)})

    def test_a_long_bucket_label_shards_and_merges(self):
        # Issue 35: the shard log, its lock and the merged log were named by hand, unbounded,
        # and a 240-byte label killed the shard with `File name too long`.
        long = "large " + "x" * 234
        space = self.dir / "src" / "saxpy.toml"
        space.write_text(space.read_text().replace('name = "large"', f'name = "{long}"'))
        self.run_all(2)
        names = [p.name for p in (self.shards / "sm_90").iterdir()]
        self.assertTrue(all(len(n.encode()) <= 200 for n in names), names)
        # One folder named twice (or inside another) is one place, not "found twice".
        r = self.merge("--from", self.shards, "--from", self.shards / "sm_90")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("found twice", r.stderr)
        self.assertEqual(self.winners(), {"n<=4096": block(1024), long: block(1024)})
        names = [p.name for p in (self.logdir / "sm_90").iterdir()]
        self.assertTrue(any(n.startswith("large%20xxx") and n.endswith(".merged.trials.jsonl")
                            for n in names), names)

    def test_shards_count_is_bounded_and_warned_above_the_candidates(self):
        r = self.tuner("shards", "--manifest", str(self.manifest), "--count", "1000")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--count: must be a whole number in [1, 256], got '1000'", r.stderr)
        self.assertEqual(r.stdout, "")
        r = self.tuner("shards", "--manifest", str(self.manifest), "--count", "20")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("warning: 20 shards for 14 candidates on sm_90: 6 of them will have "
                      "nothing to measure", r.stderr)
        self.assertIn("shard 1/20: 1 candidate: ", r.stdout)
        # The empty shards come last.
        lines = r.stdout.splitlines()
        self.assertEqual([("0 candidates" in line) for line in lines], [False] * 14 + [True] * 6)

    def test_missing_shard_is_listed_and_nothing_written_unless_partial(self):
        for spec in ("1/3", "3/3"):
            r = self.shard(spec)
            self.assertEqual(r.returncode, 0, r.stderr)
        r = self.merge()
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("tuner merge: error: saxpy (sm_90): shard 2/3 not done (no summary found)\n",
                      r.stderr)
        self.assertIn("nothing written; run the missing shards", r.stderr)
        self.assertFalse(self.record.exists())
        r = self.merge("--partial")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("tuner merge: warning: saxpy (sm_90): shard 2/3 not done", r.stderr)
        # Shard 1 saw BLOCK=64..1024 of 'n<=4096', shard 3 BLOCK=256..2048 of 'large'.
        self.assertEqual(self.winners(), {"n<=4096": block(1024), "large": block(1024)})

    def test_interrupted_shard_is_missing_and_resumes(self):
        r = self.shard("1/2", env=self.env(TUNE_FAULT_INJECT="log-append-after-write:3"))
        self.assertEqual(r.returncode, -signal.SIGKILL, r.stderr)
        self.assertFalse((self.shards / "sm_90" / "shard-1-of-2.json").exists())
        r = self.shard("2/2")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.merge()
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("shard 1/2 not done", r.stderr)
        self.side.unlink()
        r = self.shard("1/2")
        self.assertEqual(r.returncode, 0, r.stderr)
        # The three trials logged before the kill are not measured again.
        self.assertEqual(len(self.side_lines("measure ")), 2)
        self.assertEqual(self.merge().returncode, 0)

    def test_shard_still_running_is_refused(self):
        self.assertEqual(self.shard("2/2").returncode, 0)
        slow = subprocess.Popen([TUNER, "run", "--manifest", str(self.manifest), "--shard", "1/2"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=self.env(FAKE_SLEEP=30))
        try:
            lock = self.shards / "sm_90" / "shard-1-of-2.json.lock"
            deadline = time.time() + 30
            while not lock.exists() and time.time() < deadline:
                time.sleep(0.05)
            r = self.merge()
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(f"tuner merge: error: shard 1/2 is locked by pid {slow.pid} on host ",
                          r.stderr)
            self.assertIn("it is still running; merge when it is done", r.stderr)
            r = self.shard("1/2")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("shard 1/2 is locked by pid", r.stderr)
        finally:
            slow.send_signal(signal.SIGTERM)
            slow.communicate(timeout=30)
        self.assertFalse(self.record.exists())

    def test_shards_that_disagree_are_refused_naming_the_difference(self):
        other = self.dir / "other"
        self.assertEqual(self.shard("1/2").returncode, 0)
        self.assertEqual(self.shard("2/3", "--out", str(other)).returncode, 0)
        r = self.merge("--from", str(self.shards), "--from", str(other))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("tuner merge: error: shards of different splits: ", r.stderr)
        self.assertIn("(shard 1/2) and ", r.stderr)
        self.assertIn("(shard 2/3); merge the shards of one split", r.stderr)

        # The same shard twice.
        shutil.rmtree(other)
        shutil.copytree(self.shards, other)
        r = self.merge("--from", str(self.shards), "--from", str(other))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("tuner merge: error: shard 1/2 found twice: ", r.stderr)

        # Another device kind.
        shutil.rmtree(other)
        r = self.shard("2/2", env=self.env(FAKE_DEVICES="0=Other GPU"), *["--device", "0"])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.merge()
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("tuner merge: error: the shards ran on different kinds of device: "
                      "'Fake GPU' (", r.stderr)
        self.assertIn("'Other GPU' (", r.stderr)
        self.assertIn("a record is for one device kind", r.stderr)

        # Other bench settings (the space changed after the shards ran).
        self.assertEqual(self.shard("2/2").returncode, 0)
        space = self.dir / "src" / "saxpy.toml"
        space.write_text(space.read_text() + "\n[bench]\nrep_ms = 50\n")
        r = self.merge()
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("was measured with other bench settings: rep_ms 100.0 (shard) vs 50.0 "
                      "(this build)", r.stderr)
        self.assertFalse(self.record.exists())

    def test_interrupted_merge_leaves_the_record_as_it_was(self):
        r = self.tuner("run", "--manifest", str(self.manifest), "--timeout", "5")
        self.assertEqual(r.returncode, 0, r.stderr)
        before = self.record.read_bytes()
        self.run_all(2)
        r = self.merge(env=self.env(TUNE_FAULT_INJECT="record-save-before-rename"))
        self.assertEqual(r.returncode, -signal.SIGKILL, r.stderr)
        self.assertEqual(self.record.read_bytes(), before)

    def test_merge_without_shards_says_how_to_make_them(self):
        r = self.merge()
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr, f"tuner merge: {self.shards}: error: no such folder of shard "
                                   "logs\n")
        self.shards.mkdir()
        r = self.merge()
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"no shard of 'saxpy' (sm_90) under '{self.shards}': run 'tuner run "
                      f"--manifest {self.manifest} --shard K/N' first", r.stderr)

    # -- several devices of one host -----------------------------------------------------------

    def tune(self, devices, **kw):
        # `--cmake true`: the warm step succeeds without a build tree (the cache is written).
        return self.tuner("tune", "--manifest", str(self.manifest), "--cmake", "true",
                          env=self.env(TUNE_DEVICES=devices, **kw))

    def test_tune_devices_runs_one_shard_per_device_then_merges(self):
        r = self.tune("0,1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("tune.saxpy: 2 devices of one kind: 0 'Fake GPU', 1 'Fake GPU'", r.stderr)
        self.assertIn("[gpu 0] ", r.stderr)
        self.assertIn("[gpu 1] ", r.stderr)
        devices = self.side_lines("device ")
        # Two probes, then shard 1/2 on device 0 and 2/2 on device 1, the runoffs on device 0.
        self.assertEqual(set(devices), {"device 0", "device 1"})
        self.assertTrue((self.logdir / "devices" / "sm_90" / "shard-1-of-2.json").exists())
        self.assertEqual(self.winners(), {"n<=4096": block(1024), "large": block(1024)})
        r = self.tune("0,1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("is fresh", r.stdout)

    def test_tune_devices_of_different_kinds_are_refused(self):
        r = self.tune("0,1", FAKE_DEVICES="1=Other GPU")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("tune.saxpy: error: TUNE_DEVICES lists devices of different kinds (0 'Fake "
                      "GPU', 1 'Other GPU'); a record is per device kind: list devices of one "
                      "kind\n", r.stderr)
        self.assertEqual(self.side_lines("measure "), [])
        self.assertFalse(self.record.exists())

    def test_tune_devices_all_counts_what_cuda_shows(self):
        # `1 + commas` made `-1` (every GPU hidden) one device and `0,1,,,` four.
        r = self.tune("all", CUDA_VISIBLE_DEVICES="-1")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("tune.saxpy: error: TUNE_DEVICES=all: CUDA_VISIBLE_DEVICES='-1' shows no "
                      "GPU (CUDA stops at its first entry that is not a device index or UUID)\n",
                      r.stderr)
        r = self.tune("all", CUDA_VISIBLE_DEVICES="0,1,,,")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("tune.saxpy: 2 devices of one kind: 0 'Fake GPU', 1 'Fake GPU'", r.stderr)
        self.assertIn("on devices 0,1, one shard each", r.stderr)

    def test_tune_devices_bad_list_is_refused(self):
        for value, why in [("0,x", "bad device 'x' in '0,x': expected device numbers such as "
                                   "'0,1', or 'all'"),
                           ("1,1", "device 1 is listed twice in '1,1'")]:
            r = self.tune(value)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(f"tune.saxpy: error: TUNE_DEVICES: {why}\n", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
