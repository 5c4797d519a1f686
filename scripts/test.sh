#!/usr/bin/env bash
# The test command of README.md and CI: configure with the `ci` preset of CMakePresets.json
# (RelWithDebInfo, warnings as errors), build, and run every test that needs no GPU.
# TUNE_BUILD_DIR picks the build tree (default: build); TUNE_TOMLPP_INCLUDE_DIR and
# TUNE_EIGEN_INCLUDE_DIR are passed on. scripts/bootstrap.sh configures the same tree with the
# same preset: after it, the configure here changes nothing and the build has little to do.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TUNE_BUILD_DIR:-build}
cmake --preset ci -B "$build" ${TUNE_TOMLPP_INCLUDE_DIR:+-DTUNE_TOMLPP_INCLUDE_DIR=$TUNE_TOMLPP_INCLUDE_DIR} \
  ${TUNE_EIGEN_INCLUDE_DIR:+-DTUNE_EIGEN_INCLUDE_DIR=$TUNE_EIGEN_INCLUDE_DIR}
cmake --build "$build"
ctest --test-dir "$build" -LE gpu --output-on-failure -j "$(nproc)"
