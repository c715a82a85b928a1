"""Benchmark: github.user("octocat") COUNT times, one after another.

    apimacro run [--no-cache] seq_user.py COUNT WARMUP
(APIMACRO_GITHUB_URL points at the harness's nginx.) Prints one JSON line.
"""
import json
import sys
import time

import apimacro  # noqa: F401  (the documented import; github is its client)
from apimacro import github

count, warmup = int(sys.argv[1]), int(sys.argv[2])


def run(n):
    for _ in range(n):
        user = github.user("octocat")
        if user["login"] != "octocat":
            raise RuntimeError(f"unexpected user object: {str(user)[:80]}")


run(warmup)
start = time.perf_counter()
run(count)
seconds = time.perf_counter() - start
print(json.dumps({"name": "sequential/apimacro", "count": count, "seconds": seconds}), flush=True)
