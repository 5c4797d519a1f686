#!/usr/bin/env python3
"""Checks examples/tile: the cubins tune_embed_winners linked into tile_example.

Without --run (CPU): every embedded image's bytes (hashed by the program itself) have the
SHA-256 its cache entry recorded and the cached cubin has, under the cache key the committed
record names, which is also the key `tuner key` computes now; one image per bucket of the
record. With --run (GPU): the program runs its shapes through the winners and each line names
the winner the record holds for its bucket.
"""
import argparse
import hashlib
import json
import os
import pathlib
import re
import subprocess
import sys


def fail(message):
    print(f"embed_test: FAIL: {message}")
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--example", required=True)
    ap.add_argument("--tuner", required=True)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--run", action="store_true")
    args = ap.parse_args()

    record = json.loads(pathlib.Path(args.record).read_text())
    winners = {e["bucket"]: e for e in record["entries"]}

    if args.run:
        out = subprocess.run([args.example], capture_output=True, text=True)
        print(out.stdout + out.stderr)
        if out.returncode != 0:
            fail(f"tile_example exited with {out.returncode}")
        lines = re.findall(r"bucket '([^']+)', winner (\S+) \((\S+), (\S+)\)", out.stdout)
        if len(lines) != 3:
            fail(f"expected 3 shape lines, got {len(lines)}")
        for bucket, config, arch, symbol in lines:
            if config != winners[bucket]["config"]["id"]:
                fail(f"bucket {bucket} ran {config}, the record's winner is "
                     f"{winners[bucket]['config']['id']}")
            if arch != record["arch"]:
                fail(f"ran the image of {arch}, the record is of {record['arch']}")
        print("embed_test: the recorded winners ran and computed C correctly")
        return

    manifest = json.loads(pathlib.Path(args.manifest).read_text())
    cache = pathlib.Path(os.environ.get("TUNE_CACHE_DIR") or manifest["cache_dir"])
    out = subprocess.run([args.example, "--images"], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"tile_example --images exited with {out.returncode}: {out.stderr}")
    images = [line.split() for line in out.stdout.splitlines() if line.strip()]
    if sorted(i[1] for i in images) != sorted(winners):
        fail(f"embedded buckets {[i[1] for i in images]}, record buckets {sorted(winners)}")
    for arch, bucket, config, linked, recorded, key in images:
        entry = winners[bucket]
        if arch != record["arch"] or config != entry["config"]["id"]:
            fail(f"{bucket}: embedded {arch} {config}, record {record['arch']} "
                 f"{entry['config']['id']}")
        if key != entry["cache_key"]["digest"]:
            fail(f"{bucket}: embedded key {key}, record key {entry['cache_key']['digest']}")
        now = subprocess.run([args.tuner, "key", "--manifest", args.manifest, "--config", config,
                              "--arch", arch], capture_output=True, text=True, check=True)
        if now.stdout.split()[0] != key:
            fail(f"{bucket}: tuner key gives {now.stdout.split()[0]}, embedded {key}")
        cubin = hashlib.sha256((cache / f"{key}.cubin").read_bytes()).hexdigest()
        cached = json.loads((cache / f"{key}.json").read_text())["cubin_sha256"]
        if not (linked == recorded == cubin == cached):
            fail(f"{bucket}: linked {linked}, generated {recorded}, cached cubin {cubin}, "
                 f"entry {cached}")
        print(f"{arch} {bucket} {config}: {linked} == cache {key[:16]}...")
    print(f"embed_test: {len(images)} embedded images are the cached cubins of the record")


if __name__ == "__main__":
    main()
