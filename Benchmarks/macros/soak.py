"""Fault soak: CALLS GETs through the real pipeline, 8 at a time, against a server that fails at random.

Every call must end in a result or one of the exceptions SPEC §3 names for the faults the
server injects; the macro prints one JSON line with the tally and the memory high-water
marks after the first 2,000 calls and at the end.
"""
import collections
import json
import os

import apimacro

BASE = os.environ["SOAK_URL"]
CALLS = int(os.environ.get("SOAK_CALLS", "20000"))
WORKERS = int(os.environ.get("SOAK_WORKERS", "8"))
FIRST = min(2000, CALLS)


def call(index):
    """One GET; its outcome as a word: "result", or the exception class's name."""
    try:
        body = apimacro.get(f"{BASE}/users/octocat", params={"n": index}, timeout=1.0).json()
    except apimacro.APIError as error:
        return type(error).__name__
    return "result" if body.get("login") == "octocat" else "wrong body"


def memory():
    """VmHWM and VmRSS of this process, in KiB."""
    values = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, rest = line.partition(":")
            if name in ("VmHWM", "VmRSS"):
                values[name] = int(rest.split()[0])
    return values


outcomes = collections.Counter(apimacro.map(call, range(FIRST), concurrency=WORKERS))
at_first = memory()
outcomes.update(apimacro.map(call, range(FIRST, CALLS), concurrency=WORKERS))
at_end = memory()
print(json.dumps({"calls": CALLS, "outcomes": dict(outcomes), "memory_first": at_first, "memory_end": at_end,
                  "first": FIRST}))
