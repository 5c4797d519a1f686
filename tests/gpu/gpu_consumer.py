"""Shared by the GPU tests that tune a consumer project (tune_e2e_test.py, tune_faults_test.py,
tune_harness_api_test.py): their arguments, the TUNE_GPU_E2E gate, configuring a copy of the
project with tune added through add_subdirectory, and reading trial logs.

Arguments: --tune-source <repo> --cmake <cmake> --tuner <tuner> --work <dir> --arch <sm_XX>
[--tomlpp <TOML++ include dir>] [--eigen <Eigen include dir>]. The tests build tune inside the consumer project and take a
minute or more, so they run only with TUNE_GPU_E2E=1 (scripts/gpu_check.sh sets it); otherwise
they exit 77, which ctest reports as skipped.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

parser = argparse.ArgumentParser()
parser.add_argument("--tune-source", required=True, type=Path)
parser.add_argument("--cmake", default="cmake")
parser.add_argument("--tuner", required=True, type=Path)
parser.add_argument("--work", required=True, type=Path)
parser.add_argument("--arch", required=True)
parser.add_argument("--tomlpp", default="")
parser.add_argument("--eigen", default="")
ARGS, _ = parser.parse_known_args()


def skip_unless_enabled(name):
    """Exits 77 (skipped) unless TUNE_GPU_E2E is set."""
    if not os.environ.get("TUNE_GPU_E2E"):
        print(f"{name}: skipped: set TUNE_GPU_E2E=1 to run it (scripts/gpu_check.sh does)")
        sys.exit(77)


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def logged(path):
    """The trials of a log (its header left out); every line must parse."""
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(l) for l in lines[1:]]


def configure(project):
    """Copies tests/gpu/<project> to <work>/project/src and configures it into
    <work>/project/build with the tuner under test. Returns (src, build, env): env is this
    environment without TUNE_CACHE_DIR and TUNE_FAULT_INJECT."""
    root = ARGS.work / "project"
    shutil.rmtree(ARGS.work, ignore_errors=True)
    src, build = root / "src", root / "build"
    shutil.copytree(HERE / project, src)
    env = dict(os.environ)
    env.pop("TUNE_CACHE_DIR", None)
    env.pop("TUNE_FAULT_INJECT", None)
    cmd = [ARGS.cmake, "-S", src, "-B", build, "-G", "Ninja",
           f"-DTUNE_SOURCE_DIR={ARGS.tune_source}", f"-DTUNE_TUNER_EXECUTABLE={ARGS.tuner}",
           f"-DTUNE_ARCH={ARGS.arch}", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
           "-DTUNE_ENABLE_WERROR=OFF"]
    if ARGS.tomlpp:
        cmd.append(f"-DTUNE_TOMLPP_INCLUDE_DIR={ARGS.tomlpp}")
    if ARGS.eigen:
        cmd.append(f"-DTUNE_EIGEN_INCLUDE_DIR={ARGS.eigen}")
    r = run(cmd, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return src, build, env
