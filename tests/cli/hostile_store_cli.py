#!/usr/bin/env python3
"""The trust boundary (docs/trust.md) against a hostile remote store: the nginx WebDAV server of
the store_server fixture, seeded by an honest tree and then forged by writing its objects on
disk, as anyone who can PUT to it could. One test per way a forged (or honestly wrong) object
made a wrong winner before; each ends with the true best as the winner, or with a record that is
not fresh.

The compiler is the stand-in of store_cli.py; the worker is tests/data/runner/fake_worker.py with
FAKE_TAME (median 1000 / BLOCK ms, except BLOCK=128, 256 and 1024 at 1000 ms): the true best of
saxpy.toml is BLOCK=2048 at 0.4883 ms.
"""
import json
import os
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

import clitest

TUNER, DATA_ROOT, WORK = clitest.paths()
RUNNER_DATA = DATA_ROOT / "runner"
WORKER_CMD = f"{sys.executable} {RUNNER_DATA / 'fake_worker.py'}"
SERVERS = json.loads(Path(os.environ["TUNE_TEST_STORE_SERVERS"]).read_text())
# Twenty configs, the true best BLOCK=4096 (0.2441 ms), for the floods.
WIDE = """schema = 1
kernel = "saxpy"
require = [{ BLOCK = 64 }]

[params]
BLOCK = [64, 4096, 32, 48, 96, 160, 192, 224, 288, 320, 352, 384, 416, 448, 480, 544, 576, 608,
         640, 672]

[search]
timeout_s = 2
"""


class HostileStoreCli(unittest.TestCase):
    def setUp(self):
        name = self.id().split(".")[-1]
        self.dir = WORK / name
        shutil.rmtree(self.dir, ignore_errors=True)
        self.bin = self.dir / "cuda" / "bin"
        clitest.fake_cuda(self.bin)
        self.url = f"{SERVERS['store']}/hostile-{name}"
        self.root = Path(SERVERS["root"]) / f"hostile-{name}"
        shutil.rmtree(self.root, ignore_errors=True)

    def tree(self, name, space=None):
        return clitest.saxpy_tree(self.dir / name, self.bin / "nvcc",
                                  RUNNER_DATA / "fake_worker.py", DATA_ROOT, space)

    def tuner(self, *args, timeout=180, **env):
        settings = dict(TUNE_RUNNER_WORKER_CMD=WORKER_CMD, FAKE_TAME="1")
        settings.update(env)
        return subprocess.run([TUNER, *map(str, args)], capture_output=True, text=True,
                              env=clitest.env(**settings), timeout=timeout)

    def seeded(self, space=None):
        """An honest tree tuned through the store: its entries and shared trials are there."""
        a = self.tree("honest", space)
        for cmd in (["warm", "--manifest", a, "--remote", self.url],
                    ["run", "--manifest", a, "--remote", self.url, "--timeout", "5"]):
            r = self.tuner(*cmd)
            self.assertEqual(r.returncode, 0, r.stderr)
        return a

    def key(self, manifest, config):
        r = self.tuner("key", "--manifest", manifest, "--config", config)
        return r.stdout.split()[0]

    def entry_path(self, key):
        return self.root / "ac" / key

    def shared_trials(self):
        """(path, object) of every shared trial in the store."""
        out = []
        for p in sorted((self.root / "ac").iterdir()):
            try:
                j = json.loads(p.read_text())
            except ValueError:
                continue
            if isinstance(j, dict) and "trial" in j:
                out.append((p, j))
        return out

    def forge_trials(self, medians, hosts=None, **fields):
        """Every shared trial of the configs in `medians` gets that median (min 0.95x), and the
        fields given; with `hosts`, each config another host name."""
        n = 0
        for p, j in self.shared_trials():
            cid = j["trial"]["config_id"]
            if cid in medians:
                j["trial"]["median_ms"] = medians[cid]
                j["trial"]["min_ms"] = medians[cid] * 0.95
                j["trial"].update(fields)
                if hosts:
                    j["host"] = hosts[cid]
                p.write_text(json.dumps(j))
                n += 1
        self.assertGreater(n, 0)

    def winners(self, manifest_dir):
        record = json.loads((manifest_dir / "src" / "saxpy.json").read_text())
        return {e["bucket"]: (e["config"]["id"], e["source"]) for e in record["entries"]}

    def test_a_forged_failed_entry_is_compiled_here_and_replaced(self):
        a = self.seeded()
        key = self.key(a, "BLOCK=2048")
        entry = json.loads(self.entry_path(key).read_text())
        entry.update(status="failed", reason="the compiler exited with status 1",
                     compiler_output="error: forged", cubin_sha256="")
        self.entry_path(key).write_text(json.dumps(entry))
        b = self.tree("b")
        w = self.tuner("warm", "--manifest", b, "--remote", self.url)
        self.assertEqual(w.returncode, 0, w.stderr)
        self.assertIn("7 candidates: 1 compiled, 6 from the store, 0 already cached; none invalid",
                      w.stdout)
        # This host's verdict replaced the forged one.
        self.assertEqual(json.loads(self.entry_path(key).read_text())["status"], "ok")
        r = self.tuner("run", "--manifest", b, "--remote", self.url, "--timeout", "5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual({c for c, _ in self.winners(self.dir / "b").values()}, {"BLOCK=2048"})

    def test_an_honest_timed_out_entry_of_another_host_is_not_believed(self):
        # Another host's compile timeout (an overloaded runner, its own compile_timeout_s) with
        # a huge compile_s: never this host's verdict.
        a = self.seeded()
        key = self.key(a, "BLOCK=2048")
        entry = json.loads(self.entry_path(key).read_text())
        entry.update(status="timed_out", reason="the compile ran past 1 s", cubin_sha256="",
                     compile_s=1e308)
        self.entry_path(key).write_text(json.dumps(entry))
        b = self.tree("b")
        w = self.tuner("warm", "--manifest", b, "--remote", self.url)
        self.assertIn("1 compiled, 6 from the store", w.stdout)
        self.assertIn("none invalid", w.stdout)

    def test_an_entry_naming_another_configs_blob_is_refused(self):
        a = self.seeded()
        k32, k2048 = self.key(a, "BLOCK=32"), self.key(a, "BLOCK=2048")
        forged = json.loads(self.entry_path(k2048).read_text())
        forged["key"] = k32  # BLOCK=2048's cubin, digest, argv and config under BLOCK=32's key
        self.entry_path(k32).write_text(json.dumps(forged))
        b = self.tree("b")
        w = self.tuner("warm", "--manifest", b, "--remote", self.url)
        self.assertEqual(w.returncode, 0, w.stderr)
        self.assertIn("1 compiled, 6 from the store", w.stdout)
        self.assertIn(f"ac/{k32} is not the entry of its key: its config is 'BLOCK=2048', the "
                      "key's is 'BLOCK=32'", w.stderr)
        cache = self.dir / "b" / "build" / "tune" / "cache"
        self.assertNotEqual((cache / f"{k32}.cubin").read_bytes(),
                            (cache / f"{k2048}.cubin").read_bytes())
        # The same bytes with the config id fixed up: the keyed argv still names BLOCK=2048.
        forged["config_id"] = "BLOCK=32"
        self.entry_path(k32).write_text(json.dumps(forged))
        c = self.tree("c")
        w = self.tuner("warm", "--manifest", c, "--remote", self.url)
        self.assertIn("its compile command is", w.stderr)
        self.assertIn("1 compiled, 6 from the store", w.stdout)

    def test_a_flood_of_forged_fast_trials_from_one_host_distrusts_that_host(self):
        # The forger wrote into the honest host's objects: after the first disagreement none of
        # that host's trials is believed, so each is measured here, the true best included.
        a = self.seeded(WIDE)
        slow = [32, 48, 96, 160, 192, 224, 288, 320, 352, 384, 416, 448, 480, 544, 576, 608, 640,
                672]
        self.forge_trials({f"BLOCK={b}": 0.011 + 0.001 * i for i, b in enumerate(slow)})
        b = self.tree("b", WIDE)
        self.assertEqual(self.tuner("warm", "--manifest", b, "--remote", self.url).returncode, 0)
        side = self.dir / "side.txt"
        r = self.tuner("run", "--manifest", b, "--remote", self.url, "--timeout", "5",
                       FAKE_SIDE=side)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.winners(self.dir / "b"), {"default": ("BLOCK=4096", "measured")})
        self.assertEqual(r.stderr.count("is distrusted for the rest of this tune"), 1, r.stderr)
        measured = [l for l in side.read_text().splitlines() if l.startswith("measure ")]
        self.assertIn("measure BLOCK=4096", measured)

    def test_a_flood_of_forged_fast_trials_from_many_hosts_cannot_exhaust_the_check(self):
        a = self.seeded(WIDE)
        slow = [32, 48, 96, 160, 192, 224, 288, 320, 352, 384, 416, 448, 480, 544, 576, 608, 640,
                672]
        self.forge_trials({f"BLOCK={b}": 0.011 + 0.001 * i for i, b in enumerate(slow)},
                          hosts={f"BLOCK={b}": f"host-{b}" for b in slow})
        b = self.tree("b", WIDE)
        self.assertEqual(self.tuner("warm", "--manifest", b, "--remote", self.url).returncode, 0)
        r = self.tuner("run", "--manifest", b, "--remote", self.url, "--timeout", "5")
        self.assertEqual(r.returncode, 0, r.stderr)
        # 18 checks, no cap: the honest adopted trial of the true best is still a finalist.
        self.assertEqual(self.winners(self.dir / "b"), {"default": ("BLOCK=4096", "measured")})
        self.assertNotIn("rounds of checks", r.stderr)

    def test_a_forged_rejected_early_mark_keeps_no_config_out(self):
        self.seeded()
        self.forge_trials({"BLOCK=2048": 0.48828125}, rejected_early=True, reps=10)
        b = self.tree("b")
        self.assertEqual(self.tuner("warm", "--manifest", b, "--remote", self.url).returncode, 0)
        r = self.tuner("run", "--manifest", b, "--remote", self.url, "--timeout", "5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual({c for c, _ in self.winners(self.dir / "b").values()}, {"BLOCK=2048"})
        self.assertNotIn("stopped early", r.stderr)

    def test_a_forged_finalist_left_by_the_budget_is_distrusted_not_committed(self):
        # Before: the budget ended after the first check, and the second forged finalist of the
        # same host was committed as `adopted`. Now the first disagreement distrusts the host.
        self.seeded()
        self.forge_trials({"BLOCK=32": 0.30, "BLOCK=128": 0.31})
        b = self.tree("b")
        self.assertEqual(self.tuner("warm", "--manifest", b, "--remote", self.url).returncode, 0)
        r = self.tuner("run", "--manifest", b, "--remote", self.url, "--timeout", "5", "--budget",
                       "1", FAKE_SLEEP="0.5")
        self.assertEqual(r.returncode, 0, r.stderr)
        winners = self.winners(self.dir / "b")
        self.assertFalse({c for c, _ in winners.values()} & {"BLOCK=32", "BLOCK=128"}, r.stderr)
        self.assertEqual({s for _, s in winners.values()}, {"measured"})

    def test_an_adopted_winner_is_not_fresh_anywhere(self):
        # A record whose winner another machine measured (the budget ended before its check):
        # written, marked, and not fresh for verify, status, the record test and the header.
        self.seeded()
        b = self.tree("b")
        self.assertEqual(self.tuner("warm", "--manifest", b, "--remote", self.url).returncode, 0)
        self.assertEqual(self.tuner("run", "--manifest", b, "--remote", self.url, "--timeout",
                                    "5").returncode, 0)
        path = self.dir / "b" / "src" / "saxpy.json"
        self.assertEqual(self.tuner("verify", "--manifest", b).returncode, 0)
        record = json.loads(path.read_text())
        record["entries"][0]["source"] = "adopted"
        record["entries"][0]["origin"] = "the remote store (measured on vm)"
        path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
        v = self.tuner("verify", "--manifest", b)
        self.assertEqual(v.returncode, 1, v.stdout + v.stderr)
        self.assertIn("was adopted from the remote store (measured on vm) and never measured "
                      "here: a tune measures it", v.stderr)
        s = self.tuner("status", "--manifest", b)
        self.assertIn("stale", s.stdout)
        # The header is generated from a stale record only with a warning that says why.
        h = self.tuner("header", "--manifest", b, "--output", self.dir / "w.hpp")
        self.assertIn("warning: stale record used for the header of 'saxpy' sm_90: entry ", h.stderr)
        self.assertIn("never measured here", h.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
