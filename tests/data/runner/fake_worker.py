#!/usr/bin/env python3
"""A stand-in measuring worker for the CPU tests of `tuner run`: it speaks the worker protocol
(tuner/core/search/worker_protocol.hpp) and misbehaves on purpose, by the candidate's BLOCK:

  BLOCK=128   crashes (SIGSEGV) after writing 'fake: segfault in tile loop' to stderr
  BLOCK=256   hangs
  BLOCK=1024  answers a line that is not JSON
  any other   measured, median 1000 / BLOCK ms (so larger is faster)

In the bucket named by FAKE_BROKEN_BUCKET every candidate is invalid ('check failed'); in the
one named by FAKE_HARNESS_TYPO every candidate fails as a harness that reads a misspelt param
does (a harness failure, with the harness's file and line). With
FAKE_HANG_ALL set every measure request hangs; with FAKE_TAME set none misbehaves (BLOCK=128,
256 and 1024 are measured too); FAKE_SLEEP=<s> makes each measure take that long;
FAKE_PROTOCOL=<n> says hello in another protocol version; FAKE_LATIN1 puts a Latin-1 byte in
the crash message; FAKE_DEVICES=<n>=<name>,... names the device of --device <n> (default 'Fake
GPU'). Each start appends 'start <pid>' and 'bucket <name>' to FAKE_SIDE (and 'device <n>' when
given --device), each request 'measure <config id>' or 'runoff <incumbent> <challenger>'.
"""
import json
import os
import signal
import sys
import time

args = sys.argv[1:]
bucket = args[args.index("--bucket") + 1] if "--bucket" in args else ""
side = os.environ.get("FAKE_SIDE")


def note(text):
    if side:
        with open(side, "a") as f:
            f.write(text + "\n")


def answer(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def config_id(params):
    return ",".join(f"{k}={json.dumps(params[k])}" for k in sorted(params))


note(f"start {os.getpid()}")
note(f"bucket {bucket}")
device = args[args.index("--device") + 1] if "--device" in args else None
if device is not None:
    note(f"device {device}")
names = dict(item.split("=", 1) for item in os.environ.get("FAKE_DEVICES", "").split(",") if item)
device_name = names.get(device, "Fake GPU")
if "--arch" not in args:
    args.append("--arch")
if args[args.index("--arch") + 1:][:1] != ["sm_90"]:
    answer({"protocol": 1, "ready": False, "error": f"bad worker arguments: {args}"})
    sys.exit(2)
answer({"protocol": int(os.environ.get("FAKE_PROTOCOL", "1")), "ready": True, "pid": os.getpid(),
        "device": device_name, "driver": "999.1", "arch": "sm_90"})

for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "measure":
        params = req["config"]
        note(f"measure {config_id(params)}")
        block = params["BLOCK"]
        if os.environ.get("FAKE_HANG_ALL"):
            time.sleep(3600)
        if os.environ.get("FAKE_SLEEP"):
            time.sleep(float(os.environ["FAKE_SLEEP"]))
        if os.environ.get("FAKE_TAME") and block in (128, 256, 1024):
            block = 1  # measured like any other, below
        if bucket == os.environ.get("FAKE_BROKEN_BUCKET"):
            answer({"state": "invalid", "reason": "check failed"})
        elif bucket == os.environ.get("FAKE_HARNESS_TYPO"):
            why = (f"saxpy_harness.cpp:12: config '{config_id(params)}' has no value 'BLOK' "
                   "(it has: BLOCK)")
            answer({"state": "invalid", "reason": why, "harness_failure": why})
        elif block == 128:
            if os.environ.get("FAKE_LATIN1"):  # a Latin-1 byte, as a compiler or driver may write
                sys.stderr.buffer.write(b"fake: segfault in tile loop \xe9\n")
            else:
                sys.stderr.write("fake: segfault in tile loop\n")
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGSEGV)
        elif block == 256:
            time.sleep(3600)
        elif block == 1024:
            sys.stdout.write("nonsense\n")
            sys.stdout.flush()
        else:
            median = 1000.0 / params["BLOCK"]
            answer({"state": "measured", "median_ms": median, "min_ms": median * 0.95,
                    "reps": 50, "batched": False, "warnings": [], "device": device_name})
    elif req["op"] == "runoff":
        inc = req["incumbent"]["config"]
        ch = req["challenger"]["config"]
        note(f"runoff {config_id(inc)} {config_id(ch)}")
        a = 1000.0 / inc["BLOCK"]
        b = 1000.0 / ch["BLOCK"]
        answer({"incumbent_ms": [a * (1 + 0.001 * (i % 3)) for i in range(20)],
                "challenger_ms": [b * (1 + 0.001 * (i % 2)) for i in range(20)],
                "batched": False, "warnings": [], "device": device_name})
