#!/usr/bin/env python3
"""The table kernels of the search benchmark that have no table committed yet
(bench/search/README.md "Tables": transpose and histogram) are ready to be measured:
kernels/CMakeLists.txt declares them, each space has one bucket of 3,000 to 6,000 configs with
early rejection off (a table needs every config's full median), measure_table.sh takes them as
--kernel (version 1 only), and a few configs of each, the required one and the corners that
unroll or hold the most, compile for sm_90 with every entry the harness launches. nvcc only: no
GPU.

Arguments: --tuner <tuner> --nvcc <nvcc> --source <the repository> --work <scratch dir>.
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--tuner", required=True)
parser.add_argument("--nvcc", required=True)
parser.add_argument("--source", required=True, type=Path)
parser.add_argument("--work", required=True, type=Path)
args = parser.parse_args()

root = args.source
search = root / "bench" / "search"
# kernel -> (the entries its harness launches, configs besides the required one to compile)
KERNELS = {
    "transpose": (["transpose"], [
        {"TX": 128, "TY": 128, "THREADS": 64, "VEC": 1, "WVEC": 1, "STAGE": "direct", "UNROLL": 1},
        {"TX": 128, "TY": 64, "THREADS": 64, "VEC": 1, "WVEC": 1, "STAGE": "swizzle", "UNROLL": 1},
        {"TX": 16, "TY": 8, "THREADS": 128, "VEC": 1, "WVEC": 1, "STAGE": "padded", "UNROLL": 1},
    ]),
    "histogram": (["histogram", "histogram_merge", "histogram_zero"], [
        {"THREADS": 1024, "ITEMS": 16, "VEC": 4, "BPSM": 16, "PRIV": "warp", "MERGE": "partial",
         "AGG": "match"},
        {"THREADS": 64, "ITEMS": 16, "VEC": 4, "BPSM": 1, "PRIV": "global", "MERGE": "atomic",
         "AGG": "none"},
    ]),
}

shutil.rmtree(args.work, ignore_errors=True)
args.work.mkdir(parents=True)
cmake_text = (root / "kernels" / "CMakeLists.txt").read_text()
measure = search / "measure_table.sh"
failures = []


def config_id(config):
    return ",".join(f'{k}="{v}"' if isinstance(v, str) else f"{k}={v}"
                    for k, v in sorted(config.items()))


for kernel, (entries, corners) in KERNELS.items():
    folder = search / kernel
    space = folder / f"{kernel}.toml"
    for part in (f"tune_add_kernel({kernel}", f"${{search_bench}}/{kernel}/{kernel}.cu",
                 f"${{search_bench}}/{kernel}/{kernel}.toml",
                 f"${{search_bench}}/{kernel}/{kernel}_harness.cpp"):
        if part not in cmake_text:
            failures.append(f"kernels/CMakeLists.txt lacks '{part}'")
    r = subprocess.run([args.tuner, "space", "--json", str(space)], capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        failures.append(f"tuner space {space.name}: exit {r.returncode}\n{r.stderr}")
        continue
    buckets = json.loads(r.stdout)["buckets"]
    counts = [b["count"] for b in buckets]
    if len(buckets) != 1 or not 3000 <= counts[0] <= 6000:
        failures.append(f"{space.name}: buckets of {counts} configs, not one of 3,000 to 6,000")
    text = tomllib.loads(space.read_text())
    if text.get("bench", {}).get("early_reject") is not False:
        failures.append(f"{space.name}: [bench] early_reject is not false")
    required = text["require"][0]
    ids = {c["id"] for c in buckets[0]["configs"]}
    for config in [required, *corners]:
        if config_id(config) not in ids:
            failures.append(f"{space.name}: {config_id(config)} is not in the pruned space")
            continue
        out = args.work / f"{kernel}.{len(list(args.work.iterdir()))}.ptx"
        cmd = [args.nvcc, "-arch=sm_90", "-std=c++17", "-O3", "-ptx", "-o", str(out),
               str(folder / f"{kernel}.cu"), *(f"-D{k}={v}" for k, v in config.items())]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            failures.append(f"{kernel}.cu does not compile for {config_id(config)}:\n{r.stderr}")
            continue
        got = sorted(re.findall(r"\.entry\s+(\w+)\(", out.read_text()))
        if got != entries:
            failures.append(f"{kernel}.cu for {config_id(config)}: entries {got}, not {entries}")
    # measure_table.sh takes the kernel, and refuses a version 2 it does not have, before it
    # configures anything.
    r = subprocess.run(["bash", str(measure), "--kernel", kernel, "--version", "2", "--out",
                        str(args.work / "out")], capture_output=True, text=True, timeout=60)
    if r.returncode != 2 or f"{kernel} has no version 2" not in r.stderr:
        failures.append(f"measure_table.sh --kernel {kernel} --version 2: exit {r.returncode}, "
                        f"'{r.stderr.strip()}'")
    print(f"{kernel}: {counts} configs, {len(corners) + 1} configs compile for sm_90")

r = subprocess.run(["bash", str(measure), "--kernel", "nonesuch"], capture_output=True, text=True,
                   timeout=60)
if r.returncode != 2 or "transpose" not in r.stderr or "histogram" not in r.stderr:
    failures.append(f"measure_table.sh --kernel nonesuch: exit {r.returncode}, "
                    f"'{r.stderr.strip()}'")

if failures:
    sys.exit("search_table_kernels_test:\n" + "\n".join(failures))
print("search_table_kernels_test: ok")
