#!/usr/bin/env python3
"""The committed tables of the search benchmark (bench/search/tables/, measured on an H200) still
match their spaces: each is unpacked and replayed by bench_search, which refuses a table with a
config outside the space, a config of the space without a trial or a config logged twice. A space
edited without measuring its table again fails here.

Arguments: --bench <bench_search> --source <the repository> --work <scratch dir>.
"""
import argparse
import gzip
import re
import shutil
import subprocess
import sys
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--bench", required=True)
parser.add_argument("--source", required=True, type=Path)
parser.add_argument("--work", required=True, type=Path)
args = parser.parse_args()

search = args.source / "bench" / "search"
# table file -> (space, bucket)
TABLES = {
    "stencil.n_4096.jsonl.gz": (search / "stencil" / "stencil.toml", "n=4096"),
    "gemm_full.skinny.jsonl.gz": (search / "gemm_full.toml", "skinny"),
    "gemm_full.square.jsonl.gz": (search / "gemm_full.toml", "square"),
    "stencil.v2.n_4096.jsonl.gz": (search / "stencil" / "stencil.toml", "n=4096"),
    "gemm_full.v2.skinny.jsonl.gz": (search / "gemm_full.toml", "skinny"),
    "gemm_full.v2.square.jsonl.gz": (search / "gemm_full.toml", "square"),
}

shutil.rmtree(args.work, ignore_errors=True)
args.work.mkdir(parents=True)
committed = sorted(p.name for p in (search / "tables").glob("*.jsonl.gz"))
if committed != sorted(TABLES):
    sys.exit(f"search_tables_test: bench/search/tables holds {committed}, the test knows "
             f"{sorted(TABLES)}: add the new table's space and bucket to TABLES")

for name, (space, bucket) in TABLES.items():
    table = args.work / name.removesuffix(".gz")
    table.write_bytes(gzip.decompress((search / "tables" / name).read_bytes()))
    run = subprocess.run([args.bench, "--space", str(space), "--table", str(table), "--bucket",
                          bucket, "--seeds", "1", "--strategies", "random",
                          "--max-fraction", "0.05"], capture_output=True, text=True)
    if run.returncode != 0 or "optimum" not in run.stdout:
        sys.exit(f"search_tables_test: {name} against {space.name} bucket '{bucket}': exit "
                 f"{run.returncode}\n{run.stdout}{run.stderr}")
    print(f"{name}: {run.stdout.splitlines()[0]}")
# table_repeatability.py on the two gemm versions: the 2-stage configs both share.
repeat = search / "table_repeatability.py"
tables = search / "tables"
run = subprocess.run([sys.executable, str(repeat), str(tables / "gemm_full.skinny.jsonl.gz"),
                      str(tables / "gemm_full.v2.skinny.jsonl.gz"), "--where", "STAGES=2",
                      "--top", "3"], capture_output=True, text=True)
lines = run.stdout.splitlines()
if (run.returncode != 0 or not lines
        or not re.match(r"^\d+ configs in both tables: common shift [+-]\d", lines[0])
        or len(lines) != 5):
    sys.exit(f"search_tables_test: table_repeatability.py: exit {run.returncode}\n"
             f"{run.stdout}{run.stderr}")
print(lines[0])
run = subprocess.run([sys.executable, str(repeat), str(tables / "gemm_full.skinny.jsonl.gz"),
                      str(tables / "gemm_full.v2.skinny.jsonl.gz"), "--where", "STAGES=7"],
                     capture_output=True, text=True)
if run.returncode == 0 or "no config" not in run.stderr:
    sys.exit(f"search_tables_test: table_repeatability.py with nothing selected: exit "
             f"{run.returncode}\n{run.stdout}{run.stderr}")
print("search_tables_test: ok")
