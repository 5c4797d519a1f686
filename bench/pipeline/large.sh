#!/usr/bin/env bash
# The large-space case of the pipeline benchmark (device): the compute kernel over 5,280 configs
# whose compile times differ by more than 10x (project/large.toml), tuned from a cold kernel cache
# with a bucket fixture harness, with `bayes` and with `anneal` under a budget, by this tree's
# tuner and, with --baseline-src, by a baseline tuner built from another source tree (the same
# case, one after the other in one run, so the ratios compare like with like).
#
#   bench/pipeline/large.sh --build <tune build tree> --out <dir> [--arch sm_90]
#       [--budget-s 300] [--seed 1] [--strategies "bayes anneal bayes-cost"] [--baseline-src <tune source tree>]
#       [--work <dir>] [--compile-only] [--only new|baseline] [--prepare] [--figures-only]
#       [--n 262144]
#
# The full case (two strategies, two tuners, 300 s each) runs longer than one 10-minute device
# call: run it in parts that share --work and --out (kept between parts): `--prepare` builds the
# tuners and both projects' runners, then `--only new --strategies bayes`, ..., and
# `--figures-only` prints the figures of every part found.
#
# Per strategy and tuner it prints: evaluations, evaluations per minute of the search's wall time,
# GPU busy (warm-up plus timed reps) as a share of that wall time, compiles never measured as a
# share of the compiles, whether the runoff ran, where the wall time went (compiler waits,
# strategy, setup and gate, warm-up, timed reps), and the ratios new/baseline. Targets: GPU busy
# >= 50%, never measured <= 25%, evaluations per minute >= 5x the baseline, the runoff always
# runs. --n sets the bucket's element count (default 262144: the best config runs 0.23 ms on an
# H200, so the search is bound by the compiler; 4194304, 16x the work per candidate, lets the GPU
# become the bound; the fixture's host reference grows with it, about 14 s there).
# --strategies takes `bayes-off` and `anneal-off` as well: the strategy with the compile-spend
# features off (`cost_weight = 0`, `compile_cap_factor = 0`), the "before" of docs/search.md
# "Compile cost": per pair it prints the compile seconds spent until the search first measured a
# config within 1.02x of the best it ends with, and the two bests.
# --strategies takes `grid144` as well: a complete grid of 144 of the configs from a cold cache;
# it prints the tune's wall time against the lower bound max(compiler seconds / compile threads,
# GPU seconds of warm-up and timed reps).
# --strategies takes `bayes-cost` as well: bayes with `cost_weight = 1` (expected improvement per
# predicted compile second; docs/search.md "Compile cost"), whose ratios compare with `bayes`.
# --compile-only (no GPU needed): configure, build the runners and compile a few
# candidates, printing their compile seconds (the spread the case relies on).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="" out="" arch="sm_90" work="${TMPDIR:-/tmp}/tune-bench-large" budget=300 n=262144
strategies="bayes anneal" seed=1 baseline_src="" compile_only=0 only="" figures_only=0 prepare=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --arch) arch="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --budget-s) budget="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --n) n="$2"; shift 2 ;;
    --strategies) strategies="$2"; shift 2 ;;
    --baseline-src) baseline_src="$(cd "$2" && pwd)"; shift 2 ;;
    --compile-only) compile_only=1; shift ;;
    --only) only="$2"; shift 2 ;;
    --figures-only) figures_only=1; shift ;;
    --prepare) prepare=1; shift ;;
    *) echo "large.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
source "$here/common.sh"
tuner=""
[[ -n "$build" ]] && tuner=$(find_tuner "$build")
pipeline_dirs large.sh keep
if (( figures_only )); then
  names=(new)
  [[ -n "$baseline_src" || -n "$(ls "$out"/baseline.*.trials.jsonl 2>/dev/null)" ]] && names+=(baseline)
  python3 "$here/large_figures.py" --out "$out" --strategies $strategies --tuners "${names[@]}" \
    | tee "$out/summary.txt"
  exit 0
fi
header_deps

# The tuners: this tree's, and the baseline's built from its source in a build folder of its own.
names=(new) tuners=("$tuner") sources=("$repo")
if [[ -n "$baseline_src" && "$only" != new ]]; then
  : > "$out/baseline_build.log"
  baseline_tuner=$(build_tuner "$baseline_src" "$work/baseline-build" \
                   "$out/baseline_configure.log" "$out/baseline_build.log")
  names+=(baseline) tuners+=("$baseline_tuner") sources+=("$baseline_src")
fi

# One project per tuner (its runner speaks that tuner's protocol), one cache per run.
configure() {  # name, tuner, tune source, strategy
  local src="$work/$1/src" b="$work/$1/build"
  mkdir -p "$work/$1"
  rm -rf "$src"
  cp -r "$here/project" "$src"
  # Each tuner's harness as a user of that version writes it (the baseline's has a host gate).
  [[ "$3" != "$repo" ]] && cp "$3/bench/pipeline/project/"*.cpp "$src/"
  sed -i '/^\[search\]/,$d' "$src/large.toml"
  sed -i "s/^name = \"256K\"/name = \"n=$n\"/; s/^shape = { N = 262144 }/shape = { N = $n }/" \
    "$src/large.toml"
  grep -q "N = $n }" "$src/large.toml" || { echo "large.sh: no bucket shape to set" >&2; exit 1; }
  # `bayes-cost`: bayes weighing expected improvement by predicted compile cost (cost_weight 1).
  if [[ "$4" == bayes-cost ]]; then
    printf '[search]\nstrategy = "bayes"\ncost_weight = 1\nseed = %s\nbudget_s = %s\n' "$seed" \
      "$budget" >> "$src/large.toml"
  elif [[ "$4" == grid144 ]]; then
    # A complete grid of 144 of the configs (compile times still spread over 10x), no stop rule.
    python3 - "$src/large.toml" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
for name, values in (("BLOCK", "[128, 256, 512]"), ("ITEMS", "[1, 4, 8, 16]"),
                     ("UNROLL", "[1, 4, 16, 64]"), ("ILP", "[1, 2, 4]")):
    s, n = re.subn(rf"^{name} = \[.*\]$", f"{name} = {values}", s, flags=re.M)
    assert n == 1, name
open(p, "w").write(s)
PY
    printf '[search]\nstrategy = "grid"\n' >> "$src/large.toml"
  elif [[ "$4" == *-off ]]; then
    # The compile-spend features off: no compile-cost model, no adaptive compile cap.
    printf '[search]\nstrategy = "%s"\ncost_weight = 0\ncompile_cap_factor = 0\nseed = %s\nbudget_s = %s\n' \
      "${4%-off}" "$seed" "$budget" >> "$src/large.toml"
  else
    printf '[search]\nstrategy = "%s"\nseed = %s\nbudget_s = %s\n' "$4" "$seed" \
      "$budget" >> "$src/large.toml"
  fi
  cmake -S "$src" -B "$b" -G Ninja -DTUNE_SOURCE_DIR="$3" -DTUNE_TUNER_EXECUTABLE="$2" \
        -DTUNE_ARCH="$arch" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNE_ENABLE_WERROR=OFF \
        -DTUNE_ENABLE_KERNELS=OFF -DTUNE_CACHE_DIR="$work/$1/cache" "${deps[@]}" \
        >> "$out/$1.configure.log" 2>&1
  cmake --build "$b" --target large.runner >> "$out/$1.build.log" 2>&1
}

if (( prepare )); then
  first=(${strategies})
  for i in "${!names[@]}"; do
    [[ -n "$only" && "$only" != "${names[$i]}" ]] && continue
    configure "${names[$i]}" "${tuners[$i]}" "${sources[$i]}" "${first[0]}"
    echo "large.sh: ${names[$i]} prepared (${tuners[$i]})"
  done
  exit 0
fi

if (( compile_only )); then
  configure new "$tuner" "$repo" bayes
  b="$work/new/build"
  echo "large.sh: compile only ($arch, $(nproc) cores): a few candidates, their compile seconds"
  for id in BLOCK=256,ILP=1,ITEMS=8,UNROLL=1 BLOCK=256,ILP=4,ITEMS=8,UNROLL=16 \
            BLOCK=256,ILP=4,ITEMS=8,UNROLL=64 BLOCK=256,ILP=8,ITEMS=8,UNROLL=128; do
    "$tuner" warm --manifest "$b/tune/large/manifest.json" --arch "$arch" --config "$id" \
      > /dev/null 2>&1 || true
  done
  python3 - "$work/new/cache" <<'PY' | tee "$out/compile_only.txt"
import json, pathlib, sys
for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    e = json.loads(p.read_text())
    print(f"  {e['config_id']:40s} {e['status']:10s} compile {e.get('compile_s', float('nan')):.1f} s")
PY
  exit 0
fi

nproc > "$out/cores"
for s in $strategies; do
  for i in "${!names[@]}"; do
    name=${names[$i]}
    [[ -n "$only" && "$only" != "$name" ]] && continue
    configure "$name" "${tuners[$i]}" "${sources[$i]}" "$s"
    b="$work/$name/build"
    rm -rf "$work/$name/cache" "$b/tune/large/$arch" "$work/$name/src/records/large.json"*
    compile_log=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['compile_log'])" \
                  "$b/tune/large/manifest.json")
    rm -f "$compile_log"
    t0=$(date +%s.%N)
    "${tuners[$i]}" run --manifest "$b/tune/large/manifest.json" --compile-ahead \
      > "$out/$name.$s.log" 2>&1 || true
    t1=$(date +%s.%N)
    cat "$b/tune/large/$arch/"*.trials.jsonl > "$out/$name.$s.trials.jsonl" 2>/dev/null || true
    cp "$compile_log" "$out/$name.$s.compile.log" 2>/dev/null || : > "$out/$name.$s.compile.log"
    # Each compile's seconds, status and end (the cache entry's mtime), for the compile seconds
    # spent until the search first measured a config near its best.
    python3 - "$work/$name/cache" > "$out/$name.$s.compiles.jsonl" <<'PY'
import json, pathlib, sys
for p in pathlib.Path(sys.argv[1]).glob("*.json"):
    try:
        e = json.loads(p.read_text())
    except (OSError, ValueError):
        continue
    print(json.dumps({"config_id": e.get("config_id"), "status": e.get("status"),
                      "compile_s": e.get("compile_s"), "end": p.stat().st_mtime}))
PY
    echo "$t0 $t1" > "$out/$name.$s.wall"
  done
done
python3 "$here/large_figures.py" --out "$out" --strategies $strategies --tuners "${names[@]}" \
  | tee "$out/summary.txt"
