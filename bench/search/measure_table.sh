#!/usr/bin/env bash
# Measure a complete table of the search benchmark (bench/search/README.md "Tables") on a GPU
# host, in calls shorter than the host's limit that resume the same trial logs.
#
#   bench/search/measure_table.sh --kernel stencil|gemm_full|transpose|histogram [--version 1|2]
#                                 [--build build-gpu] [--seconds 480] [--resume DIR] [--out DIR]
#
# --version 2 measures version 2 of the kernel (bench/search/README.md "Re-tunes with a prior":
# stencil/stencil_v2.cu or gemm_full_v2.cu, the same space) in a build tree of its own (default
# build-gpu-v2), resuming .tables/<kernel>.v2 and writing <kernel>.v2.<bucket>.jsonl.gz.
# transpose and histogram have version 1 only.
#
# Each call: configures the build tree with TUNE_SEARCH_TABLES=ON (once), builds the kernel's
# runner, unpacks the trial logs of earlier calls (logs.tar) from --resume (default
# .tables/<kernel>, an ignored folder to carry to the host) into the build's log folder, compiles
# what the kernel cache lacks (`warm.<kernel>`, every core), then runs `tuner run` (every config,
# in the order of the space's strategy) until it is done or --seconds pass (then SIGINT: the log keeps every finished
# trial). The logs go back to <out>/tables/<kernel> (default $OUT) as logs.tar, with campaign.txt,
# one line per call (trials before and after, seconds measuring, seconds compiling); once every
# bucket is complete the gzip'd tables (bench/search/tables/<kernel>.<bucket>.jsonl.gz, the encoded
# bucket name with each %XX as "_") are written beside them, to commit.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
kernel=""
version=1
build=""
seconds=480
resume=""
out="${OUT:-$root/out/tables}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kernel) kernel="$2"; shift 2 ;;
    --version) version="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --resume) resume="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "measure_table.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case "$kernel" in
  stencil | gemm_full | transpose | histogram) ;;
  *) echo "measure_table.sh: --kernel stencil, gemm_full, transpose or histogram" >&2; exit 2 ;;
esac
if [[ "$version" == 2 && ( "$kernel" == transpose || "$kernel" == histogram ) ]]; then
  echo "measure_table.sh: $kernel has no version 2 (only stencil and gemm_full do)" >&2; exit 2
fi
case "$version" in
  1) suffix=""; build="${build:-build-gpu}" ;;
  2) suffix=".v2"; build="${build:-build-gpu-v2}" ;;
  *) echo "measure_table.sh: --version 1 or --version 2" >&2; exit 2 ;;
esac
resume="${resume:-$root/.tables/$kernel$suffix}"
dest="$out/tables/$kernel$suffix"
mkdir -p "$dest"
tomlpp="${TUNE_TOMLPP_INCLUDE_DIR:-$root/.deps/include}"
eigen="${TUNE_EIGEN_INCLUDE_DIR:-$root/.deps/include}"

args=(-S . -B "$build" -G Ninja -DTUNE_SEARCH_TABLES=ON -DTUNE_SEARCH_TABLES_VERSION="$version")
[[ -f "$build/CMakeCache.txt" ]] || args+=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNE_ENABLE_WERROR=OFF)
[[ -f "$tomlpp/toml++/toml.h" ]] && args+=(-DTUNE_TOMLPP_INCLUDE_DIR="$tomlpp")
[[ -f "$eigen/Eigen/Core" ]] && args+=(-DTUNE_EIGEN_INCLUDE_DIR="$eigen")
if ! cmake "${args[@]}" > "$dest/configure.log" 2>&1 ||
   ! cmake --build "$build" --target "tune/$kernel/$kernel.runner" >> "$dest/configure.log" 2>&1; then
  echo "measure_table.sh: the configure or build failed (see $dest/configure.log)" >&2
  tail -20 "$dest/configure.log" >&2
  exit 3
fi
manifest="$build/tune/$kernel/manifest.json"
# The tool the build runs (the configure built it, or TUNE_TUNER_EXECUTABLE named it).
tuner=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tuner"] or sys.argv[2])' \
        "$manifest" "$build/tuner/tuner")
logdir="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["log_dir"])' "$manifest")/sm_90"
mkdir -p "$logdir"
# The logs travel as logs.tar: a bucket's log is named by its encoded name ("n%3D4096"), which
# file transfers may refuse.
if [[ -f "$resume/logs.tar" ]]; then
  tar -xf "$resume/logs.tar" -C "$logdir"
  [[ -f "$resume/campaign.txt" ]] && cp "$resume/campaign.txt" "$dest/"
fi
trials() { cat "$logdir"/*.trials.jsonl 2>/dev/null | grep -c '"config_id"' || true; }
before=$(trials)

t0=$(date +%s)
cmake --build "$build" --target "warm.$kernel" -j "$(nproc)" > "$dest/warm.log" 2>&1
compiled_s=$(( $(date +%s) - t0 ))
left=$(( seconds - compiled_s ))
rc=124
t1=$(date +%s)
if (( left > 30 )); then
  timeout -s INT -k 30 "$left" "$tuner" run --manifest "$manifest" > "$dest/run.log" 2>&1
  rc=$?
fi
measured_s=$(( $(date +%s) - t1 ))
after=$(trials)
(cd "$logdir" && tar -cf "$dest/logs.tar" -- *.trials.jsonl) 2>/dev/null
echo "$(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1): trials $before -> $after, compiling ${compiled_s} s, measuring ${measured_s} s, tuner run exit $rc" \
  >> "$dest/campaign.txt"
tail -5 "$dest/run.log"
if [[ $rc -eq 0 ]]; then
  for log in "$logdir"/*.trials.jsonl; do
    # The bucket's encoded name with each %XX as "_": n%3D4096 -> stencil.n_4096.jsonl.gz.
    name=$(basename "$log" .trials.jsonl | sed 's/%[0-9A-Fa-f][0-9A-Fa-f]/_/g')
    gzip -9 -n < "$log" > "$dest/$kernel$suffix.$name.jsonl.gz"
  done
  echo "measure_table.sh: $kernel complete, $after trials; tables: $dest/*.jsonl.gz"
else
  echo "measure_table.sh: $kernel: $after trials so far; carry $dest back as $resume and call again"
fi
cat "$dest/campaign.txt"
