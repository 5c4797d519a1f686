#!/usr/bin/env python3
"""A stop request ends a tune at once: SIGTERM or SIGINT sent to `tuner run --compile-ahead` (the
path `tuner tune`, the `tune` target, takes) makes it exit within a second or two with 128 +
the signal, and neither a compile nor the measuring worker outlives it. The compiler is a
stand-in whose compiles after the first few never end (they sleep), so that the tune is in the
middle of its compile threads when the signal comes: either with the worker measuring (the
first compiles done) or with the search waiting for a compile (none done).
"""
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
RUNNER_DATA = DATA_ROOT / "runner"

# Answers --version like nvcc 13.0; the first FAST compiles write a cubin, every later one
# notes its pid in slow.txt and sleeps (exec: the pid noted is the sleeping process).
SLOW_NVCC = """#!/bin/sh
if [ "$1" = "--version" ]; then
  echo "Cuda compilation tools, release 13.0, V13.0.48"; exit 0
fi
out=""
prev=""
for a in "$@"; do
  if [ "$prev" = "-o" ]; then out="$a"; fi
  prev="$a"
done
d="$(dirname "$0")"
n=$(cat "$d/compiles.txt" 2>/dev/null | wc -l)
echo "compile $out" >> "$d/compiles.txt"
if [ "$n" -ge FAST ]; then
  echo $$ >> "$d/slow.txt"
  exec sleep 300
fi
printf 'cubin for %s' "$*" | sha256sum > "$out"
"""

SPACE = """schema = 1
kernel = "saxpy"
require = [{ BLOCK = 64 }]

[params]
BLOCK = [64, 512, 32, 2048, 96, 160, 192, 224]

[search]
timeout_s = 60
compile_timeout_s = 600
"""


def alive(pid):
    """Whether `pid` runs (a zombie waiting for its reaper does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    state = [line for line in status.splitlines() if line.startswith("State:")]
    return bool(state) and "Z" not in state[0].split()[1]


def wait_for(predicate, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


class StopCli(unittest.TestCase):
    def tune_and_stop(self, sig, fast):
        name = f"{signal.Signals(sig).name}-{fast}"
        top = WORK / name
        shutil.rmtree(top, ignore_errors=True)
        bin_dir = top / "cuda" / "bin"
        bin_dir.mkdir(parents=True)
        for tool in ["nvcc", "ptxas"]:
            (bin_dir / tool).write_text(SLOW_NVCC.replace("FAST", str(fast)))
            (bin_dir / tool).chmod(0o755)
        manifest = clitest.saxpy_tree(top / "tree", bin_dir / "nvcc",
                                      RUNNER_DATA / "fake_worker.py", DATA_ROOT, SPACE)
        side = top / "worker.txt"
        env = clitest.env(TUNE_RUNNER_WORKER_CMD=f"{sys.executable} {RUNNER_DATA / 'fake_worker.py'}",
                          FAKE_TAME="1", FAKE_SLEEP="30", FAKE_SIDE=side, TUNE_COMPILE_JOBS="2")
        proc = subprocess.Popen([TUNER, "run", "--manifest", str(manifest), "--bucket", "default",
                                 "--compile-ahead"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True)
        try:
            slow = bin_dir / "slow.txt"

            def busy():
                # The compile threads are in their endless compiles, and the worker (once the
                # fast compiles are done) is measuring.
                # (Before the search, only the incumbent is queued: one compile to wait for.)
                if not slow.exists() or len(slow.read_text().split()) < (1 if fast == 0 else 2):
                    return False
                return fast == 0 or (side.exists() and "measure" in side.read_text())

            wait_for(lambda: busy() or proc.poll() is not None, 60)
            self.assertIsNone(proc.poll(), proc.stderr.read() if proc.poll() is not None else "")
            self.assertTrue(busy())
            time.sleep(0.3)
            os.kill(proc.pid, sig)  # to the tuner alone, as `timeout` does
            started = time.monotonic()
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.fail(f"tuner run still runs 3 s after {signal.Signals(sig).name}")
            took = time.monotonic() - started
            err = proc.stderr.read()
            self.assertEqual(proc.returncode, 128 + sig, err)
            self.assertIn("interrupted", err)
            self.assertLess(took, 3.0)
            children = [int(p) for p in slow.read_text().split()]
            if fast > 0:
                children += [int(line.split()[1]) for line in side.read_text().splitlines()
                             if line.startswith("start ")]
            self.assertGreaterEqual(len(children), 1 if fast == 0 else 3)
            # Killed with the tuner: nothing it started is left (a moment for the kernel to
            # deliver the SIGKILLs of the process groups).
            self.assertTrue(wait_for(lambda: not any(alive(p) for p in children), 1.0),
                            [p for p in children if alive(p)])
            # The stopped compiles are not cached as failures of their candidates.
            cache = top / "tree" / "build" / "tune" / "cache"
            if cache.exists():
                for entry in cache.rglob("*.json"):
                    self.assertNotIn("killed by signal", entry.read_text(), entry)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            proc.stdout.close()
            proc.stderr.close()

    def test_sigterm_while_waiting_for_compiles(self):
        self.tune_and_stop(signal.SIGTERM, 0)

    def test_sigint_while_waiting_for_compiles(self):
        self.tune_and_stop(signal.SIGINT, 0)

    def test_sigterm_while_measuring_and_compiling(self):
        self.tune_and_stop(signal.SIGTERM, 2)

    def test_sigint_while_measuring_and_compiling(self):
        self.tune_and_stop(signal.SIGINT, 2)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
