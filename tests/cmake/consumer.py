"""Shared driver for the consumer-project tests: copy tests/cmake/consumer to a scratch folder,
configure and build it with CMake and Ninja, and read what tune left in the build tree.

Every test script takes: --tune-source <tune repository> --cmake <cmake> --work <scratch dir>
and, except the host-tool test, --tuner <tuner executable> (passed as TUNE_TUNER_EXECUTABLE so
the consumer does not build its own).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

ARGS = None


def parse_args(need_tuner=True):
    """Parses the driver's arguments into ARGS and leaves unittest's argv alone."""
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--tune-source", required=True, type=Path)
    parser.add_argument("--cmake", default="cmake")
    parser.add_argument("--work", required=True, type=Path)
    parser.add_argument("--tuner", required=need_tuner, type=Path)
    # A host without TOML++'s package passes its headers (TUNE_TOMLPP_INCLUDE_DIR) on.
    parser.add_argument("--tomlpp", default="")
    parser.add_argument("--eigen", default="")
    ARGS = parser.parse_args()
    return ARGS


def squash(text):
    """Whitespace runs as one space: CMake re-indents and wraps the lines of its messages."""
    return re.sub(r"\s+", " ", text).strip()


class Result:
    def __init__(self, proc, seconds):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.seconds = seconds

    def __repr__(self):
        return f"rc={self.rc}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def run(cmd, cwd=None, env=None):
    start = time.monotonic()
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True)
    return Result(proc, time.monotonic() - start)


class Project:
    """One scratch copy of the consumer project and its build tree."""

    def __init__(self, name, tuner=True, tune_source=None):
        self.root = ARGS.work / name
        self.tune_source = tune_source or ARGS.tune_source
        if self.root.exists():
            shutil.rmtree(self.root)
        self.src = self.root / "src"
        self.build = self.root / "build"
        shutil.copytree(HERE / "consumer", self.src)
        self.use_tuner = tuner
        # Keep the user's shared cache out of the test, and Ninja to the cores we were given.
        self.env = dict(os.environ)
        self.env.pop("TUNE_CACHE_DIR", None)

    def configure(self, *extra, build=None, generator="Ninja"):
        """Configures the build tree (or `build`, another tree of the same sources)."""
        cmd = [ARGS.cmake, "-S", self.src, "-B", build or self.build, "-G", generator,
               f"-DTUNE_SOURCE_DIR={self.tune_source}"]
        if self.use_tuner:
            cmd.append(f"-DTUNE_TUNER_EXECUTABLE={ARGS.tuner}")
        if ARGS.tomlpp:
            cmd.append(f"-DTUNE_TOMLPP_INCLUDE_DIR={ARGS.tomlpp}")
        if ARGS.eigen:
            cmd.append(f"-DTUNE_EIGEN_INCLUDE_DIR={ARGS.eigen}")
        cmd.extend(extra)
        return run(cmd, env=self.env)

    def build_target(self, target, config=None):
        """Builds `target` (of configuration `config`, in a multi-config tree)."""
        cmd = [ARGS.cmake, "--build", self.build, "--target", target]
        if config:
            cmd += ["--config", config]
        return run(cmd, env=self.env)

    def ctest(self, regex, verbose=False, config=None):
        """Runs the matching tests (of configuration `config`, in a multi-config tree); with
        verbose, their output is shown (as `N: line`) even when they pass."""
        cmd = ["ctest", "--test-dir", self.build, "-R", regex,
               "-V" if verbose else "--output-on-failure"]
        if config:
            cmd += ["-C", config]
        return run(cmd, env=self.env)

    def tuner(self, *args):
        return run([ARGS.tuner, *args], env=self.env)

    def manifest(self, kernel):
        return self.build / "tune" / kernel / "manifest.json"

    def compile_log(self):
        """The compile log as (key, config id) pairs: one per nvcc run warm made."""
        log = self.build / "tune" / "compile.log"
        if not log.exists():
            return []
        return [tuple(line.split(" ", 1)) for line in log.read_text().splitlines()]

    def cache_entries(self, cache=None):
        """Every kernel cache entry, by config id (the ids of the two kernels do not overlap)."""
        cache = cache or self.build / "tune" / "cache"
        entries = {}
        for path in sorted(cache.glob("*.json")):
            entry = json.loads(path.read_text())
            entries[entry["config_id"]] = entry
        return entries

    def write(self, relative, text):
        path = self.src / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def snapshot_tune(dest):
    """Copies what a consumer's add_subdirectory of tune reads (the top CMakeLists.txt, cmake/,
    tuner/, docs/) to `dest`, so that edits to the checkout while a long test runs do not
    change what it builds."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copy2(ARGS.tune_source / "CMakeLists.txt", dest / "CMakeLists.txt")
    for folder in ("cmake", "tuner", "docs"):
        if (ARGS.tune_source / folder).is_dir():
            shutil.copytree(ARGS.tune_source / folder, dest / folder)
    return dest


def main(need_tuner=True):
    import unittest
    parse_args(need_tuner)
    ARGS.work.mkdir(parents=True, exist_ok=True)
    unittest.main(module="__main__", argv=[sys.argv[0]], verbosity=2)
