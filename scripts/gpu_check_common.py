"""What the GPU host's check scripts (shard_check.py, store_check.py) share: their command line
and running a step with its output appended to the check's log."""
import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class Check:
    """A check named `name` (its log, FAIL lines and default --out folder say it)."""

    def __init__(self, name, default_kernels):
        p = argparse.ArgumentParser()
        p.add_argument("--build", default="build-gpu")
        p.add_argument("--kernels", default=default_kernels)
        p.add_argument("--device", default="0")
        p.add_argument("--out", default=os.environ.get("OUT", str(ROOT / "out" / name)))
        self.args = p.parse_args()
        self.name = name
        self.build = Path(self.args.build).resolve()
        self.out = Path(self.args.out).resolve()
        self.out.mkdir(parents=True, exist_ok=True)
        self.log = self.out / f"{name}.log"
        self.tuner = str(self.build / "tuner" / "tuner")

    def run(self, cmd, env=None):
        """Runs `cmd` with its output appended to the log; a failure ends the check. Returns the
        seconds it took."""
        t0 = time.monotonic()
        with open(self.log, "a") as f:
            f.write(f"$ {' '.join(cmd)}\n")
            f.flush()
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
        if r.returncode != 0:
            sys.exit(f"{self.name}: FAIL: '{' '.join(cmd)}' exited {r.returncode} "
                     f"(see {self.log})")
        return time.monotonic() - t0
