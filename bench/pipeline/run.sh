#!/usr/bin/env bash
# The pipeline benchmark (device): how much of a tune is timed work, with and without a bucket
# fixture, and whether compile-ahead hides the compiles behind the measurements.
#
#   bench/pipeline/run.sh --build <tune build tree> --out <dir> [--arch sm_90] [--work <dir>]
#                         [--regret]
#   bench/pipeline/run.sh --large ...   the large-space case: large.sh with the same arguments
#
# 1. stream (256 MB input, 24 candidates) tuned with a fixture harness and, the same kernel and
#    space, with a per-candidate harness: the median per-candidate overhead outside warm-up and
#    timed reps of each (target: at most 50 ms with the fixture).
# 2. compute (288 candidates, a host reference of seconds, a fixture harness), three times:
#    warm alone from an empty kernel cache (T_warm), the tune alone on the warm cache
#    (T_measure), and the cold tune with compile-ahead from an empty cache (T_cold). Prints
#    T_cold / max(T_warm, T_measure) (target: at most 1.3).
# 3. With --regret: both kernels tuned again with `[bench] preset = "quick"`; prints each one's
#    wall time against the default and the regret of its winner (its median in the default
#    tune's log over the default winner's, minus one). Then compute once more from an empty
#    kernel cache, quick and with compile-ahead (what `tuner tune` does), against warm then
#    tune with the default settings (T_warm + T_measure).
# Default [bench] settings elsewhere. Everything lands under --out (logs, `tuner show` output,
# pipeline.json); the summary is printed last. About 4 minutes on an H200 with 16 cores.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
[[ "${1:-}" == "--large" ]] && { shift; exec "$here/large.sh" "$@"; }
build="" out="" arch="sm_90" work="${TMPDIR:-/tmp}/tune-bench-pipeline" regret=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --arch) arch="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --regret) regret=1; shift ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
source "$here/common.sh"
tuner=$(find_tuner "$build")
pipeline_dirs run.sh
cp -r "$here/project" "$work/src"
src="$work/src" b="$work/build" cache="$work/cache"
args=(-S "$src" -B "$b" -G Ninja -DTUNE_SOURCE_DIR="$repo" -DTUNE_TUNER_EXECUTABLE="$tuner"
      -DTUNE_ARCH="$arch" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNE_ENABLE_WERROR=OFF
      -DTUNE_ENABLE_KERNELS=OFF -DTUNE_CACHE_DIR="$cache")
[[ -f "${TUNE_TOMLPP_INCLUDE_DIR:-/nonexistent}/toml++/toml.h" ]] && args+=(-DTUNE_TOMLPP_INCLUDE_DIR="$TUNE_TOMLPP_INCLUDE_DIR")
[[ -f "${TUNE_EIGEN_INCLUDE_DIR:-/nonexistent}/Eigen/Core" ]] && args+=(-DTUNE_EIGEN_INCLUDE_DIR="$TUNE_EIGEN_INCLUDE_DIR")
cmake "${args[@]}" > "$out/configure.log" 2>&1
cmake --build "$b" --target stream.runner stream_plain.runner compute.runner > "$out/build.log" 2>&1

now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }
manifest() { echo "$b/tune/$1/manifest.json"; }
fresh_logs() { rm -rf "$b/tune/$1/$arch" "$src/records/$1.json"* ; }
# The median overhead line of `tuner show` for a kernel's log (ms), and the gpu share (%).
overhead() { sed -n 's/.*overhead \([0-9.]*\) ms outside.*/\1/p' "$out/$1.show.txt"; }
share() { sed -n 's/^gpu time: \([0-9.]*\)% of.*/\1/p' "$out/$1.show.txt"; }
tune_kernel() {  # kernel, label, extra tuner run arguments...
  local k=$1 label=$2
  shift 2
  fresh_logs "$k"
  "$tuner" run --manifest "$(manifest "$k")" "$@" > "$out/$label.log" 2>&1 || true
  "$tuner" show "$b/tune/$k/$arch/"*.trials.jsonl > "$out/$label.show.txt" 2>&1 || true
  cat "$b/tune/$k/$arch/"*.trials.jsonl > "$out/$label.trials.jsonl" 2>/dev/null || true
  # A tune whose candidates all failed has no figures to give: say so rather than print ratios
  # of compile errors.
  if ! grep -q '"state":"measured"' "$out/$label.trials.jsonl"; then
    echo "run.sh: $label: no candidate was measured; see $out/$label.log and $label.show.txt" >&2
    sed -n '1,12p' "$out/$label.show.txt" >&2
    exit 1
  fi
}

# 1. Overhead with and without a fixture.
cmake --build "$b" --target "warm.stream.$arch" "warm.stream_plain.$arch" > "$out/warm_stream.log" 2>&1
tune_kernel stream stream
tune_kernel stream_plain stream_plain

# 2. Compile-ahead on a cold cache against warm and measurement apart.
rm -rf "$cache"
t0=$(now)
cmake --build "$b" --target "warm.compute.$arch" > "$out/warm_compute.log" 2>&1
t_warm=$(since "$t0")
t0=$(now)
tune_kernel compute compute_measure
t_measure=$(since "$t0")
rm -rf "$cache"
t0=$(now)
tune_kernel compute compute_cold --compile-ahead
t_cold=$(since "$t0")

# The cold tune must judge the candidates as the warm one did: a compile that failed only in the
# cold run (a lost status, a killed compiler) would make its time a measure of less work.
invalid() { grep -c '"state":"invalid"' "$out/$1.trials.jsonl" || true; }
same_invalid() {  # the warm-cache tune's label, the cold tune's
  if [[ "$(invalid "$1")" != "$(invalid "$2")" ]]; then
    echo "run.sh: the cold tune $2 has $(invalid "$2") invalid candidates, the warm-cache" \
         "tune $1 $(invalid "$1"); see $out/$2.show.txt" >&2
    exit 1
  fi
}
same_invalid compute_measure compute_cold
ratio=$(python3 -c "import sys; c,w,m=map(float,sys.argv[1:]); print(f'{c/max(w,m):.2f}')" \
        "$t_cold" "$t_warm" "$t_measure")
{
  echo "pipeline benchmark ($arch, $(nproc) cores, tuner $tuner)"
  echo "stream, 24 candidates: median overhead per candidate outside warm-up and timed reps:"
  echo "  with fixture    $(overhead stream) ms (target <= 50), gpu timed share $(share stream)%"
  echo "  without fixture $(overhead stream_plain) ms, gpu timed share $(share stream_plain)%"
  echo "compute, 288 candidates: warm ${t_warm} s, measure ${t_measure} s, cold tune with" \
       "compile-ahead ${t_cold} s"
  echo "  cold / max(warm, measure) = ${ratio} (target <= 1.3)"
  echo "  compute (cold) $(grep -h 'compile-ahead:' "$out/compute_cold.log" | head -1)"
} | tee "$out/summary.txt"

# 3. The quick preset's regret and time.
if (( regret )); then
  # The default tunes to compare with: stream's, and compute's on the warm cache (the cold one
  # is the same search, but its figures are not the point of that run).
  cp "$out/stream.trials.jsonl" "$out/stream.default.trials.jsonl"
  cp "$out/compute_measure.trials.jsonl" "$out/compute.default.trials.jsonl"
  for k in stream compute; do
    printf '\n[bench]\npreset = "quick"\n' >> "$src/$k.toml"
  done
  cmake "${args[@]}" >> "$out/configure.log" 2>&1
  # Step 2 emptied the kernel cache: warm both again, so that the quick tunes measure only.
  cmake --build "$b" --target "warm.stream.$arch" "warm.compute.$arch" >> "$out/warm_quick.log" 2>&1
  for k in stream compute; do
    t0=$(now)
    tune_kernel "$k" "$k.quick"
    echo "$k $(since "$t0")" >> "$out/quick_times.txt"
  done
  rm -rf "$cache"
  t0=$(now)
  tune_kernel compute compute.quick_cold --compile-ahead
  t_quick_cold=$(since "$t0")
  same_invalid compute.quick compute.quick_cold
  python3 - "$out" <<'PY' | tee -a "$out/summary.txt"
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
def trials(p):
    return [json.loads(l) for l in p.read_text().splitlines()[1:] if l.strip()]
def winner(ts):
    runoff = [t for t in ts if t.get("phase") == "runoff" and t.get("runoff", {}).get("winner")]
    if runoff:
        return runoff[-1]["runoff"]["winner"]
    m = [t for t in ts if t["state"] == "measured"]
    return min(m, key=lambda t: t["median_ms"])["config_id"] if m else None
def wall(ts):
    return sum(t.get("times", {}).get("wall_ms", 0) for t in ts) / 1000
print("quick preset against the default settings:")
for label, k, quick in (("stream", "stream", "stream.quick"),
                        ("compute", "compute", "compute.quick"),
                        ("compute, cold with compile-ahead", "compute", "compute.quick_cold")):
    d = trials(out / f"{k}.default.trials.jsonl")
    q = trials(out / f"{quick}.trials.jsonl")
    med = {t["config_id"]: t["median_ms"] for t in d if t["state"] == "measured" and t["phase"] != "runoff"}
    wd, wq = winner(d), winner(q)
    regret = med[wq] / med[wd] - 1 if wd in med and wq in med else float("nan")
    print(f"  {label}: winner default {wd}, quick {wq}; regret {100 * regret:+.2f}%;"
          f" trial wall time {wall(q):.1f} s against {wall(d):.1f} s")
PY
  python3 - "$t_quick_cold" "$t_warm" "$t_measure" <<'PY' | tee -a "$out/summary.txt"
import sys
cold, warm, measure = map(float, sys.argv[1:])
print(f"compute from an empty kernel cache: quick with compile-ahead {cold:.1f} s against warm"
      f" then tune with the default settings {warm:.1f} + {measure:.1f} s:"
      f" {(warm + measure) / cold:.1f}x faster")
PY
fi
