#!/usr/bin/env python3
"""The figures of bench/pipeline/large.sh, from what each run left in --out: the trial log
(<tuner>.<strategy>.trials.jsonl), the kernel cache's compile log (one line per compile, the
config id last), the run's output (its `compile-ahead:` and `winner` lines) and the host's core
count (`cores`; compile-ahead runs one compile thread per core but one)."""
import argparse
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path


def first_seen(search, config_id):
    """Seconds into the search when config_id was first measured, and its evaluation number."""
    wall = 0.0
    for i, t in enumerate(search):
        wall += t.get("times", {}).get("wall_ms", 0) / 1000
        if t.get("config_id") == config_id:
            return wall, i + 1
    return None, None


def near_best(out, name, strategy, search, best=None):
    """The first search trial within 1.02x of `best` (default: the best median the search ends
    with), and the compiler seconds spent until it was measured: every compile that ended (its
    cache entry written) by the trial's time, the trial's own included. None without the
    compiles file, or when no trial came that near."""
    measured = [t for t in search if t.get("state") == "measured" and t.get("median_ms")]
    path = out / f"{name}.{strategy}.compiles.jsonl"
    if not measured or not path.exists():
        return None
    best = best or min(t["median_ms"] for t in measured)
    first = next((t for t in measured if t["median_ms"] <= 1.02 * best), None)
    if first is None:
        return None
    when = datetime.strptime(first["time"], "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=timezone.utc).timestamp() + 1  # the trial's time has whole seconds
    compiles = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
    spent = sum(c.get("compile_s") or 0 for c in compiles
                if c["end"] <= when or c.get("config_id") == first["config_id"])
    total = sum(c.get("compile_s") or 0 for c in compiles)
    return {"best_ms": best, "near_config": first["config_id"], "near_ms": first["median_ms"],
            "near_at": measured.index(first) + 1, "compile_s_to_near": spent,
            "compile_s_total": total,
            "compile_slow": sum(1 for t in search if str(t.get("reason", "")).startswith(
                "compile_slow"))}


def figures(out, name, strategy, cores):
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
    # The strategy's own time (tuners since the strategy thinks beside the measurements say it
    # apart from the waits, which are the trials' strategy_ms).
    own = re.search(r"strategy: ([0-9.]+) s in propose/tell", log)
    won = re.search(r"winner (\S+) at ([0-9.]+) ms", log)
    winner = won.group(1) if won else None
    found_s, found_at = first_seen(search, winner) if winner else (None, None)
    compile_s = sum(t.get("compile_s", 0) or 0 for t in search)
    threads = max(cores - 1, 1)
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
        "strategy_own_s": float(own.group(1)) if own else None,
        "setup_s": total["setup_ms"] + total["load_ms"] + total["fixture_ms"],
        "warmup_s": total["warmup_ms"],
        "timed_s": total["timed_ms"],
        "winner": winner,
        "winner_ms": float(won.group(2)) if won else None,
        "winner_found_s": found_s,
        "winner_found_at": found_at,
        # Warm-up and timed reps of every trial, the runoff's included: the GPU's share of a
        # complete grid's lower bound.
        "gpu_all_s": sum((t.get("times") or {}).get(k, 0) for t in trials
                         for k in ("warmup_ms", "timed_ms")) / 1000,
        "near_best": near_best(out, name, strategy, search),
        "search": search,
        # Compiler seconds over the compile threads' wall time: near 100% the search is bound by
        # the compiler, and the GPU can only wait (older tuners log no compile seconds: None).
        "compile_threads_busy_pct": 100 * compile_s / (threads * wall) if compile_s and wall
        else None,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--strategies", nargs="+", required=True)
    ap.add_argument("--tuners", nargs="+", required=True)
    a = ap.parse_args()
    cores_file = a.out / "cores"
    cores = int(cores_file.read_text()) if cores_file.exists() else os.cpu_count()
    all_figures = {}
    for s in a.strategies:
        for name in a.tuners:
            if not (a.out / f"{name}.{s}.log").exists():
                print(f"{s} / {name}: not run (no {name}.{s}.log in {a.out})")
                continue
            f = figures(a.out, name, s, cores)
            all_figures[f"{name}.{s}"] = f
            print(f"{s} / {name}: {f['evaluations']} evaluations, {f['per_min']:.1f} per minute; "
                  f"GPU busy {f['gpu_busy_pct']:.1f}% of {f['wall_s']:.1f} s (target >= 50); "
                  f"never measured {f['never_pct']:.1f}% of {f['compiles']} compiles "
                  f"(target <= 25); runoff {'ran' if f['runoff'] else 'did NOT run'}")
            print(f"  wall time: compiler waits {f['compile_wait_s']:.1f} s, strategy "
                  f"{f['strategy_s']:.1f} s, setup and gate {f['setup_s']:.1f} s, warm-up "
                  f"{f['warmup_s']:.1f} s, timed reps {f['timed_s']:.1f} s")
            if f["strategy_own_s"] is not None:
                print(f"  the strategy's own time {f['strategy_own_s']:.1f} s, of which the "
                      f"search waited {f['strategy_s']:.1f} s")
            if f["winner"]:
                found = (f"first measured at evaluation {f['winner_found_at']}, "
                         f"{f['winner_found_s']:.1f} s into the search"
                         if f["winner_found_s"] is not None else "not measured in the search")
                print(f"  winner {f['winner']} at {f['winner_ms']:.4f} ms, {found}")
            if f["near_best"]:
                nb = f["near_best"]
                print(f"  best {nb['best_ms']:.4f} ms; first within 1.02x: {nb['near_config']} at "
                      f"evaluation {nb['near_at']}, after {nb['compile_s_to_near']:.0f} s of "
                      f"compiler time (of {nb['compile_s_total']:.0f} s in all)")
            if f["compile_threads_busy_pct"] is not None:
                print(f"  compile threads busy {f['compile_threads_busy_pct']:.0f}% "
                      f"({max(cores - 1, 1)} threads; near 100% the compiler bounds the search)")
        if f"baseline.{s}" in all_figures and f"new.{s}" in all_figures:
            n, b = all_figures[f"new.{s}"], all_figures[f"baseline.{s}"]
            ratio = n["per_min"] / b["per_min"] if b["per_min"] else float("inf")
            print(f"  {s}: evaluations per minute new/baseline {ratio:.2f}x (target >= 5)")
    # A complete grid: its wall time against max(compiler seconds / threads, GPU seconds).
    for name in a.tuners:
        f = all_figures.get(f"{name}.grid144")
        wall_file = a.out / f"{name}.grid144.wall"
        if not f or not f["near_best"] or not wall_file.exists():
            continue
        t0, t1 = (float(x) for x in wall_file.read_text().split())
        gpu = f["gpu_all_s"]
        threads = max(cores - 1, 1)
        compile_bound = f["near_best"]["compile_s_total"] / threads
        bound = max(compile_bound, gpu)
        f["grid"] = {"wall_s": t1 - t0, "compile_s": f["near_best"]["compile_s_total"],
                     "threads": threads, "gpu_s": gpu, "bound_s": bound}
        print(f"grid144 ({name}): {len(f['search'])} configs, the tune's wall {t1 - t0:.1f} s "
              f"against the lower bound {bound:.1f} s = max({f['near_best']['compile_s_total']:.0f} "
              f"s of compiler time / {threads} threads = {compile_bound:.1f} s, GPU {gpu:.1f} s): "
              f"{(t1 - t0) / bound:.2f}x (target <= 1.15)")
    # The compile-spend features off (`<strategy>-off`) against on: the compile seconds until
    # the search first measured a config within 1.02x of the best it ends with, and the bests.
    for name in a.tuners:
        for s in a.strategies:
            on, off = all_figures.get(f"{name}.{s}"), all_figures.get(f"{name}.{s}-off")
            if not on or not off or not on["near_best"] or not off["near_best"]:
                continue
            n, f = on["near_best"], off["near_best"]
            print(f"{s} ({name}), compile-spend features on / off: compile seconds to 1.02x of "
                  f"the run's best {n['compile_s_to_near']:.0f} / {f['compile_s_to_near']:.0f} s "
                  f"({n['compile_s_to_near'] / f['compile_s_to_near'] - 1:+.0%}; target -40%), "
                  f"at evaluation {n['near_at']} / {f['near_at']}; best {n['best_ms']:.4f} / "
                  f"{f['best_ms']:.4f} ms ({n['best_ms'] / f['best_ms']:.3f}x; target <= 1.00 "
                  f"within noise); compile seconds in all {n['compile_s_total']:.0f} / "
                  f"{f['compile_s_total']:.0f}; compile_slow {n['compile_slow']} / "
                  f"{f['compile_slow']}")
            # Against one mark: 1.02x of the better of the two bests.
            mark = min(n["best_ms"], f["best_ms"])
            n2 = near_best(a.out, name, s, on["search"], mark)
            f2 = near_best(a.out, name, f"{s}-off", off["search"], mark)
            said = lambda x: (f"{x['compile_s_to_near']:.0f} s (evaluation {x['near_at']})"
                              if x else "never")
            print(f"  to 1.02x of the better best ({mark:.4f} ms): on {said(n2)}, off {said(f2)}")
    for name in a.tuners:
        plain, weighted = all_figures.get(f"{name}.bayes"), all_figures.get(f"{name}.bayes-cost")
        if plain and weighted and plain["per_min"]:
            print(f"bayes-cost / bayes ({name}): evaluations per minute "
                  f"{weighted['per_min'] / plain['per_min']:.2f}x, GPU busy "
                  f"{weighted['gpu_busy_pct']:.1f}% vs {plain['gpu_busy_pct']:.1f}%")
    for f in all_figures.values():
        f.pop("search")
    (a.out / "large.json").write_text(json.dumps(all_figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
