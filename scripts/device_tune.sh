#!/usr/bin/env bash
# Tunes this repository's kernels on a GPU host from a fresh build, and measures the result:
# warm (compile) and tune (measure) wall times, the records, a no-op second tune, the record
# tests, and bench/regret (winner vs incumbent, regret among the top five, achieved rates).
# Everything that comes back goes under $OUT (else out/device_tune); records are also left in
# records/ of this tree.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out/device_tune}
mkdir -p "$out"
build=${DEVICE_TUNE_BUILD_DIR:-build-gpu}
tomlpp=${TUNE_TOMLPP_INCLUDE_DIR:-$PWD/.deps/include}
args=(-S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNE_ENABLE_WERROR=OFF)
[[ -f "$tomlpp/toml++/toml.h" ]] && args+=(-DTUNE_TOMLPP_INCLUDE_DIR="$tomlpp")
eigen=${TUNE_EIGEN_INCLUDE_DIR:-$PWD/.deps/include}
[[ -f "$eigen/Eigen/Core" ]] && args+=(-DTUNE_EIGEN_INCLUDE_DIR="$eigen")
phase=${1:-all}   # tune: build, warm, tune, records; measure: regret (after tune, same tree)
stamp() { date +%s.%N; }
secs() { python3 -c "print(f'{$2 - $1:.1f}')"; }

if [[ $phase != measure ]]; then
t0=$(stamp)
cmake "${args[@]}" > "$out/tune.log" 2>&1 && cmake --build "$build" -j "$(nproc)" >> "$out/tune.log" 2>&1 \
  || { echo "build failed"; tail -30 "$out/tune.log"; exit 1; }
t1=$(stamp)
cmake --build "$build" --target warm >> "$out/tune.log" 2>&1 || echo "warm failed"
t2=$(stamp)
compiles=$(wc -l < "$build/tune/compile.log" 2>/dev/null || echo 0)
cmake --build "$build" --target tune > "$out/tune_run.log" 2>&1; rc=$?
t3=$(stamp)
echo "tune exit $rc"; grep -E "^(tune|tuner|gemm|softmax|reduce|  )" "$out/tune_run.log" | tail -25
cmake --build "$build" --target tune > "$out/tune_again.log" 2>&1
t4=$(stamp)
ctest --test-dir "$build" --no-tests=error -L records --output-on-failure > "$out/records.log" 2>&1
grep -E "tests passed|tests failed" "$out/records.log"
tar czf "$out/results.tgz" records "$build"/tune/*/sm_90/*.trials.jsonl 2>/dev/null

# Measurement time: the sum of each runner's wall time lies in the tune log; overhead is the rest.
echo
echo "== device_tune summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)) =="
echo "build (host code)      $(secs "$t0" "$t1") s"
echo "warm (compile)         $(secs "$t1" "$t2") s, $compiles nvcc runs"
echo "tune (measure + rest)  $(secs "$t2" "$t3") s"
echo "second tune (no-op)    $(secs "$t3" "$t4") s: $(grep -c 'nothing to do' "$out/tune_again.log") fresh lines"
fi
[[ $phase == tune ]] && exit 0
echo
timeout 400 python3 bench/regret/regret.py --build "$build" --json "$out/regret.json" 2>&1 | tee "$out/regret.log"
