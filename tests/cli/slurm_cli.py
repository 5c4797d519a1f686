#!/usr/bin/env python3
"""`tuner slurm submit` and `tuner slurm status` against a real single-node Slurm (the fixture
tests/slurm/slurm_cluster.py starts it in the build tree; SLURM_CONF names it), the shards and
the merge measured by the fake worker of the runner tests (shards_cli.py's project). Skips (exit
77) with the fixture's reason when the daemons cannot run here."""
import json
import os
import subprocess
import sys
import time
import unittest
from pathlib import Path

from shards_cli import TUNER, ShardProject, block

CLUSTER = Path(os.environ.get("TUNE_TEST_SLURM_DIR", ""))


class SlurmCli(ShardProject, unittest.TestCase):
    def submit(self, *extra, env=None):
        return self.tuner("slurm", "submit", "--manifest", str(self.manifest), "--shards", "2",
                          *extra, env=env)

    def wait(self, done, timeout=180):
        """`tuner slurm status` until `done(result)`; the last result."""
        deadline = time.time() + timeout
        while True:
            r = self.tuner("slurm", "status", "--manifest", str(self.manifest))
            if done(r) or time.time() > deadline:
                return r
            time.sleep(1)

    def test_job_array_and_merge_write_the_record(self):
        r = self.submit()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"^tune\.saxpy\.sm_90: submitted 2 shards as job array "
                                   r"\d+ \(one GPU each\) and the merge as job \d+ \(after them\)")
        slurm = self.logdir / "slurm"
        script = (slurm / "shards.sbatch").read_text()
        self.assertIn("#SBATCH --array=1-2\n", script)
        self.assertIn("#SBATCH --gres=gpu:1\n", script)
        self.assertIn('--shard "$SLURM_ARRAY_TASK_ID/2"', script)
        self.assertIn("#SBATCH --gres=gpu:1\n", (slurm / "merge.sbatch").read_text())
        jobs = json.loads((slurm / "slurm.json").read_text())

        r = self.wait(lambda r: r.returncode == 0)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout,
                         f"tune.saxpy.sm_90: job array {jobs['array_job']} (2 shards), merge job "
                         f"{jobs['merge_job']}\n"
                         "  shard 1/2: done\n  shard 2/2: done\n  merge: done: record written\n")
        self.assertEqual(self.winners(), {"n<=4096": block(1024), "large": block(1024)})
        # Each shard on its own GPU, as Slurm gave it (CUDA_VISIBLE_DEVICES), the runoffs once
        # per bucket in the merge job.
        self.assertEqual(len(self.side_lines("runoff ")), 2)

    def test_failed_shard_is_reported_and_the_merge_never_runs(self):
        r = self.submit(env=self.env(FAKE_PROTOCOL=9))
        self.assertEqual(r.returncode, 0, r.stderr)
        jobs = json.loads((self.logdir / "slurm" / "slurm.json").read_text())
        try:
            r = self.wait(lambda r: "shard 2/2: failed" in r.stdout and "pending" in r.stdout)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("  shard 1/2: failed or cancelled (see ", r.stdout)
            # Slurm says 'Dependency' until its scheduler sees the failure, then
            # 'DependencyNeverSatisfied'.
            self.assertRegex(r.stdout, r"\n  merge: pending \(Dependency(NeverSatisfied)?\) "
                                       rf"\(job {jobs['merge_job']}\)\n")
            out = (self.logdir / "slurm" / "shard-1.out").read_text()
            self.assertIn("speaks worker protocol 9", out)
        finally:
            subprocess.run(["scancel", jobs["merge_job"]], check=False)
        self.assertFalse(self.record.exists())


if __name__ == "__main__":
    skip = CLUSTER / "skip"
    if skip.exists():
        print(f"skipped: {skip.read_text().strip()}")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0]])
