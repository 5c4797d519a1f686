#!/usr/bin/env python3
"""Issue 35, trust round three, as an attacker and a careless user would: a store gc that must
not delete what is not its own, numeric environment variables, store locations, map text,
remote names, bounded file names, streaming logs and the small misleading answers.

No test needs a GPU or a server: directory stores and `/bin/sh` objectives over
tests/data/exec/tile.toml (bucket m<=512, 8 configs).
"""
import json
import os
import shutil
import subprocess
import sys
import time
import unittest

import clitest

TUNER, DATA_ROOT, WORK = clitest.paths()
SPACE = DATA_ROOT / "exec" / "tile.toml"
BUCKET = "m<=512"
HEX = "0123456789abcdef" * 4


def run(*args, env=None, timeout=120, **settings):
    args = [str(a) for a in args]
    return subprocess.run([TUNER, *args], capture_output=True, text=True,
                          env=env or clitest.env(**settings), timeout=timeout)


class TrustCli(unittest.TestCase):
    def setUp(self):
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)

    # -- 2, 3. store gc ------------------------------------------------------------------------

    def store_with_objects(self):
        """A directory store with one fresh and one year-old object, and foreign files that
        share its folders (a bazel disk cache has ac/ and cas/ too), all a year old but one."""
        d = self.dir / "store"
        for sub in ("ac", "cas"):
            (d / sub).mkdir(parents=True)
        fresh = d / "cas" / HEX
        fresh.write_text("fresh")
        old = d / "ac" / HEX.replace("0", "f")
        old.write_text("old")
        foreign = [d / "cas" / "README", d / "ac" / ("A" * 64), d / "cas" / (HEX + ".bak"),
                   d / "ac" / ".hidden"]
        for f in foreign:
            f.write_text("not the store's")
        for f in [old, *foreign]:
            os.utime(f, (time.time() - 365 * 86400,) * 2)
        return d, fresh, old, foreign

    def test_gc_refuses_keep_days_that_are_not_a_sane_number(self):
        d, fresh, old, _ = self.store_with_objects()
        # Hexadecimal (`0x1p4`, 16 days) and blanks (` 7`) were read as numbers.
        for bad in ("nan", "inf", "1e15", "1e300", "-1", "-0", "abc", "0x1p4", " 7", "7 "):
            r = run("store", "gc", "--keep-days", bad, "--remote", d)
            self.assertEqual(r.returncode, 2, (bad, r.stderr))
            self.assertIn("must be a number of days in [0, 36500]", r.stderr)
        self.assertTrue(fresh.exists() and old.exists())

    def test_gc_under_an_hour_needs_force(self):
        d, fresh, old, _ = self.store_with_objects()
        # `1e-320` is in range (nearly 0 days): it was refused as "not in [0, 36500]".
        for short in ("0", "1e-300", "0.04", "1e-320"):
            r = run("store", "gc", "--keep-days", short, "--remote", d)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("pass --force", r.stderr)
        self.assertTrue(fresh.exists() and old.exists())
        r = run("store", "gc", "--keep-days", "0.05", "--remote", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(fresh.exists())
        self.assertFalse(old.exists())
        r = run("store", "gc", "--keep-days", "0", "--force", "--remote", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(fresh.exists())

    def test_gc_touches_only_the_stores_own_names(self):
        d, fresh, old, foreign = self.store_with_objects()
        r = run("store", "gc", "--keep-days", "30", "--remote", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("removed 1 objects", r.stdout)
        self.assertFalse(old.exists())
        self.assertTrue(fresh.exists())
        for f in foreign:
            self.assertTrue(f.exists(), f)

    # -- 4. numeric environment variables ------------------------------------------------------

    def test_an_infinite_store_timeout_is_a_warning_naming_the_variable(self):
        for bad in ("inf", "1e17", "nan", "0", "-1", "abc", "0x10", " 3"):
            r = run("store", "status", "--remote", "http://127.0.0.1:9/x",
                    TUNE_REMOTE_STORE_TIMEOUT=bad, timeout=60)
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertIn(f"warning: TUNE_REMOTE_STORE_TIMEOUT='{bad}' is not a number in "
                          "[0.1, 3600]; the default is used", r.stderr)

    # -- 7. store locations --------------------------------------------------------------------

    def test_store_locations_that_leak_or_escape_are_refused_unechoed(self):
        for location, message in [
                ("HTTP://bob:s3cr3t@host/store", "holds credentials"),
                ("http://host/store?token=s3cr3t", "holds a query, a fragment or a parameter"),
                ("http://host/store#s3cr3t", "holds a query, a fragment or a parameter"),
                ("http://host/store;token=s3cr3t", "holds a query, a fragment or a parameter"),
                (" http://bob:s3cr3t@host/store", "holds credentials"),
                # An escape sequence and a line break were printed raw by `store status`.
                ("http://127.0.0.1:9/store\n\x1b[31ms3cr3t", "holds a control character"),
                ("http://127.0.0.1:9/\u202es3cr3t", "holds a control character, a bidi control"),
                ("http://127.0.0.1:9/store/../../etc/s3cr3t", "holds a '.' or '..' segment"),
                (f"{self.dir}/store/../s3cr3t", "holds a '.' or '..' segment")]:
            for args in (["store", "status", "--json", "--remote", location],
                         ["store", "gc", "--keep-days", "1", "--remote", location]):
                r = run(*args)
                self.assertEqual(r.returncode, 2, (location, r.stderr))
                self.assertIn(message, r.stderr)
                self.assertNotIn("s3cr3t", r.stdout + r.stderr)
            # From the environment, in a command that warns and works locally instead.
            r = run("store", "status", TUNE_REMOTE_STORE=location)
            self.assertNotIn("s3cr3t", r.stdout + r.stderr)

    def test_store_check_prints_a_location_as_every_command_reads_it(self):
        # The configure's check of TUNE_REMOTE_STORE: the same reader as --remote, given the
        # location in the environment.
        for location, read in [(" HTTP://cache:8080/tune/ ", "http://cache:8080/tune"),
                               (f"file://{self.dir}/store", f"{self.dir}/store"),
                               ("\t", "off"), ("off", "off")]:
            r = run("store", "check", TUNE_REMOTE_STORE=location)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, read + "\n", ""), location)
            if location.strip() not in ("", "off"):
                r = run("store", "check", "--remote", location)
                self.assertEqual((r.returncode, r.stdout), (0, read + "\n"), r.stderr)
        r = run("store", "check", TUNE_REMOTE_STORE=" https://bob:s3cr3t@host/x")
        self.assertEqual((r.returncode, r.stdout), (2, ""))
        self.assertEqual(r.stderr, "TUNE_REMOTE_STORE: error: the remote store URL holds "
                         "credentials: remove them and set TUNE_REMOTE_STORE_TOKEN, "
                         "TUNE_REMOTE_STORE_BASIC_AUTH or a netrc file instead\n")

    # -- 10. a resumed exec may be given more evaluations or budget ----------------------------

    def test_exec_resumes_its_log_after_the_stop_rules_change(self):
        space = self.dir / "tile.toml"
        text = SPACE.read_text().replace("timeout_s = 20", "timeout_s = 20\nmax_evals = 3")
        space.write_text(text)
        log = self.dir / "tile.trials.jsonl"
        ex = ["exec", space, "--bucket", BUCKET, "--log", log, "--", "/bin/sh",
              DATA_ROOT / "exec" / "objective.sh"]
        r = run(*ex)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(log.read_text().splitlines()), 1 + 3)
        # [bench] is `tuner run`'s: exec's command measures itself, so a timing edit resumes too.
        for more in ("max_evals = 5", "max_evals = 5\nbudget_s = 600",
                     "max_evals = 6\npatience = 50",
                     "max_evals = 6\npatience = 50\n[bench]\nrep_ms = 5"):
            space.write_text(text.replace("timeout_s = 20\nmax_evals = 3",
                                          "timeout_s = 30\n" + more))
            r = run(*ex)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("another search", r.stderr)
        # Six configs in all (the invalid ones are measured again on each resume, as always).
        ids = {json.loads(l)["config_id"] for l in log.read_text().splitlines()[1:]}
        self.assertEqual(len(ids), 6)
        # A change of what the search is still refuses the log.
        space.write_text(text.replace("BN = [32, 64, 128]", "BN = [32, 64]"))
        r = run(*ex)
        self.assertEqual(r.returncode, 2)
        self.assertIn("log belongs to another search: space_hash", r.stderr)

    # -- 11. the small misleading answers ------------------------------------------------------

    def exec_sh(self, script, *extra):
        self.log = self.dir / "tile.trials.jsonl"
        return run("exec", SPACE, "--bucket", BUCKET, "--log", self.log, *extra, "--",
                   "/bin/sh", "-c", script)

    def test_show_prints_a_huge_median_in_a_few_characters(self):
        r = self.exec_sh("echo 1.79e308")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run("show", self.log)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("1.79e+308", r.stdout)
        self.assertTrue(all(len(l) < 200 for l in r.stdout.splitlines()), r.stdout)

    # -- 6. export reads regular files only ----------------------------------------------------

    def test_export_refuses_a_device_before_reading_it(self):
        r = run("export", "--format", "t4", "/dev/zero", timeout=30)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("/dev/zero", r.stderr)
        self.assertIn("is not a regular file", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
