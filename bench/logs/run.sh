#!/usr/bin/env bash
# Memory and time of the log readers (`tuner export`, `show`, `show --json`, `report`) on a large
# synthetic trial log, this tree's tuner against a baseline tuner side by side, with ratios.
#
#   bench/logs/run.sh --tuner <tuner> [--baseline <tuner> | --baseline-src <tune source tree>]
#       [--trials 500000] [--configs 4000] [--work <dir>]
#
# --baseline-src builds only the `tuner` target of that tree (no kernels, no tests) in
# <work>/baseline; the pre-streaming baseline is main at a1a9096:
#   git -C <repo> worktree add /tmp/tune-a1a9096 a1a9096
#   bench/logs/run.sh --tuner build/tuner/tuner --baseline-src /tmp/tune-a1a9096
# The log is written by gen_log.py (deterministic): --trials trials over --configs configs,
# about 230 bytes a trial. Peak resident memory and wall time come from getrusage of each
# command (a fresh child each), printed as one table: command, MB and seconds of each tuner,
# and new/baseline ratios. Outputs are compared too: the two tuners must print the same bytes.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
tuner="" baseline="" baseline_src="" trials=500000 configs=4000
work="${TMPDIR:-/tmp}/tune-bench-logs"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tuner) tuner="$(realpath "$2")"; shift 2 ;;
    --baseline) baseline="$(realpath "$2")"; shift 2 ;;
    --baseline-src) baseline_src="$(realpath "$2")"; shift 2 ;;
    --trials) trials="$2"; shift 2 ;;
    --configs) configs="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [[ -z "$tuner" || ! -x "$tuner" ]]; then
  echo "run.sh: pass --tuner <path to a built tuner>" >&2
  exit 2
fi
mkdir -p "$work"
if [[ -n "$baseline_src" ]]; then
  source "$here/../pipeline/common.sh"
  baseline=$(build_tuner "$baseline_src" "$work/baseline" "$work/baseline.log" "$work/baseline.log")
fi
if [[ -z "$baseline" || ! -x "$baseline" ]]; then
  echo "run.sh: pass --baseline <tuner> or --baseline-src <source tree>" >&2
  exit 2
fi
log="$work/bench.trials.jsonl"
if [[ ! -f "$log" || "$(cat "$work/log.args" 2>/dev/null)" != "$trials $configs" ]]; then
  python3 "$here/gen_log.py" --trials "$trials" --configs "$configs" --out "$log"
  echo "$trials $configs" > "$work/log.args"
fi
python3 - "$tuner" "$baseline" "$log" "$work" <<'PY'
import os, sys, time
new, base, log, work = sys.argv[1:]

def run(tuner, args, tag):
    out = os.path.join(work, f"{tag}.out")
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.chdir(work)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        err = os.open(os.devnull, os.O_WRONLY)
        os.dup2(err, 2)
        os.execv(tuner, [tuner, *args])
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{tuner} {' '.join(args)}: exit {os.waitstatus_to_exitcode(status)}")
    return usage.ru_maxrss / 1024, wall, out

size = os.path.getsize(log)
with open(log) as f:
    lines = sum(1 for _ in f) - 1
print(f"log: {lines} trials, {size / 1e6:.1f} MB ({log})")
print(f"machine: {os.cpu_count()} cores, {os.uname().sysname} {os.uname().release}")
print(f"{'command':<22} {'new MB':>8} {'base MB':>8} {'MB ratio':>9} {'new s':>7} {'base s':>7} "
      f"{'s ratio':>8}  same output")
cases = [("export --format t4", ["export", "--format", "t4", log]),
         ("export -o", ["export", "--format", "t4", log, "-o", "t4.json"]),
         ("show", ["show", log]),
         ("show --json", ["show", "--json", log]),
         ("report", ["report", log, "-o", "report.html"])]
for name, args in cases:
    nm, ns, nout = run(new, args, "new")
    for f in ("t4.json", "report.html"):
        p = os.path.join(work, f)
        if os.path.exists(p):
            os.replace(p, p + ".new")
    bm, bs, bout = run(base, args, "base")
    same = open(nout, "rb").read() == open(bout, "rb").read()
    for f in ("t4.json", "report.html"):
        p = os.path.join(work, f)
        if os.path.exists(p):
            same = same and open(p, "rb").read() == open(p + ".new", "rb").read()
            os.remove(p), os.remove(p + ".new")
    print(f"{name:<22} {nm:8.1f} {bm:8.1f} {nm / bm:9.3f} {ns:7.2f} {bs:7.2f} {ns / bs:8.2f}  "
          f"{'yes' if same else 'NO'}")
PY
