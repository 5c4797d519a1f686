#!/usr/bin/env python3
"""The measuring worker of the scaling simulation (scaling.py): it speaks the worker protocol
(tuner/core/search/worker_protocol.hpp), sleeps SIM_SECONDS per candidate (its GPU time, scaled) and
reports a deterministic median per config, so that every worker count finds the same winners.
A runoff costs two candidates' time."""
import json
import os
import sys
import time

SECONDS = float(os.environ.get("SIM_SECONDS", "0"))


def median(params):
    return 1.0 + ((params["C"] * 7919) % 1000) / 1000.0


def answer(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


answer({"protocol": 1, "ready": True, "pid": os.getpid(), "device": "Sim GPU",
        "driver": "0", "arch": "sm_90"})
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "measure":
        time.sleep(SECONDS)
        m = median(req["config"])
        answer({"state": "measured", "median_ms": m, "min_ms": m, "reps": 10, "batched": False,
                "warnings": [], "device": "Sim GPU"})
    elif req["op"] == "runoff":
        time.sleep(2 * SECONDS)
        a = median(req["incumbent"]["config"])
        b = median(req["challenger"]["config"])
        answer({"incumbent_ms": [a] * 20, "challenger_ms": [b] * 20, "batched": False,
                "warnings": [], "device": "Sim GPU"})
