#!/usr/bin/env bash
# The test command of README.md: configure, build and run every test that needs no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TUNE_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${TUNE_TOMLPP_INCLUDE_DIR:+-DTUNE_TOMLPP_INCLUDE_DIR=$TUNE_TOMLPP_INCLUDE_DIR}
cmake --build "$build"
ctest --test-dir "$build" -LE gpu --output-on-failure -j "$(nproc)"
