#!/usr/bin/env bash
# Build benchmarks of tune's CMake integration (not a timed test; prints a table).
#
#   bench/build/run.sh --tuner <tuner> [--work <scratch dir>] [--jobs N] [--kernel reduce]
#
# For a real kernel of this repository (reduce: 60+ candidates on sm_90; softmax also works):
#   1. warm, parallel: `cmake --build --target warm` under Ninja with TUNE_WARM_JOBS=N, from an
#      empty kernel cache;
#   2. warm, serial: the same compiles one after another (TUNE_WARM_JOBS=1, another empty cache);
#      the ratio serial / parallel is the speed-up warm gets from Ninja;
#   3. a no-op `tune` (cmake --build --target tune) with fresh records (each bucket pinned to the
#      space's incumbent with `tuner record set`), against a no-op Ninja build;
#   4. `ctest -L records` of the kernel.
# Every figure comes from this one run. Other load on the machine shifts all of them.
set -euo pipefail

# shellcheck source=bench/common.sh
source "$(dirname "$0")/../common.sh"
bench_options "${TMPDIR:-/tmp}/tune-bench-build" "$@"
case "$kernel" in
  reduce | softmax) ;;
  *) echo "run.sh: --kernel is reduce or softmax" >&2; exit 2 ;;
esac
bench_tree tune_build_bench "enable_testing()"

configure() {  # <build dir> <warm jobs>
  cmake -S "$work/src" -B "$1" -G Ninja -DTUNE_TUNER_EXECUTABLE="$tuner" \
    -DTUNE_WARM_JOBS="$2" -DTUNE_CACHE_DIR="$1/cache" >"$1.configure.log" 2>&1
}

par="$work/build-parallel"
ser="$work/build-serial"
configure "$par" "$jobs"
configure "$ser" 1
ncand="$(grep -o "$kernel: [0-9]* candidates" "$par.configure.log" | grep -o '[0-9]*')"

t0="$(now)"; cmake --build "$par" --target warm >"$par.warm.log" 2>&1; t1="$(now)"
warm_par="$(elapsed "$t0" "$t1")"
t0="$(now)"; cmake --build "$ser" --target warm >"$ser.warm.log" 2>&1; t1="$(now)"
warm_ser="$(elapsed "$t0" "$t1")"
nvcc_runs="$(wc -l <"$par/tune/compile.log")"

# Fresh records: every bucket pinned to the space's first incumbent.
incumbent="$(python3 -c 'import sys, tomllib
d = tomllib.load(open(sys.argv[1], "rb"))
print(",".join(f"{k}={v}" for k, v in sorted(d["require"][0].items())))' "$repo/spaces/$kernel.toml")"
buckets="$(python3 -c 'import sys, tomllib
d = tomllib.load(open(sys.argv[1], "rb"))
print("\n".join(b["name"] for b in d.get("buckets", [{"name": "default"}])))' "$repo/spaces/$kernel.toml")"
while IFS= read -r b; do
  "$tuner" record set --manifest "$par/tune/$kernel/manifest.json" --bucket "$b" \
    --config "$incumbent" >/dev/null
done <<<"$buckets"

cmake --build "$par" >/dev/null 2>&1  # settle the configure the new records folder triggers
t0="$(now)"; cmake --build "$par" >"$par.noop.log" 2>&1; t1="$(now)"
noop_ninja="$(elapsed "$t0" "$t1")"
t0="$(now)"; cmake --build "$par" --target tune >"$par.tune.log" 2>&1; t1="$(now)"
noop_tune="$(elapsed "$t0" "$t1")"
t0="$(now)"; ctest --test-dir "$par" --no-tests=error -L records >"$par.ctest.log" 2>&1; t1="$(now)"
ctest_records="$(elapsed "$t0" "$t1")"
grep -q "100% tests passed" "$par.ctest.log" || { echo "run.sh: record test failed" >&2; exit 1; }

machine_line
printf '%-44s %10s\n' "figure ($kernel, sm_90, $ncand candidates)" "value"
printf '%-44s %10s\n' "warm, Ninja, $jobs jobs (s)" "$warm_par"
printf '%-44s %10s\n' "warm, one after another (s)" "$warm_ser"
printf '%-44s %10s\n' "ratio serial / parallel" "$(python3 -c "print(f'{$warm_ser / $warm_par:.2f}')")"
printf '%-44s %10s\n' "nvcc runs per warm" "$nvcc_runs"
printf '%-44s %10s\n' "no-op Ninja build (s)" "$noop_ninja"
printf '%-44s %10s\n' "no-op tune, fresh records (s)" "$noop_tune"
printf '%-44s %10s\n' "ctest -L records (s)" "$ctest_records"
