#!/usr/bin/env bash
# The main job on a fresh Debian machine with the CUDA toolkit: install the dependencies,
# configure, build, warm every candidate (compile-only, no GPU) and verify the committed records.
# On a machine with a GPU it then re-tunes whatever is stale.
# It configures as scripts/test.sh does (the `ci` preset of CMakePresets.json, the same build
# tree and cache variables), so that the test command after it reuses this build instead of
# compiling everything again. TUNE_BUILD_DIR picks the build tree (default: build);
# TUNE_TOMLPP_INCLUDE_DIR, TUNE_EIGEN_INCLUDE_DIR and TUNE_ARCH are passed on.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
if command -v apt-get >/dev/null 2>&1 && [ -z "${TUNE_SKIP_INSTALL:-}" ]; then
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $(cat .ci/packages.txt)
fi
build=${TUNE_BUILD_DIR:-build}
cmake --preset ci -B "$build" ${TUNE_TOMLPP_INCLUDE_DIR:+-DTUNE_TOMLPP_INCLUDE_DIR=$TUNE_TOMLPP_INCLUDE_DIR} \
  ${TUNE_EIGEN_INCLUDE_DIR:+-DTUNE_EIGEN_INCLUDE_DIR=$TUNE_EIGEN_INCLUDE_DIR} ${TUNE_ARCH:+-DTUNE_ARCH=$TUNE_ARCH}
cmake --build "$build"
cmake --build "$build" --target warm
ctest --test-dir "$build" --no-tests=error -L records --output-on-failure
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  cmake --build "$build" --target tune
fi
