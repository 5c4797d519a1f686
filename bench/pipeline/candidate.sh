#!/usr/bin/env bash
# The cost of a candidate (device): the gate on the device against the host, and a fully
# measured space end to end with this tree's tuner against a baseline tree's.
#
#   bench/pipeline/candidate.sh --build <tune build tree> --out <dir> --baseline-src <tune tree>
#                               [--arch sm_90] [--work <dir>]
#
# 1. The gate: gate_device and gate_host tune the same 12 configs of a streaming kernel with a
#    bucket fixture, for a 64 MB and a 256 MB output; the gate compares on the device in the
#    first and downloads the output and compares on the host in the second. Prints each one's
#    median time per trial outside warm-up and timed reps (targets with the device gate: at
#    most 10 ms for 64 MB and 20 ms for 256 MB).
# 2. The fully measured space: sweep, 150 configs of a ~0.4 ms kernel (grid: every config),
#    from an empty kernel cache with compile-ahead, end to end (`tuner run --compile-ahead`):
#    with this tree (early rejection on, the default), with this tree and `[bench]
#    early_reject = false`, and with the baseline tree (--baseline-src, built here in its own
#    folder, its harness gating on the host as before). Prints the three wall times, the
#    baseline's over this tree's (target: at least 2x), the three winners, where the time went
#    (`tuner show` of each log), the regret of the early-rejecting tune (its winner's median in
#    the full tune's log over the full tune's winner's) and what the warm worker's 2 ms warm-up
#    changes: each config's median in this tree's full tune against the baseline's (25 ms).
# Everything lands under --out; the summary is printed last (candidate.txt). About 6 minutes on
# an H200 with 16 cores, most of it building the two trees.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="" out="" base_src="" arch="sm_90" work="${TMPDIR:-/tmp}/tune-bench-candidate"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --baseline-src) base_src="$(cd "$2" && pwd)"; shift 2 ;;
    --arch) arch="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    *) echo "candidate.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
source "$here/common.sh"
tuner=""
[[ -n "$build" ]] && tuner=$(find_tuner "$build")
if [[ -z "$build" || -z "$out" || -z "$tuner" || -z "$base_src" ]]; then
  echo "candidate.sh: pass --build <a tune build tree with the tuner built> --out <dir>" \
       "--baseline-src <the tune tree to compare with>" >&2
  exit 2
fi
if [[ ! -f "$base_src/tuner/cuda/harness.hpp" ]]; then
  echo "candidate.sh: --baseline-src $base_src is not a tune tree (no tuner/cuda/harness.hpp)" >&2
  exit 2
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -rf "$work"
mkdir -p "$work"

header_deps
common=(-G Ninja -DTUNE_ARCH="$arch" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNE_ENABLE_WERROR=OFF
        -DTUNE_ENABLE_KERNELS=OFF "${deps[@]}")

# This tree's project, with the given tuner; the baseline's, with the tuner its configure builds
# from the baseline tree (so each tree's tuner drives its own runner).
cp -r "$here/candidate" "$work/src"
cp -r "$here/candidate" "$work/base_src"
t0=$(date +%s)
cmake -S "$work/src" -B "$work/build" "${common[@]}" -DTUNE_SOURCE_DIR="$repo" \
  -DTUNE_TUNER_EXECUTABLE="$tuner" -DTUNE_CACHE_DIR="$work/cache" > "$out/configure.log" 2>&1
cmake --build "$work/build" --target sweep.runner gate_device.runner gate_host.runner \
  > "$out/build.log" 2>&1
cmake -S "$work/base_src" -B "$work/base_build" "${common[@]}" -DTUNE_SOURCE_DIR="$base_src" \
  -DCANDIDATE_GATE=OFF -DTUNE_CACHE_DIR="$work/base_cache" > "$out/base_configure.log" 2>&1
cmake --build "$work/base_build" --target sweep.runner > "$out/base_build.log" 2>&1
base_tuner=$(find "$work/base_build" -type f -name tuner -perm -u+x | head -1)
echo "built both trees in $(( $(date +%s) - t0 )) s; baseline tuner $base_tuner" > "$out/trees.txt"

now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }
# Tunes kernel $3 of project build $2 with tuner $1 from an empty kernel cache $4 (compile-ahead);
# label $5. The logs, `tuner show` of each bucket and the wall time land under --out.
tune() {
  local t=$1 b=$2 k=$3 cache=$4 label=$5
  rm -rf "$cache" "$b/tune/$k/$arch"
  local start; start=$(now)
  "$t" run --manifest "$b/tune/$k/manifest.json" --compile-ahead > "$out/$label.log" 2>&1 || true
  since "$start" > "$out/$label.seconds"
  for log in "$b/tune/$k/$arch/"*.trials.jsonl; do
    local bucket; bucket=$(basename "$log" .trials.jsonl)
    cp "$log" "$out/$label.$bucket.trials.jsonl"
    "$t" show "$log" > "$out/$label.$bucket.show.txt" 2>&1 || true
  done
  if ! grep -qh '"state":"measured"' "$out/$label".*.trials.jsonl; then
    echo "candidate.sh: $label: no candidate was measured; see $out/$label.log" >&2
    tail -20 "$out/$label.log" >&2
    exit 1
  fi
}

# 1. The gate's cost per trial.
tune "$tuner" "$work/build" gate_device "$work/cache" gate_device
tune "$tuner" "$work/build" gate_host "$work/cache" gate_host

# 2. The fully measured space: this tree, this tree without early rejection, the baseline.
tune "$tuner" "$work/build" sweep "$work/cache" sweep
printf '\n[bench]\nearly_reject = false\n' >> "$work/src/sweep.toml"
cmake "$work/build" > /dev/null 2>&1
tune "$tuner" "$work/build" sweep "$work/cache" sweep_full
tune "$base_tuner" "$work/base_build" sweep "$work/base_cache" sweep_base

python3 - "$out" <<'PY' | tee "$out/candidate.txt"
import json, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
def trials(label):
    p = next(out.glob(f"{label}.*.trials.jsonl"))
    return [json.loads(l) for l in p.read_text().splitlines()[1:] if l.strip()]
def show(label, bucket):
    return (out / f"{label}.{bucket}.show.txt").read_text()
def overhead(text):
    m = re.search(r"overhead ([0-9.]+) ms outside", text)
    return float(m.group(1)) if m else float("nan")
def winner(ts):
    runoff = [t for t in ts if t.get("phase") == "runoff" and t.get("runoff", {}).get("winner")]
    if runoff:
        return runoff[-1]["runoff"]["winner"]
    m = [t for t in ts if t["state"] == "measured" and not t.get("rejected_early")]
    return min(m, key=lambda t: t["median_ms"])["config_id"] if m else None
def seconds(label):
    return float((out / f"{label}.seconds").read_text())
print("the gate per trial, outside warm-up and timed reps (median over the bucket's trials):")
for bucket, target in (("64MB", 10), ("256MB", 20)):
    d = overhead(show("gate_device", bucket))
    h = overhead(show("gate_host", bucket))
    print(f"  {bucket:>5} output: device gate {d:.1f} ms (target <= {target}), host gate {h:.1f} ms,"
          f" {h / d:.1f}x")
print("a fully measured space, sweep (150 configs, ~0.4 ms), cold cache, end to end:")
s, f, b = seconds("sweep"), seconds("sweep_full"), seconds("sweep_base")
print(f"  this tree {s:.1f} s, without early rejection {f:.1f} s, baseline {b:.1f} s:"
      f" {b / s:.2f}x faster (target >= 2), {b / f:.2f}x without early rejection")
ws, wf, wb = winner(trials("sweep")), winner(trials("sweep_full")), winner(trials("sweep_base"))
print(f"  winners: this tree {ws}, without early rejection {wf}, baseline {wb}")
full = {t["config_id"]: t["median_ms"] for t in trials("sweep_full")
        if t["state"] == "measured" and t["phase"] != "runoff"}
regret = full[ws] / full[wf] - 1 if ws in full and wf in full else float("nan")
rejected = sum(1 for t in trials("sweep") if t.get("rejected_early"))
print(f"  early rejection: {rejected} of 150 candidates stopped early; regret of its winner in"
      f" the full tune's log {100 * regret:+.2f}% (the runoff's margin is 1%)")
base = {t["config_id"]: t["median_ms"] for t in trials("sweep_base")
        if t["state"] == "measured" and t["phase"] != "runoff"}
diffs = sorted(abs(full[c] / base[c] - 1) for c in full if c in base)
if diffs:
    print(f"  warm-up: the medians of {len(diffs)} configs with the warm worker's 2 ms (this tree,"
          f" in full) against 25 ms (baseline): median difference {100 * diffs[len(diffs) // 2]:.2f}%,"
          f" largest {100 * diffs[-1]:.2f}%")
print("where the time went (tuner show):")
for label in ("sweep", "sweep_full", "sweep_base"):
    text = show(label, "200M")
    lines = [l for l in text.splitlines() if l.startswith(("gpu time", "per trial", "early rejection"))]
    print(f"  {label}:")
    for l in lines:
        print(f"    {l}")
PY
