# shellcheck shell=bash disable=SC2034  # sets variables for the script that sources it
# What the build benchmarks share (bench/build/run.sh, bench/store/run.sh): their options and
# the source tree they configure, one of this repository's kernels declared for sm_90. Sourced,
# not run:
#
#   source "$(dirname "$0")/../common.sh"
#   bench_options <default --work> "$@"   sets repo, tuner (absolute), work, jobs, kernel
#   bench_tree <project> [line...]        empties $work; writes $work/src/CMakeLists.txt, the
#                                         lines after project() (enable_testing(), ...) first
#   now; elapsed <t0> <t1>; machine_line  wall times and the machine they were taken on

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# --tuner <tuner> [--work <scratch dir>] [--jobs N] [--kernel reduce]; exits 2 on anything else
# or without a runnable --tuner.
bench_options() {
  work="$1"
  shift
  tuner=""
  jobs="$(nproc)"
  kernel="reduce"
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --tuner) tuner="$2"; shift 2 ;;
      --work) work="$2"; shift 2 ;;
      --jobs) jobs="$2"; shift 2 ;;
      --kernel) kernel="$2"; shift 2 ;;
      *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
  done
  if [[ -z "$tuner" || ! -x "$tuner" ]]; then
    echo "run.sh: pass --tuner <path to a built tuner>" >&2
    exit 2
  fi
  tuner="$(realpath "$tuner")"
}

bench_tree() {  # <project name> [CMake line after project()...]
  local project="$1" line
  shift
  rm -rf "$work"
  mkdir -p "$work/src"
  {
    echo "cmake_minimum_required(VERSION 3.25...4.4)"
    echo "project($project LANGUAGES NONE)"
    for line in "$@"; do echo "$line"; done
    cat <<CMAKE
list(APPEND CMAKE_MODULE_PATH "$repo/cmake")
include(Tune)
tune_add_kernel($kernel
  SOURCE "$repo/kernels/$kernel/$kernel.cu"
  SPACE "$repo/spaces/$kernel.toml"
  RECORD "$work/records/$kernel.json"
  ARCH sm_90)
CMAKE
  } >"$work/src/CMakeLists.txt"
}

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.2f}')"; }
machine_line() {
  printf '%s\n' "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(hostname)"
}
