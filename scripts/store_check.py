#!/usr/bin/env python3
"""On a GPU host: does a second tree tune from the remote store? (docs/store.md)

For each kernel (default reduce) of a build tree that is built, two trees' worth of tune state
share one directory store: each tree has its own kernel cache, its own trial logs and its own
copy of the committed record (the manifest is copied with those three paths changed; the runner
and the sources are the build's). Then:

1. tree A: `tuner warm` (every candidate compiled, uploaded), `tuner run` (every trial measured
   here, uploaded);
2. tree B: `tuner warm` must compile nothing (every candidate downloaded), and `tuner run` must
   adopt the search trials A measured, `(remote, measured on <host>)`, and measure here only the
   incumbents, each bucket's first candidate, the adopted finalists once each (the check of
   adopted trials, docs/search.md "Adopted trials are checked here") and the runoff.

3. tree C, after the store is forged (docs/trust.md): the entry of each bucket's winner of A
   rewritten as `failed`, and the shared trials of two other configs given a median 100x faster
   than A's best. C must compile the forged-failed candidates itself (a remote negative verdict
   is never believed), check the two forged trials here and discard them, and write a record
   measured here whose winners are not the forged configs.

Prints per tree the wall times and counts, per bucket both winners, and a last line
`store_check: ok (...)` or `store_check: FAIL ...`; exit status 0 or 1.

Usage: scripts/store_check.py --build build-gpu [--kernels reduce] [--device 0] [--out DIR]
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

from gpu_check_common import Check


def trials(logdir):
    """Every trial line of every bucket log under `logdir` (header lines have no config_id)."""
    found = []
    for path in sorted(Path(logdir).rglob("*.jsonl")):
        for line in path.read_text(errors="replace").splitlines():
            try:
                j = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(j, dict) and "config_id" in j:
                found.append(j)
    return found


def tree(name, manifest, work, store):
    """A copy of `manifest` whose cache, logs and record live under work/name."""
    m = json.loads(Path(manifest).read_text())
    base = work / name
    shutil.rmtree(base, ignore_errors=True)
    (base / "records").mkdir(parents=True)
    m["cache_dir"] = str(base / "cache")
    m["log_dir"] = str(base / "logs")
    m["compile_log"] = str(base / "compile.log")
    records = {}
    for arch, record in m["records"].items():
        copy = base / "records" / f"{arch}-{Path(record).name}"
        if Path(record).exists():
            shutil.copyfile(record, copy)
        records[arch] = str(copy)
    m["records"] = records
    m["remote_store"] = str(store)
    path = base / "manifest.json"
    path.write_text(json.dumps(m, indent=2))
    return path, m


def compiles(m):
    p = Path(m["compile_log"])
    return sum(1 for _ in p.open()) if p.exists() else 0


def forged_tree(check, tuner, kernel, manifest, work, store, a):
    """Tree C against the store with one forged entry per bucket winner and two forged trials."""
    failures = []
    m_a = json.loads((work / kernel / "a" / "manifest.json").read_text())
    arch = next(iter(m_a["records"]))
    forged_failed = set()
    for w in set(a["winners"].values()):
        key = subprocess.run([str(tuner), "key", "--manifest", str(work / kernel / "a" /
                              "manifest.json"), "--config", w, "--arch", arch],
                             capture_output=True, text=True, check=True).stdout.split()[0]
        entry_path = store / "ac" / key
        entry = json.loads(entry_path.read_text())
        entry.update(status="failed", reason="the compiler exited with status 1 (forged)",
                     cubin_sha256="", compiler_output="forged")
        entry_path.write_text(json.dumps(entry))
        forged_failed.add(w)
    best = min(t["median_ms"] for t in a["here"] if t.get("state") == "measured")
    shared = []  # (path, object) of every shared trial
    for p in sorted((store / "ac").iterdir()):
        try:
            j = json.loads(p.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(j, dict) and "trial" in j:
            shared.append((p, j))
    others = sorted({j["trial"]["config_id"] for _, j in shared} - set(a["winners"].values()))
    forged_trials = others[:2]
    for p, j in shared:
        if j["trial"]["config_id"] in forged_trials:
            j["trial"]["median_ms"] = best / 100
            j["trial"]["min_ms"] = best / 100 * 0.95
            p.write_text(json.dumps(j))
    path, m = tree("c", manifest, work / kernel, store)
    warm = check.run([tuner, "warm", "--manifest", str(path)])
    tune = check.run([tuner, "run", "--manifest", str(path), "--device", check.args.device])
    ts = trials(m["log_dir"])
    record = json.loads(Path(next(iter(m["records"].values()))).read_text())
    winners = {e["bucket"]: e["config"]["id"] for e in record["entries"]}
    sources = {e.get("source") for e in record["entries"]}
    discarded = sorted({t["config_id"] for t in ts if t.get("checks") and
                        not t["checks"]["agreed"]})
    print(f"{kernel}: tree c (forged store: {len(forged_failed)} entries made 'failed' "
          f"({', '.join(sorted(forged_failed))}), trials of {', '.join(forged_trials)} made "
          f"{best / 100:.4g} ms): warm {warm:.1f} s, {compiles(m)} compiled; run {tune:.1f} s; "
          f"discarded after a check here: {', '.join(discarded) or 'none'}")
    for bucket, w in winners.items():
        print(f"  {bucket}: tree a {a['winners'].get(bucket)}, tree c {w}")
    if compiles(m) < len(forged_failed):
        failures.append(f"{kernel}: tree c compiled {compiles(m)} candidates, fewer than the "
                        f"{len(forged_failed)} forged-failed ones")
    if set(winners.values()) & set(forged_trials):
        failures.append(f"{kernel}: tree c's record names a forged config ({winners})")
    if sources != {"measured"}:
        failures.append(f"{kernel}: tree c's record has a median it did not measure ({sources})")
    if not set(forged_trials) <= set(discarded):
        failures.append(f"{kernel}: tree c did not discard the forged trials of "
                        f"{sorted(set(forged_trials) - set(discarded))}")
    return failures


def main():
    check = Check("store_check", default_kernels="reduce")
    args, build, tuner = check.args, check.build, check.tuner
    work = build / "store_check"
    failures = []
    for kernel in args.kernels.split(","):
        store = work / kernel / "store"
        shutil.rmtree(store, ignore_errors=True)
        store.mkdir(parents=True)
        manifest = build / "tune" / kernel / "manifest.json"
        seen = {}
        for name in ("a", "b"):
            path, m = tree(name, manifest, work / kernel, store)
            warm = check.run([tuner, "warm", "--manifest", str(path)])
            tune = check.run([tuner, "run", "--manifest", str(path), "--device", args.device])
            ts = trials(m["log_dir"])
            remote = [t for t in ts if t.get("remote")]
            here = [t for t in ts if not t.get("remote")]
            phases = {}
            for t in here:
                phases[t.get("phase", "?")] = phases.get(t.get("phase", "?"), 0) + 1
            record = json.loads(Path(next(iter(m["records"].values()))).read_text())
            winners = {e["bucket"]: e["config"]["id"] for e in record["entries"]}
            seen[name] = dict(compiles=compiles(m), remote=remote, here=here, winners=winners,
                              sources={e.get("source") for e in record["entries"]})
            print(f"{kernel}: tree {name}: warm {warm:.1f} s, {compiles(m)} compiled; "
                  f"run {tune:.1f} s, {len(here)} trials measured here "
                  f"({', '.join(f'{k} {v}' for k, v in sorted(phases.items()))}), "
                  f"{len(remote)} adopted from the store")
        a, b = seen["a"], seen["b"]
        if a["compiles"] == 0:
            failures.append(f"{kernel}: tree a compiled nothing (was the store empty?)")
        if b["compiles"] != 0:
            failures.append(f"{kernel}: tree b compiled {b['compiles']} candidates")
        if a["remote"]:
            failures.append(f"{kernel}: tree a adopted {len(a['remote'])} trials from an empty store")
        if not b["remote"]:
            failures.append(f"{kernel}: tree b adopted no trial")
        checks = [t for t in b["here"] if t.get("checks")]
        searched_here = [t for t in b["here"] if t.get("phase") == "search" and not t.get("checks")]
        buckets = len(b["winners"])
        disagreed = [t["config_id"] for t in checks if not t["checks"]["agreed"]]
        print(f"{kernel}: tree b measured {len(checks)} adopted finalists here to check them, "
              f"{len(disagreed)} disagreeing by more than 3% ({', '.join(disagreed) or 'none'})")
        if not checks:
            failures.append(f"{kernel}: tree b checked no adopted finalist here")
        if b["sources"] != {"measured"}:
            failures.append(f"{kernel}: tree b's record has a median it did not measure")
        if len(searched_here) > 2 * buckets:
            failures.append(f"{kernel}: tree b measured {len(searched_here)} search trials here, "
                            f"more than each bucket's first candidate and incumbent")
        hosts = sorted({t["remote"] for t in b["remote"]})
        print(f"{kernel}: tree b adopted trials measured on {', '.join(hosts) or 'nobody'}")
        for bucket, w in a["winners"].items():
            print(f"  {bucket}: tree a {w}, tree b {b['winners'].get(bucket)}"
                  f"{'' if w == b['winners'].get(bucket) else ' (the runoff, run here, decided)'}")
        failures += forged_tree(check, tuner, kernel, manifest, work, store, a)
    if failures:
        print("store_check: FAIL (" + "; ".join(failures) + ")")
        return 1
    print(f"store_check: ok (tree b compiled nothing and adopted the search trials)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
