#!/usr/bin/env bash
# The remote store's benchmark (docs/store.md; not a timed test, prints a table).
#
#   bench/store/run.sh --tuner <tuner> [--work <scratch dir>] [--jobs N] [--kernel reduce]
#
# Two build trees of one of this repository's kernels (sm_90) on this machine, each with its own
# kernel cache, sharing one nginx WebDAV store (tests/store/store_server.py starts it on a free
# loopback port and stops it at the end):
#   1. cold: tree A's `cmake --build --target warm`, an empty cache and an empty store: every
#      candidate is compiled and uploaded;
#   2. from the store: tree B's warm, an empty cache and the store populated: every candidate is
#      downloaded, none compiled.
# Prints both wall times, their ratio (the issue's target: at least 10x) and the bytes each
# warm moved (the store's size after the first; what nginx sent to the second).
set -euo pipefail

# shellcheck source=bench/common.sh
source "$(dirname "$0")/../common.sh"
bench_options "${TMPDIR:-/tmp}/tune-store-bench" "$@"
bench_tree tune_store_bench
server="$work/server"
python3 "$repo/tests/store/store_server.py" setup --dir "$server"
trap 'python3 "$repo/tests/store/store_server.py" cleanup --dir "$server"' EXIT
url="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["store"])' \
  "$server/servers.json")/bench"

# Bytes nginx sent in answers to GET since line $1 of its access log (combined format).
downloaded_since() {
  tail -n "+$(($1 + 1))" "$server/access.log" | python3 -c '
import sys
down = 0
for line in sys.stdin:
    parts = line.split()
    # combined format: ... "METHOD path HTTP/1.1" status bytes_sent ...
    try:
        method, status, sent = parts[5].strip("\""), parts[8], int(parts[9])
    except (IndexError, ValueError):
        continue
    down += sent if method == "GET" else 0
print(down)'
}

configure() {  # <build dir>
  cmake -S "$work/src" -B "$1" -G Ninja -DTUNE_TUNER_EXECUTABLE="$tuner" \
    -DTUNE_WARM_JOBS="$jobs" -DTUNE_CACHE_DIR="$1/cache" -DTUNE_REMOTE_STORE="$url" \
    >"$1.configure.log" 2>&1
}
a="$work/build-a"
b="$work/build-b"
configure "$a"
configure "$b"
ncand="$(grep -o "$kernel: [0-9]* candidates" "$a.configure.log" | grep -o '[0-9]*' || echo '?')"

t0="$(now)"; cmake --build "$a" --target warm >"$a.warm.log" 2>&1; t1="$(now)"
cold="$(elapsed "$t0" "$t1")"
stored_bytes="$(du -sb "$server/root/store/bench" | cut -f1)"
mark="$(wc -l <"$server/access.log")"
t0="$(now)"; cmake --build "$b" --target warm >"$b.warm.log" 2>&1; t1="$(now)"
remote="$(elapsed "$t0" "$t1")"
down="$(downloaded_since "$mark")"
compiled_b="$( (wc -l <"$b/tune/compile.log") 2>/dev/null || echo 0)"
grep -q "warning" "$b.warm.log" && { echo "run.sh: warnings in tree B's warm:" >&2; grep warning "$b.warm.log" >&2; }

machine_line
printf '%-46s %12s\n' "figure ($kernel, sm_90, $ncand candidates)" "value"
printf '%-46s %12s\n' "warm, cold: compile and upload (s)" "$cold"
printf '%-46s %12s\n' "warm, from the store (s)" "$remote"
printf '%-46s %12s\n' "ratio cold / from the store" "$(python3 -c "print(f'{$cold / $remote:.1f}')")"
printf '%-46s %12s\n' "bytes uploaded (the store's size)" "$stored_bytes"
printf '%-46s %12s\n' "bytes downloaded by the second warm" "$down"
printf '%-46s %12s\n' "nvcc runs in the second warm" "$compiled_b"
