"""What every CLI test script (tests/cli/*_cli.py) shares: the arguments it takes from ctest
(--tuner <tuner executable>, --data <tests/data> and --work <scratch folder>; unknown arguments
are left to unittest), a clean environment, and the kernel manifests it writes."""
import argparse
import json
import os
import shutil
from pathlib import Path

# What an objective or a fake worker reads (exec's OBJ_*, the runner tests' FAKE_*) and tune's
# own switches: none of an outer run's may leak into a test.
TEST_PREFIXES = ("OBJ_", "FAKE_", "TUNE_")


def paths():
    """(the tuner as an absolute path, tests/data resolved, the scratch folder resolved)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--tuner", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--work", required=True)
    args, _ = parser.parse_known_args()
    return os.path.abspath(args.tuner), Path(args.data).resolve(), Path(args.work).resolve()


def env(**settings):
    """This environment without TEST_PREFIXES variables, plus `settings` (values as strings)."""
    out = {k: v for k, v in os.environ.items() if not k.startswith(TEST_PREFIXES)}
    out.update({k: str(v) for k, v in settings.items()})
    return out


# The CUDA compiler a manifest names: the one on PATH, else the toolkit's usual place. Tests
# that only compute keys never run it beyond `--version`.
NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"


def manifest(path, root, kernel, build=None, **fields):
    """Writes a kernel manifest (docs/manifest.md, schema 1) to `path`, creating its folder,
    and returns `path`. The defaults follow the test projects' layout (tests/data/project):

      schema_version  1
      kernel          `kernel`
      entry           `kernel` (the extern "C" symbol)
      project_root    `root`
      build_dir       `build`, default <root>/build
      sources         [<root>/kernels/<kernel>.cu] (sources[0] is compiled per candidate)
      space           <root>/spaces/<kernel>.toml
      archs           ["sm_90"]
      records         each arch to <root>/records/<kernel>.json, or with several archs to
                      <root>/records/<kernel>.<arch>.json (as tune_add_kernel names them)
      nvcc            NVCC

    `fields` adds or replaces any field, the optional ones included: include_directories,
    definitions, compile_options (lists), host_compiler, cache_dir, log_dir, compile_log,
    runner, tuner; None writes null. Paths may be pathlib.Path; they are written as strings.

    Example: clitest.manifest(build / "tune" / "gemm" / "manifest.json", root, "gemm",
                              build=build, runner=None, tuner=TUNER)
    """
    path, root = Path(path), Path(root)
    archs = fields.get("archs", ["sm_90"])
    if len(archs) == 1:
        records = {archs[0]: root / "records" / f"{kernel}.json"}
    else:
        records = {a: root / "records" / f"{kernel}.{a}.json" for a in archs}
    m = {
        "schema_version": 1,
        "kernel": kernel,
        "entry": kernel,
        "project_root": root,
        "build_dir": Path(build) if build is not None else root / "build",
        "sources": [root / "kernels" / f"{kernel}.cu"],
        "space": root / "spaces" / f"{kernel}.toml",
        "archs": archs,
        "records": records,
        "nvcc": NVCC,
    }
    m.update(fields)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(m, indent=2, default=str) + "\n")
    return path


# A stand-in CUDA compiler for the store tests: answers `--version` like nvcc 13.0, writes a
# cubin (a digest of its arguments, so each candidate's bytes differ) and counts its compiles in
# compiles.txt beside itself; no GPU toolchain needed.
FAKE_NVCC = """#!/bin/sh
if [ "$1" = "--version" ]; then
  echo "Cuda compilation tools, release 13.0, V13.0.48"; exit 0
fi
out=""
prev=""
for a in "$@"; do
  if [ "$prev" = "-o" ]; then out="$a"; fi
  prev="$a"
done
echo "compile $out" >> "$(dirname "$0")/compiles.txt"
printf 'cubin for %s' "$*" | sha256sum > "$out"
"""


def fake_cuda(bin_dir, script=FAKE_NVCC):
    """Writes `script` (default FAKE_NVCC) as `nvcc` and `ptxas` into `bin_dir` (created);
    returns the nvcc path."""
    bin_dir = Path(bin_dir)
    bin_dir.mkdir(parents=True, exist_ok=True)
    for tool in ["nvcc", "ptxas"]:
        (bin_dir / tool).write_text(script)
        (bin_dir / tool).chmod(0o755)
    return bin_dir / "nvcc"


def saxpy_tree(top, nvcc, runner, data, space_text=None):
    """A project and build tree of its own under `top`: the saxpy kernel of <data>/runner (its
    space, or `space_text`), its kernel cache in the build; returns the manifest's path."""
    top = Path(top)
    (top / "src").mkdir(parents=True)
    shutil.copy(Path(data) / "runner" / "saxpy.cu", top / "src" / "saxpy.cu")
    if space_text is None:
        shutil.copy(Path(data) / "runner" / "saxpy.toml", top / "src" / "saxpy.toml")
    else:
        (top / "src" / "saxpy.toml").write_text(space_text)
    build = top / "build"
    return manifest(build / "tune" / "saxpy" / "manifest.json", top / "src", "saxpy", build=build,
                    sources=[top / "src" / "saxpy.cu"], space=top / "src" / "saxpy.toml",
                    records={"sm_90": top / "src" / "saxpy.json"}, nvcc=nvcc, runner=runner)
