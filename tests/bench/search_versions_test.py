#!/usr/bin/env python3
"""The version 2 kernels of the search benchmark (bench/search/README.md "Re-tunes with a
prior") compile for sm_90 and are versions of the same kernel: for the space's required config
with the params the change is about, version 2's PTX has the same entry and the same exported
globals as version 1's (so the same harness launches it), yet it differs (the change is real).
nvcc only: no GPU.

Arguments: --nvcc <nvcc> --source <the repository> --work <scratch dir>.
"""
import argparse
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--nvcc", required=True)
parser.add_argument("--source", required=True, type=Path)
parser.add_argument("--work", required=True, type=Path)
args = parser.parse_args()

root = args.source
search = root / "bench" / "search"
# kernel -> (version 1, version 2, space, include directories, params changed from the required
# config so that the change shows), as kernels/CMakeLists.txt declares them with
# TUNE_SEARCH_TABLES_VERSION 1 and 2.
KERNELS = {
    "stencil": (search / "stencil" / "stencil.cu", search / "stencil" / "stencil_v2.cu",
                search / "stencil" / "stencil.toml", [], {"LOAD": "ldg"}),
    "gemm_full": (root / "kernels" / "gemm" / "gemm.cu", search / "gemm_full_v2.cu",
                  search / "gemm_full.toml", [root / "kernels" / "gemm" / "include"],
                  {"STAGES": 4}),
}

shutil.rmtree(args.work, ignore_errors=True)
args.work.mkdir(parents=True)
cmake_text = (root / "kernels" / "CMakeLists.txt").read_text()
failures = []


def ptx(source, defines, includes, out):
    cmd = [args.nvcc, "-arch=sm_90", "-std=c++17", "-ptx", "-o", str(out), str(source),
           *(f"-I{d}" for d in includes), *(f"-D{k}={v}" for k, v in defines.items())]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        failures.append(f"{source.name} does not compile for {defines}:\n{r.stderr}")
        return None
    return out.read_text()


def interface(text):
    """The entries and the globals a harness reads, by name."""
    return (sorted(re.findall(r"\.entry\s+(\w+)\(", text)),
            sorted(re.findall(r"^(?:\.visible\s+)?\.global\s+[^;=\[]*?(\w+)\s*[=;\[]", text, re.M)))


for kernel, (v1, v2, space, includes, changed) in KERNELS.items():
    if f"{{search_bench}}/{v2.relative_to(search).as_posix()}" not in cmake_text:
        failures.append(f"kernels/CMakeLists.txt does not declare {kernel} version 2 from {v2}")
    required = tomllib.loads(space.read_text())["require"][0] | changed
    first = ptx(v1, required, includes, args.work / f"{kernel}.v1.ptx")
    second = ptx(v2, required, includes, args.work / f"{kernel}.v2.ptx")
    if first is None or second is None:
        continue
    if interface(first) != interface(second) or not interface(first)[0]:
        failures.append(f"{kernel}: version 2's entries and globals {interface(second)} are not "
                        f"version 1's {interface(first)}")
    strip = lambda t: [l for l in t.splitlines() if not l.startswith("//")]
    if strip(first) == strip(second):
        failures.append(f"{kernel}: version 2 compiles to the same PTX as version 1")
    print(f"{kernel}: {v2.name} compiles for sm_90, entries and globals {interface(second)}")

if failures:
    sys.exit("search_versions_test:\n" + "\n".join(failures))
print("search_versions_test: ok")
