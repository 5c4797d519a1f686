#!/bin/sh
# A scripted objective for `tuner exec` tests (POSIX sh: cheap to start, many runs per test).
#
# Reads its config from TUNE_PARAM_BM / TUNE_PARAM_BN and reports a made-up time whose minimum
# is at BM=64, BN=128. Some configs fail on purpose: BM=32,BN=32 crashes (SIGSEGV),
# BM=128,BN=32 exits 3, BM=32,BN=128 answers something unreadable. Switches, from the
# environment:
#   OBJ_SIDE   append one line per run: config id, bucket, shape M (counts measurements)
#   OBJ_SLEEP  seconds to sleep before answering
#   OBJ_HANG   config id that hangs (60 s, in a child process of its own)
#   OBJ_FAIL   config id that exits 3 ("forced failure"); "all" for every config
#   OBJ_SCORE  report the time as a score (for --maximize the highest is BM=128,BN=64)
set -u
id="$TUNE_CONFIG_ID"
bm="$TUNE_PARAM_BM"
bn="$TUNE_PARAM_BN"

if [ -n "${OBJ_SIDE:-}" ]; then
  echo "$id $TUNE_BUCKET M=$TUNE_SHAPE_M" >> "$OBJ_SIDE"
fi
if [ "${OBJ_HANG:-}" = "$id" ]; then
  sleep 60 &
  wait
fi
if [ -n "${OBJ_SLEEP:-}" ]; then sleep "$OBJ_SLEEP"; fi

if [ "${OBJ_FAIL:-}" = "$id" ] || [ "${OBJ_FAIL:-}" = all ]; then
  echo "forced failure" >&2
  exit 3
fi
case "$bm,$bn" in
  32,32) echo "segfault in tile loop" >&2; kill -SEGV $$ ;;
  128,32) echo "launching" >&2; echo "out of shared memory" >&2; exit 3 ;;
  32,128) echo "fast!"; exit 0 ;;
esac

abs() { if [ "$1" -lt 0 ]; then echo $((-$1)); else echo "$1"; fi; }
# t = 1 + |BM-64|/32 + |BN-128|/64, in hundredths
t=$((100 + $(abs $((bm - 64))) * 100 / 32 + $(abs $((bn - 128))) * 100 / 64))
ms="$((t / 100)).$((t % 100 / 10))$((t % 10))"
echo "warming up"
if [ -n "${OBJ_SCORE:-}" ] || [ "$bn" = 64 ]; then
  echo "$ms"
else
  echo "{\"median_ms\": $ms, \"min_ms\": 0.5, \"reps\": 7}"
fi
