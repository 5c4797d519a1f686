#!/usr/bin/env bash
# A real re-tune on a GPU host (bench/search/README.md "A real re-tune"): the stencil of
# bench/search/stencil in a scratch project (bench/search/retune/, 806 configs, bayes), tuned as
# version 1 from a cold kernel cache; then its source switched to version 2 (stencil_v2.cu: the
# record goes stale) and re-tuned twice from that same state (the version 1 log, record and
# kernel cache restored before each): with the prior (`[search] retune = "warm"`) and without
# (`retune = "full"`), each with `cmake --build <build> --target tune`. Prints the wall time,
# evaluations and winner of each and the ratios, and writes them to <out>/retune.txt and
# retune.json.
#
#   bench/search/retune.sh [--out DIR] [--work DIR] [--build <tune build tree>] [--compile-only]
#                          [--change source|header]
#
# --change header: the kernel's SOURCE is a one-line stencil_kernel.cu that includes
# stencil_impl.cuh, and the versions are switched in that header, so that only an included file
# changes (the source hash stays; the build identity of the log and the cache keys move).
#
# --build: take the tuner of that build tree (as bench/pipeline does) instead of the one the
# project's configure builds. Without a GPU (nvidia-smi finds none), or with --compile-only, it
# stops after what needs none: the configure, the runner's build, and the required config of
# both versions compiled into the kernel cache (`tuner warm --config`), whose keys must differ.
# About 4 minutes on an H200 with 16 cores, configure and build included.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${OUT:-$repo/out}/retune" work="${TMPDIR:-/tmp}/tune-bench-retune" build="" compile_only=0
change=source
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --compile-only) compile_only=1; shift ;;
    --change) change="$2"; shift 2 ;;
    *) echo "retune.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if (( ! compile_only )) && ! nvidia-smi -L > /dev/null 2>&1; then
  echo "retune.sh: no GPU here: configure, build and compile only"
  compile_only=1
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -rf "$work"
mkdir -p "$work"
src="$work/src" b="$work/build" cache="$work/cache" state="$work/v1_state"
arch=sm_90

# The scratch project: the retune project, the stencil's harness and both versions' sources.
cp -r "$here/retune" "$src"
cp "$here/stencil/stencil.cu" "$here/stencil/stencil_v2.cu" "$here/stencil/stencil_harness.cpp" \
  "$src/"
case "$change" in
  source) target="$src/stencil_kernel.cu" ;;
  header) target="$src/stencil_impl.cuh"
          printf '// The kernel: the version retune.sh switched in.\n#include "stencil_impl.cuh"\n' \
            > "$src/stencil_kernel.cu" ;;
  *) echo "retune.sh: --change is 'source' or 'header', not '$change'" >&2; exit 2 ;;
esac
version() { cp "$src/stencil$([[ $1 == 2 ]] && echo _v2).cu" "$target"; }
set_retune() {
  sed -i "s/^retune = .*/retune = \"$1\"/" "$src/stencil.toml"
  grep -qx "retune = \"$1\"" "$src/stencil.toml" ||
    { echo "retune.sh: retune/stencil.toml has no line 'retune = ...' to set" >&2; exit 1; }
}
version 1

args=(-S "$src" -B "$b" -G Ninja -DTUNE_SOURCE_DIR="$repo" -DTUNE_ARCH="$arch"
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNE_ENABLE_WERROR=OFF -DTUNE_ENABLE_KERNELS=OFF
      -DTUNE_ENABLE_TESTS=OFF -DTUNE_CACHE_DIR="$cache")
if [[ -n "$build" ]]; then
  source "$repo/bench/pipeline/common.sh"
  args+=(-DTUNE_TUNER_EXECUTABLE="$(find_tuner "$build")")
fi
deps="$repo/.deps/include"
tomlpp="${TUNE_TOMLPP_INCLUDE_DIR:-$deps}" eigen="${TUNE_EIGEN_INCLUDE_DIR:-$deps}"
[[ -f "$tomlpp/toml++/toml.h" ]] && args+=(-DTUNE_TOMLPP_INCLUDE_DIR="$tomlpp")
[[ -f "$eigen/Eigen/Core" ]] && args+=(-DTUNE_EIGEN_INCLUDE_DIR="$eigen")
now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }
step() {  # label, command...: runs it with its output in <out>/<label>.log, stops on failure
  local label=$1
  shift
  if ! "$@" > "$out/$label.log" 2>&1; then
    echo "retune.sh: $label failed (see $out/$label.log):" >&2
    tail -20 "$out/$label.log" >&2
    exit 1
  fi
}
t0=$(now)
step configure cmake "${args[@]}"
step build cmake --build "$b" --target stencil.runner
echo "retune.sh: configure and build: $(since "$t0") s"
manifest="$b/tune/stencil/manifest.json"
tuner=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tuner"])' "$manifest")
[[ -x "$tuner" ]] || step build_tuner cmake --build "$b" --target tune_host_tool
logs="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["log_dir"])' "$manifest")/$arch"
record="$src/records/stencil.json"

if (( compile_only )); then
  required='BX=32,BY=8,LOAD="global",STRIDE=0,TX=1,TY=1,UNROLL=1'
  key() {  # the required config's cache key, once it compiled
    "$tuner" warm --manifest "$manifest" --config "$required" --json | python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][0]
if r["status"] != "ok":
    sys.exit("retune.sh: %s did not compile: %s: %s" % (r["config_id"], r["status"], r["reason"]))
print(r["key"])'
  }
  k1=$(key)
  version 2
  k2=$(key)
  echo "retune.sh: the required config compiled for both versions: keys ${k1:0:12} and ${k2:0:12}"
  if [[ "$k1" == "$k2" ]]; then
    echo "retune.sh: version 2 has the cache key of version 1: the switch changed nothing" >&2
    exit 1
  fi
  echo "retune.sh: compile-only run done (the tunes need a GPU)"
  exit 0
fi

# The tune of one state: `cmake --build --target tune`, timed; then its figures as JSON.
tune() {  # label
  local t
  t=$(now)
  step "$1" cmake --build "$b" --target tune
  python3 - "$1" "$(since "$t")" "$logs" "$record" > "$out/$1.json" <<'EOF'
import glob, json, sys
label, wall, logs, record = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
[log] = glob.glob(f"{logs}/*.trials.jsonl")
lines = [json.loads(l) for l in open(log) if l.strip()]
header, trials = lines[0], lines[1:]
search = [t for t in trials if t.get("phase") != "runoff"]
entry = json.load(open(record))["entries"][0]
print(json.dumps({
    "label": label, "wall_s": wall, "evaluations": len(search),
    "measured": sum(t.get("state") == "measured" for t in search),
    "prior_guided": sum("prior_rank" in t for t in search),
    "prior": header.get("prior"), "winner": entry["config"]["id"],
    "median_ms": entry.get("median_ms"), "runoff": (entry.get("runoff") or {}).get("outcome"),
    "keys": sorted({t["cache_key"] for t in search if t.get("cache_key")})}))
EOF
}

# 1. Version 1 from a cold kernel cache; its log, record and cache are the state both re-tunes
#    start from.
tune v1_cold
mkdir -p "$state"
cp -a "$logs" "$state/logs"
cp -a "$src/records" "$state/records"
cp -a "$cache" "$state/cache"
restore() {
  rm -rf "$logs" "$src/records" "$cache"
  cp -a "$state/logs" "$logs"
  cp -a "$state/records" "$src/records"
  cp -a "$state/cache" "$cache"
}

# 2. Version 2, re-tuned with the prior and without, from the same state.
version 2
for mode in warm full; do
  restore
  set_retune "$mode"
  tune "v2_$mode"
done

python3 - "$out" "$change" <<'EOF' | tee "$out/retune.txt"
import json, sys
out = sys.argv[1]
runs = {k: json.load(open(f"{out}/{k}.json")) for k in ("v1_cold", "v2_warm", "v2_full")}
print("re-tune of the stencil (bench/search/retune/, 806 configs, bayes, patience 32, budget "
      f"100 s; the change in the {sys.argv[2]})")
for k, r in runs.items():
    median = f"{r['median_ms']:.4f} ms" if r["median_ms"] is not None else "-"
    print(f"  {k:8} {r['wall_s']:7.1f} s  {r['evaluations']:4d} evaluations "
          f"({r['prior_guided']} the prior's best)  winner {r['winner']} {median} "
          f"(runoff: {r['runoff']})")
w, f = runs["v2_warm"], runs["v2_full"]
print(f"  full / warm: wall {f['wall_s'] / w['wall_s']:.2f}x, evaluations "
      f"{f['evaluations'] / max(1, w['evaluations']):.2f}x; "
      f"same winner: {'yes' if w['winner'] == f['winner'] else 'no'}")
json.dump(runs, open(f"{out}/retune.json", "w"), indent=2)
if set(w["keys"]) & set(runs["v1_cold"]["keys"]) or set(f["keys"]) & set(runs["v1_cold"]["keys"]):
    sys.exit("retune.sh: a re-tune's log holds trials of version 1's cache keys")
if not w["prior"] or f["prior"]:
    sys.exit("retune.sh: the warm re-tune must name its prior in the log header and the full "
             "one none")
EOF
