#!/usr/bin/env bash
# The GPU machine's check, in one command: a fresh build, the GPU test suite (ctest -L gpu) and
# the timing benchmark (tune's bench against triton.testing.do_bench on the same cubin).
# Logs go under $OUT when it is set (else out/gpu_check); a summary table is printed last.
#
# Needs on the machine: CMake, Ninja, a C++20 compiler, the CUDA toolkit (nvcc), GoogleTest,
# nlohmann/json, CLI11, fmt, OpenSSL, and python3 with torch, triton and cupy. TOML++ and Eigen
# are taken header-only from .deps/include when they are there (carry it: copy Debian's
# /usr/include/toml++ and /usr/include/eigen3/Eigen into it; TUNE_TOMLPP_INCLUDE_DIR and
# TUNE_EIGEN_INCLUDE_DIR override).
#
# Usage: scripts/gpu_check.sh            (from anywhere; GPU_CHECK_DEVICE=N picks the device)
#
# GPU_CHECK_STEPS picks steps (default: all, in this order): build timing gpu cpu e2e runoff
# fidelity (and, only when asked for, shards, store, pipeline and embed). Without `build` the build tree of an earlier call is reused, so a check can be
# split over two calls of a lent machine that stays warm between them.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${OUT:-$root/out/gpu_check}
mkdir -p "$out"
build=${GPU_CHECK_BUILD_DIR:-build-gpu}
device=${GPU_CHECK_DEVICE:-0}
tomlpp=${TUNE_TOMLPP_INCLUDE_DIR:-$root/.deps/include}
eigen=${TUNE_EIGEN_INCLUDE_DIR:-$root/.deps/include}
jobs=$(nproc)
steps=" ${GPU_CHECK_STEPS:-build timing gpu cpu e2e runoff fidelity} "
want() { [[ "$steps" == *" $1 "* ]]; }

declare -a summary=()
note() { summary+=("$(printf '%-22s %-6s %s' "$1" "$2" "$3")"); }
seconds() { echo $(( $(date +%s) - $1 )); }

# The machine, for the record.
{
  nvidia-smi || true
  nvcc --version || true
  cmake --version | head -1
  g++ --version | head -1
  python3 -c 'import torch, triton, cupy; print("torch", torch.__version__, "triton", triton.__version__, "cupy", cupy.__version__)' || true
} > "$out/machine.txt" 2>&1
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i "$device" 2>/dev/null | head -1)

# Configure and build from scratch.
t0=$(date +%s)
if want build; then
rm -rf "$build"
# Warnings are not errors here: a warning that only this host's newer compiler gives must not
# cost the GPU run; they are counted in the summary instead (CI keeps them errors).
cmake_args=(-S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNE_ENABLE_WERROR=OFF)
[[ -f "$tomlpp/toml++/toml.h" ]] && cmake_args+=(-DTUNE_TOMLPP_INCLUDE_DIR="$tomlpp")
[[ -f "$eigen/Eigen/Core" ]] && cmake_args+=(-DTUNE_EIGEN_INCLUDE_DIR="$eigen")
if cmake "${cmake_args[@]}" > "$out/build.log" 2>&1; then
  # Everything first; if another part of the tree fails to build here, still build what the
  # GPU check needs, so that the failure is reported beside the GPU results.
  if cmake --build "$build" -j "$jobs" >> "$out/build.log" 2>&1; then
    note build ok "all targets, $(seconds "$t0") s, $(grep -c 'warning:' "$out/build.log") warnings"
  elif cmake --build "$build" -j "$jobs" --target cuda_gpu_test harness_example_test \
      bench_timing >> "$out/build.log" 2>&1; then
    note build PART "GPU targets only; the full build failed (build.log)"
  else
    note build FAIL "see build.log"
  fi
else
  note configure FAIL "see build.log"
fi
tail -30 "$out/build.log" | grep -E 'error|FAILED' | head -10
fi

# The timing benchmark.
t0=$(date +%s)
timing_table=""
if ! want timing; then
  :
elif [[ -x "$build/bench/timing/bench_timing" ]]; then
  if PYTHONUNBUFFERED=1 timeout 300 python3 bench/timing/compare.py --bench "$build/bench/timing/bench_timing" \
      --cubin "$build/bench/timing/cubin/timing_kernels.cubin" --device "$device" --repeat 10 \
      --json "$out/timing.json" > "$out/timing.log" 2>&1; then
    note timing ok "$(seconds "$t0") s, timing.json"
    timing_table=$(sed -n '/^device: /,$p' "$out/timing.log")
  else
    note timing FAIL "see timing.log"
    tail -15 "$out/timing.log"
  fi
else
  note timing SKIP "bench_timing not built"
fi

# The GPU tests, after the timing benchmark (which takes about a minute) since other areas'
# GPU tests may take longer: each has its own TIMEOUT, and the whole run is bounded here.
t0=$(date +%s)
export TUNE_TEST_DEVICE=$device
if ! want gpu; then
  :
elif [[ -x "$build/tests/gpu/cuda_gpu_test" ]]; then
  if timeout 330 ctest --test-dir "$build" -L gpu -V > "$out/ctest_gpu.log" 2>&1; then
    note "ctest -L gpu" ok "$(grep -E 'tests passed' "$out/ctest_gpu.log"), $(seconds "$t0") s"
  else
    note "ctest -L gpu" FAIL "$(grep -E 'tests passed|tests failed' "$out/ctest_gpu.log" || echo 'timed out after 330 s')"
  fi
  # What the tests printed about the device and their timings (ctest -V prefixes test numbers).
  sed -nE 's/^[0-9]+: ((device |scale_vector|tiny|saxpy|bench warning).*)/\1/p' \
    "$out/ctest_gpu.log" > "$out/gpu_notes.txt"
else
  note "ctest -L gpu" SKIP "not built"
fi

# The CPU suite too, where it was built (the GPU host's compiler and CMake differ from the
# CPU machines'); bounded, so that the check stays within its time.
if [[ -d "$build" ]] && want cpu; then
  if timeout 100 ctest --test-dir "$build" -LE gpu -j "$jobs" --timeout 90 \
      > "$out/ctest_cpu.log" 2>&1; then
    note "ctest -LE gpu" ok "$(grep -E 'tests passed' "$out/ctest_cpu.log")"
  else
    note "ctest -LE gpu" FAIL "$(grep -E 'tests passed|tests failed' "$out/ctest_cpu.log" || echo 'timed out')"
  fi
fi

# The tune end to end (tests/gpu/tune_e2e_test.py: a consumer project with a HARNESS tuned by
# `cmake --build build --target tune`, its record verified, a second tune a no-op, a SIGINT
# mid-way resumed without re-measuring), faulting candidates (tests/gpu/tune_faults_test.py: an
# unmapped write, a spin and a trap among good candidates; SIGTERM mid-spin), the harness API
# through the runner (tests/gpu/tune_harness_api_test.py: an exact int gate on the device, a
# reference made in prepare with the module, blocks refused before launching) and the runoff
# benchmark (bench/runoff).
for t in TuneEndToEnd TuneFaults TuneHarnessApi; do
  want e2e || continue
  t0=$(date +%s)
  if [[ -f "$build/tests/gpu/CTestTestfile.cmake" ]]; then
    if TUNE_GPU_E2E=1 timeout 420 ctest --test-dir "$build" -R "^gpu[.]$t\$" -V \
        > "$out/$t.log" 2>&1 && grep -q '100% tests passed' "$out/$t.log"; then
      note "gpu.$t" ok "$(seconds "$t0") s"
    else
      note "gpu.$t" FAIL "see $t.log"
      sed -E 's/^[0-9]+: //' "$out/$t.log" | grep -E -A8 '^(FAIL|ERROR):' | head -40
    fi
    sed -nE 's/^[0-9]+: (tune_(e2e|faults|harness_api): .*)/\1/p' "$out/$t.log"
  else
    note "gpu.$t" SKIP "not configured"
  fi
done
t0=$(date +%s)
if ! want runoff; then
  :
elif [[ -x "$build/bench/runoff/bench_runoff" ]]; then
  if timeout 240 "$build/bench/runoff/bench_runoff" --device "$device" --runs 20 \
      > "$out/runoff.log" 2>&1; then
    note runoff ok "$(seconds "$t0") s, targets met (runoff.log)"
  else
    note runoff FAIL "see runoff.log"
  fi
  cat "$out/runoff.log"
else
  note runoff SKIP "bench_runoff not built"
fi

# The fidelity benchmark (bench/fidelity): every config timed in the sequential and the paired
# mode; the largest disagreement must stay within 1% or the noise floor.
t0=$(date +%s)
if ! want fidelity; then
  :
elif [[ -x "$build/bench/fidelity/bench_fidelity" ]]; then
  if timeout 300 "$build/bench/fidelity/bench_fidelity" --device "$device" --diagnose --app \
      --own-buffers --history --pairs --json "$out/fidelity.json" > "$out/fidelity.log" 2>&1; then
    note fidelity ok "$(seconds "$t0") s, $(grep 'largest disagreement' "$out/fidelity.log")"
  else
    note fidelity FAIL "see fidelity.log"
  fi
  cat "$out/fidelity.log"
  # The same question through a real tune: the finalists' runoff medians against their own
  # sequential medians, over several tunes with fresh logs.
  t0=$(date +%s)
  if CUDA_VISIBLE_DEVICES=$device timeout 300 python3 bench/fidelity/tune_runs.py \
      --tuner "$build/tuner/tuner" --arch "sm_$(nvidia-smi --query-gpu=compute_cap \
      --format=csv,noheader -i "$device" | head -1 | tr -d .)" --work "$build/fidelity_tune" \
      --runs "${GPU_CHECK_FIDELITY_RUNS:-5}" --tomlpp "$tomlpp" --eigen "$eigen" --json "$out/fidelity_tune.json" \
      > "$out/fidelity_tune.log" 2>&1; then
    note "fidelity tune" ok "$(seconds "$t0") s, $(grep 'largest departure' "$out/fidelity_tune.log")"
  else
    note "fidelity tune" FAIL "see fidelity_tune.log"
  fi
  cat "$out/fidelity_tune.log"
else
  note fidelity SKIP "bench_fidelity not built"
fi

# Embedded winners (docs/embed.md): examples/tile's program runs its shapes through the
# committed winners' cubins linked into it, and the CPU check of the same images; not in the
# default steps (ctest -L gpu already runs gpu.tile_example): GPU_CHECK_STEPS="build embed".
t0=$(date +%s)
if want embed; then
  if ctest --test-dir "$build" -R '^(example\.tile\.embed|gpu\.tile_example)$' \
      -V > "$out/embed.log" 2>&1; then
    note embed ok "$(seconds "$t0") s, $(grep -c 'tile_example: ok' "$out/embed.log") GPU run"
  else
    note embed FAIL "see embed.log"
  fi
  grep -E 'M=|embed_test|tile_example' "$out/embed.log" | head -12
fi

# Shards (scripts/shard_check.py, docs/scaling.md): the tune of reduce and softmax split in two
# shards on this GPU, then merged, against the unsharded tune; not in the default steps (it
# re-tunes two kernels twice, about 5 minutes on the H200): GPU_CHECK_STEPS="build shards".
# A step that runs one of the check scripts, whose last line is its verdict: noted ok with the
# seconds since $t0, or FAIL; its output is kept in <name>.log and printed.
check_script_step() {  # name, timeout in seconds, script
  local name=$1 limit=$2 script=$3
  if timeout "$limit" python3 "$script" --build "$build" --device "$device" --out "$out" \
      > "$out/$name.log" 2>&1; then
    note "$name" ok "$(seconds "$t0") s, $(tail -1 "$out/$name.log")"
  else
    note "$name" FAIL "$(tail -1 "$out/$name.log")"
  fi
  cat "$out/$name.log"
}

t0=$(date +%s)
if want shards; then
  cmake --build "$build" --target warm > "$out/shards_warm.log" 2>&1
  check_script_step shards 560 scripts/shard_check.py
fi

# The remote store (scripts/store_check.py, docs/store.md): a second tree with its own kernel
# cache and logs tunes reduce from a directory store a first tree filled; it must compile
# nothing and adopt the first tree's search trials. Not in the default steps (it tunes reduce
# twice, about 2 minutes on the H200): GPU_CHECK_STEPS="build store".
t0=$(date +%s)
if want store; then
  check_script_step store 400 scripts/store_check.py
fi

# The pipeline benchmark (bench/pipeline/run.sh): per-candidate overhead with and without a
# bucket fixture, and a cold tune with compile-ahead against warm and measurement apart; not in
# the default steps (about 4 minutes on the H200): GPU_CHECK_STEPS="build pipeline".
t0=$(date +%s)
if want pipeline; then
  if CUDA_VISIBLE_DEVICES=$device TUNE_TOMLPP_INCLUDE_DIR=$tomlpp TUNE_EIGEN_INCLUDE_DIR=$eigen \
      timeout 560 bench/pipeline/run.sh --build "$build" --out "$out/pipeline" ${GPU_CHECK_PIPELINE_ARGS:-} \
      > "$out/pipeline.log" 2>&1; then
    note pipeline ok "$(seconds "$t0") s, $(grep -h 'cold / max' "$out/pipeline.log" | xargs)"
  else
    note pipeline FAIL "$(tail -1 "$out/pipeline.log")"
  fi
  cat "$out/pipeline.log"
fi

{
  echo
  echo "== gpu_check summary (${gpu:-no GPU found}) =="
  printf '%s\n' "${summary[@]}"
  if grep -q 'tests FAILED' "$out/ctest_gpu.log" 2>/dev/null; then
    echo
    # Each gtest failure: its location line and the few lines that say what went wrong.
    sed -E 's/^[0-9]+: //' "$out/ctest_gpu.log" | grep -A3 -E ': Failure$' | grep -vE '^--$' \
      | head -24
    sed -n '/The following tests FAILED/,$p' "$out/ctest_gpu.log" | head -10
  fi
  if [[ -s "$out/gpu_notes.txt" ]]; then
    echo
    cat "$out/gpu_notes.txt"
  fi
  if [[ -n "$timing_table" ]]; then
    echo
    echo "$timing_table"
  fi
  echo
  echo "logs: $out"
} | tee "$out/summary.txt"

# Non-zero when anything failed, so the caller sees it without reading the table.
! printf '%s\n' "${summary[@]}" | grep -qE ' (FAIL|PART|SKIP) '
