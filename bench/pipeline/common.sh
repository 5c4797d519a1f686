# shellcheck shell=bash
# What run.sh, large.sh and candidate.sh share. Sourced, not run:
#   find_tuner <build tree>        the tuner program built there (not the host tool's copy)
#   header_deps                    sets deps: the -D options for TOML++ and Eigen headers from
#                                  TUNE_TOMLPP_INCLUDE_DIR / TUNE_EIGEN_INCLUDE_DIR, when there
#   build_tuner <src> <build> <configure log> <build log>
#                                  builds only the tuner of a tune source tree (a baseline's: no
#                                  kernels, no tests) and prints its path; fails as cmake does
#   pipeline_dirs <script name> [keep]   checks $build, $out and $tuner, then makes $out
#                                  absolute and empties $work (with `keep`: makes it only)
find_tuner() {
  if [[ -x "$1/tuner/tuner" ]]; then echo "$1/tuner/tuner"; return; fi
  find "$1" \( -path '*/_tune_host_tool/*' -o -path '*/tests/*' \) -prune -o -type f -name tuner \
    -perm -u+x -print | head -1
}

pipeline_dirs() {
  if [[ -z "$build" || -z "$out" || -z "$tuner" ]]; then
    echo "$1: pass --build <a tune build tree with the tuner built> --out <dir>" >&2
    exit 2
  fi
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
  [[ "${2:-}" == keep ]] || rm -rf "$work"
  mkdir -p "$work"
}

header_deps() {
  deps=()
  [[ -f "${TUNE_TOMLPP_INCLUDE_DIR:-/nonexistent}/toml++/toml.h" ]] &&
    deps+=(-DTUNE_TOMLPP_INCLUDE_DIR="$TUNE_TOMLPP_INCLUDE_DIR")
  [[ -f "${TUNE_EIGEN_INCLUDE_DIR:-/nonexistent}/Eigen/Core" ]] &&
    deps+=(-DTUNE_EIGEN_INCLUDE_DIR="$TUNE_EIGEN_INCLUDE_DIR")
  return 0
}

build_tuner() {
  header_deps
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNE_ENABLE_WERROR=OFF \
        -DTUNE_ENABLE_KERNELS=OFF -DTUNE_ENABLE_TESTS=OFF "${deps[@]}" > "$3" 2>&1 || return 1
  cmake --build "$2" --target tuner >> "$4" 2>&1 || return 1
  find_tuner "$2"
}
