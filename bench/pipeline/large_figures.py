#!/usr/bin/env python3
"""The figures of bench/pipeline/large.sh, from what each run left in --out: the trial log
(<tuner>.<strategy>.trials.jsonl), the kernel cache's compile log (one line per compile, the
config id last) and the run's output (its `compile-ahead:` line)."""
import argparse
import json
import re
from pathlib import Path


def figures(out, name, strategy):
    trials = []
    path = out / f"{name}.{strategy}.trials.jsonl"
    for line in path.read_text().splitlines()[1:] if path.exists() else []:
        try:
            trials.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    search = [t for t in trials if t.get("phase") in ("required", "search")]
    times = [t["times"] for t in search if isinstance(t.get("times"), dict)]
    total = {k: sum(t.get(k, 0) for t in times) / 1000 for k in
             ("wall_ms", "warmup_ms", "timed_ms", "setup_ms", "load_ms", "fixture_ms",
              "compile_wait_ms", "strategy_ms")}
    wall = total["wall_ms"]
    compiled = [l.split(" ", 1)[1] for l in
                (out / f"{name}.{strategy}.compile.log").read_text().splitlines() if " " in l]
    measured = {t["config_id"] for t in search}
    never = sum(1 for c in set(compiled) if c not in measured)
    log = (out / f"{name}.{strategy}.log").read_text(errors="replace")
    waited = re.search(r"the search waited ([0-9.]+) s for the compiler", log)
    compile_wait = total["compile_wait_ms"] or (float(waited.group(1)) if waited else 0.0)
    runoff = any(t.get("phase") == "runoff" and t.get("state") == "measured" for t in trials)
    return {
        "evaluations": len(search),
        "per_min": len(search) / (wall / 60) if wall > 0 else 0.0,
        "gpu_busy_pct": 100 * (total["warmup_ms"] + total["timed_ms"]) / wall if wall else 0.0,
        "compiles": len(set(compiled)),
        "never_pct": 100 * never / len(set(compiled)) if compiled else 0.0,
        "runoff": runoff,
        "wall_s": wall,
        "compile_wait_s": compile_wait,
        "strategy_s": total["strategy_ms"],
        "setup_s": total["setup_ms"] + total["load_ms"] + total["fixture_ms"],
        "warmup_s": total["warmup_ms"],
        "timed_s": total["timed_ms"],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--strategies", nargs="+", required=True)
    ap.add_argument("--tuners", nargs="+", required=True)
    a = ap.parse_args()
    all_figures = {}
    for s in a.strategies:
        for name in a.tuners:
            if not (a.out / f"{name}.{s}.log").exists():
                print(f"{s} / {name}: not run (no {name}.{s}.log in {a.out})")
                continue
            f = figures(a.out, name, s)
            all_figures[f"{name}.{s}"] = f
            print(f"{s} / {name}: {f['evaluations']} evaluations, {f['per_min']:.1f} per minute; "
                  f"GPU busy {f['gpu_busy_pct']:.1f}% of {f['wall_s']:.1f} s (target >= 50); "
                  f"never measured {f['never_pct']:.1f}% of {f['compiles']} compiles "
                  f"(target <= 25); runoff {'ran' if f['runoff'] else 'did NOT run'}")
            print(f"  wall time: compiler waits {f['compile_wait_s']:.1f} s, strategy "
                  f"{f['strategy_s']:.1f} s, setup and gate {f['setup_s']:.1f} s, warm-up "
                  f"{f['warmup_s']:.1f} s, timed reps {f['timed_s']:.1f} s")
        if f"baseline.{s}" in all_figures and f"new.{s}" in all_figures:
            n, b = all_figures[f"new.{s}"], all_figures[f"baseline.{s}"]
            ratio = n["per_min"] / b["per_min"] if b["per_min"] else float("inf")
            print(f"  {s}: evaluations per minute new/baseline {ratio:.2f}x (target >= 5)")
    (a.out / "large.json").write_text(json.dumps(all_figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
