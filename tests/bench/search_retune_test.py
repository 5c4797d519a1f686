#!/usr/bin/env python3
"""What bench/search/retune.sh (a real re-tune on a GPU host) relies on, checked without a GPU:
the script parses and refuses an unknown argument; every file it copies to its scratch project
is there; the project's space reads, with the size and the [search] settings its README quotes
and the `retune` line the script rewrites for each re-tune. (The script itself, run here, stops
after the configure, the runner's build and the compile of one config of each version.)

Arguments: --tuner <tuner> --source <the repository>.
"""
import argparse
import re
import subprocess
import sys
import tomllib
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--tuner", required=True)
parser.add_argument("--source", required=True, type=Path)
args = parser.parse_args()

search = args.source / "bench" / "search"
script = search / "retune.sh"
failures = []

r = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
if r.returncode != 0:
    failures.append(f"bash -n retune.sh: {r.stderr}")
r = subprocess.run([str(script), "--no-such-option"], capture_output=True, text=True, timeout=60)
if r.returncode != 2 or "unknown argument '--no-such-option'" not in r.stderr:
    failures.append(f"retune.sh --no-such-option: exit {r.returncode}, {r.stderr!r}")

text = script.read_text()
for copied in re.findall(r'"\$here/([^"$]+)"', text):
    if not (search / copied).exists():
        failures.append(f"retune.sh copies $here/{copied}, which is not in bench/search")
for name in ("stencil.cu", "stencil_v2.cu", "stencil_harness.cpp"):
    if f"$here/stencil/{name}" not in text:
        failures.append(f"retune.sh does not copy stencil/{name}")

space = search / "retune" / "stencil.toml"
r = subprocess.run([args.tuner, "space", str(space)], capture_output=True, text=True, timeout=60)
if r.returncode != 0 or "bucket 'n=4096': 806 configs" not in r.stdout:
    failures.append(f"tuner space {space}: exit {r.returncode}, {r.stderr}{r.stdout[-200:]}")
settings = tomllib.loads(space.read_text())["search"]
expected = {"strategy": "bayes", "patience": 32, "budget_s": 100, "retune": "warm"}
if {k: settings.get(k) for k in expected} != expected:
    failures.append(f"{space} [search] is {settings}, the README says {expected}")
if not re.search(r'^retune = "warm"$', space.read_text(), re.M):
    failures.append(f"{space} has no line 'retune = \"warm\"' for retune.sh to rewrite")

if failures:
    sys.exit("search_retune_test:\n" + "\n".join(failures))
print("search_retune_test: ok")
