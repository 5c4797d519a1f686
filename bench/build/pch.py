#!/usr/bin/env python3
"""Would a precompiled header save compile seconds on a template entry (docs/measurement.md
"Precompiled headers for template entries")?

A template entry's candidate is a generated unit that includes the kernel's source (and so its
headers), then takes the address of one instance (docs/embed.md). A precompiled header could
only skip what every candidate repeats before the instance: preprocessing and parsing the
headers (nvcc's own `cuda_runtime.h` among them). This script measures, per kernel:

- `full`: each candidate compiled as warm compiles it (the argument vector `tuner key` reports,
  nvcc -cubin), median of --reps runs per candidate;
- `headers`: the same vector on a unit that includes the source and instantiates nothing, one
  after each full compile: the most a precompiled header could take away from each candidate
  (it also holds the process starts of nvcc, cicc and ptxas, which no PCH removes);
- `bound`: median(full) / (median(full) - median(headers)): the speed-up of a perfect PCH, an
  upper bound (the header-only compiles run interleaved with the full ones, under one load);
- with --phases, one candidate's `nvcc --time` split (preprocess, cicc, ptxas).

It also records whether this nvcc has a PCH for device code at all (`nvcc --help`, and whether
`-Xcicc --create_pch` writes a file). Kernels: the repository's template entries (examples/tile,
from its manifest in a configured build tree), and with --heavy a copy of tile.cu that first
includes five of CUB's block headers (a header-heavy template kernel, for scale; not one of
ours), its first --heavy-candidates candidates (default 8).

nvcc has no PCH for device code, so with --nvrtc the same instances are also compiled in this
process by NVRTC (libnvrtc, which has one since CUDA 12.8: `-pch`), without and with a PCH, to
show what a PCH saves where one exists. NVRTC instantiates through a name expression
(`&tile_gemm<16, 16, 16, Layout::Row>`) instead of the generated unit's host function, and it
includes no runtime header of its own; tune compiles with nvcc, not NVRTC.

Usage: pch.py --tuner build/_tune_host_tool/tuner/tuner --manifest build/tune/tile/manifest.json
              [--reps 3] [--heavy [--heavy-candidates 8]] [--phases] [--nvrtc]
              [--work DIR] [--json out.json]
Run it under `nice`; on a shared machine the medians are what to read.
"""
import argparse
import ctypes
import json
import os
import re
import shutil
import statistics
import subprocess
import time
from pathlib import Path


HEAVY = ["load", "store", "reduce", "scan", "radix_sort"]


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def candidates(tuner, manifest):
    m = json.loads(Path(manifest).read_text())
    ids = run([tuner, "warm", "--list-candidates", m["space"]], check=True).stdout.split()
    return m, ids


def keyed(tuner, manifest, config_id):
    """The keyed argv and the generated unit of one candidate, as `tuner key --json` says."""
    out = json.loads(run([tuner, "key", "--manifest", manifest, "--config", config_id, "--json"],
                         check=True).stdout)
    inputs = {i["name"]: i["value"] for i in out["inputs"]}
    return inputs["argv"].split(), inputs["entry_unit"]


def timed(argv):
    t0 = time.perf_counter()
    r = run(argv)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"pch.py: compile failed: {' '.join(map(str, argv))}\n{r.stdout}{r.stderr}")
    return seconds


def command(argv, nvcc, unit, out):
    return [nvcc if a == "nvcc" else out if a == "<out>" else unit if a == "<entry.cu>" else a
            for a in argv]


def measure(kernel, units, header_unit, argv, nvcc, work, reps):
    """Per candidate the median of `reps` full compiles; after each full compile one compile of
    the header-only unit, so that both see the same load; their medians and the bound."""
    work.mkdir(parents=True, exist_ok=True)
    header = work / "headers.cu"
    header.write_text(header_unit)
    full, headers = [], []
    for i, text in enumerate(units):
        unit = work / f"c{i}.cu"
        unit.write_text(text)
        runs = []
        for _ in range(reps):
            runs.append(timed(command(argv, nvcc, unit, work / f"c{i}.cubin")))
            headers.append(timed(command(argv, nvcc, header, work / "headers.cubin")))
        full.append(statistics.median(runs))
    f, h = statistics.median(full), statistics.median(headers)
    return {"kernel": kernel, "candidates": len(units), "reps": reps,
            "full_s": {"sum": sum(full), "median": f, "min": min(full), "max": max(full)},
            "headers_s": h, "bound": f / max(f - h, 1e-3)}


def phases(argv, nvcc, unit, work):
    """`nvcc --time` of one compile: phase name to milliseconds."""
    csv = work / "time.csv"
    csv.unlink(missing_ok=True)
    cmd = command(argv, nvcc, unit, work / "p.cubin")
    run(cmd[:1] + ["--time", csv] + cmd[1:], check=True)
    out = {}
    for line in csv.read_text().splitlines()[1:]:
        cells = [c.strip() for c in line.split(",")]
        if len(cells) >= 8:  # source, phase, inputs, output, arch, tool, metric, unit
            out[cells[1]] = out.get(cells[1], 0.0) + float(cells[6])
    return out


def nvrtc_times(nvcc, header, units, pch_dir):
    """Seconds NVRTC takes per instance of `units` (their `&name<...>`), in this process:
    without a PCH, then with automatic PCH (`-pch`; the first compile creates it)."""
    lib = ctypes.CDLL(str(Path(nvcc).resolve().parents[1] / "lib64" / "libnvrtc.so"))
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
    include = Path(nvcc).resolve().parents[1] / "include"
    out = {}
    for mode, extra in (("plain", []), ("pch", ["-pch", f"-pch-dir={pch_dir}"])):
        Path(pch_dir).mkdir(parents=True, exist_ok=True)
        opts = [o.encode() for o in ["-arch=sm_90", "-std=c++17", f"-I{include}/cccl",
                                     f"-I{include}", *extra]]
        times = []
        for text in units:
            name = re.search(r"reinterpret_cast<void\*>\(&(.+)\); }", text).group(1)
            prog = ctypes.c_void_p()
            lib.nvrtcCreateProgram(ctypes.byref(prog), f'#include "{header}"\n'.encode(),
                                   b"unit.cu", 0, None, None)
            lib.nvrtcAddNameExpression(prog, f"&{name}".encode())
            t0 = time.perf_counter()
            r = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
            times.append(time.perf_counter() - t0)
            if r != 0:
                n = ctypes.c_size_t()
                lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
                log = ctypes.create_string_buffer(n.value)
                lib.nvrtcGetProgramLog(prog, log)
                raise SystemExit(f"pch.py: NVRTC: {lib.nvrtcGetErrorString(r).decode()}\n"
                                 f"{log.value.decode()[:2000]}")
            lib.nvrtcDestroyProgram(ctypes.byref(prog))
        out[mode] = {"first": times[0], "median_rest": statistics.median(times[1:] or times),
                     "sum": sum(times)}
    out["speedup_rest"] = out["plain"]["median_rest"] / out["pch"]["median_rest"]
    return out


def pch_support(nvcc, work):
    """What this nvcc offers: PCH options in its help, and whether cicc writes a PCH."""
    help_text = run([nvcc, "--help"]).stdout
    options = sorted({w for w in help_text.split() if "pch" in w.lower()})
    unit = work / "probe.cu"
    unit.write_text("#include <cuda/std/array>\n__global__ void k() {}\n")
    pch = work / "probe.pch"
    r = run([nvcc, "-cubin", "-arch=sm_90", "-Xcicc", f"--create_pch={pch}", "-o",
             work / "probe.cubin", unit])
    return {"nvcc_pch_options": options, "xcicc_create_pch_exit": r.returncode,
            "xcicc_create_pch_wrote_file": pch.exists()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tuner", required=True)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--heavy", action="store_true")
    ap.add_argument("--heavy-candidates", type=int, default=8,
                    help="with --heavy: how many of the candidates (the first) to compile")
    ap.add_argument("--phases", action="store_true")
    ap.add_argument("--nvrtc", action="store_true")
    ap.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                   "tune-bench-pch"))
    ap.add_argument("--json")
    args = ap.parse_args()
    work = Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)

    m, ids = candidates(args.tuner, args.manifest)
    nvcc = m["nvcc"]
    source = m["sources"][0]
    root = m["project_root"]
    rel = os.path.relpath(source, root)
    argv, units = None, []
    for config_id in ids:
        argv, unit = keyed(args.tuner, args.manifest, config_id)
        units.append(unit.replace(f'#include "{rel}"', f'#include "{source}"'))
    header_unit = f'#include "{source}"\n'
    results = {"support": pch_support(nvcc, work), "loadavg": os.getloadavg(), "kernels": []}
    results["kernels"].append(
        measure(m["kernel"], units, header_unit, argv, nvcc, work / m["kernel"], args.reps))
    if args.nvrtc:
        results["kernels"][-1]["nvrtc"] = nvrtc_times(nvcc, source, units, work / "pch-tile")
    if args.heavy:
        heavy = work / "tile_cub.cu"  # where NVRTC's -I finds CUB too
        heavy.write_text("".join(f"#include <cub/block/block_{h}.cuh>\n" for h in HEAVY) +
                         Path(source).read_text())
        hunits = [u.replace(f'#include "{source}"', f'#include "{heavy}"')
                  for u in units[:args.heavy_candidates]]
        results["kernels"].append(measure(m["kernel"] + "+cub", hunits, f'#include "{heavy}"\n',
                                          argv, nvcc, work / "heavy", args.reps))
        if args.nvrtc:
            results["kernels"][-1]["nvrtc"] = nvrtc_times(nvcc, heavy, hunits, work / "pch-cub")
    if args.phases:
        results["phases_ms"] = phases(argv, nvcc, work / m["kernel"] / "c0.cu", work)
        if args.heavy:
            results["phases_heavy_ms"] = phases(argv, nvcc, work / "heavy" / "c0.cu", work)
    results["loadavg_end"] = os.getloadavg()

    s = results["support"]
    print(f"nvcc PCH options in --help: {s['nvcc_pch_options'] or 'none'}; -Xcicc --create_pch "
          f"exit {s['xcicc_create_pch_exit']}, PCH written: {s['xcicc_create_pch_wrote_file']}")
    print("| kernel | candidates | compile s (sum of medians) | median per candidate s | "
          "headers only s | perfect-PCH bound |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for k in results["kernels"]:
        print(f"| {k['kernel']} | {k['candidates']} | {k['full_s']['sum']:.1f} | "
              f"{k['full_s']['median']:.2f} | {k['headers_s']:.2f} | {k['bound']:.2f}x |")
    for k in results["kernels"]:
        if "nvrtc" in k:
            n = k["nvrtc"]
            print(f"NVRTC {k['kernel']}: without a PCH {n['plain']['median_rest']:.3f} s per "
                  f"instance, with one {n['pch']['median_rest']:.3f} s after the first (which "
                  f"made it: {n['pch']['first']:.3f} s): {n['speedup_rest']:.2f}x")
    for key in ("phases_ms", "phases_heavy_ms"):
        if key in results:
            print(f"{key}: " + ", ".join(f"{n} {v:.0f}" for n, v in results[key].items()))
    print(f"load average {results['loadavg'][0]:.1f} at the start, "
          f"{results['loadavg_end'][0]:.1f} at the end; {args.reps} runs per candidate")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
