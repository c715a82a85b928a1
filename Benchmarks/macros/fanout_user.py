"""Benchmark: apimacro.map(github.user, ["octocat"] * COUNT, concurrency=32).

    apimacro run [--no-cache] fanout_user.py COUNT WARMUP
(APIMACRO_GITHUB_URL points at the harness's nginx.) Prints one JSON line.
"""
import json
import sys
import time

import apimacro
from apimacro import github

count, warmup = int(sys.argv[1]), int(sys.argv[2])


def run(n):
    users = apimacro.map(github.user, ["octocat"] * n, concurrency=32)
    if len(users) != n or any(u["login"] != "octocat" for u in users):
        raise RuntimeError(f"apimacro.map returned {len(users)} results, not {n} octocat users")


run(warmup)
start = time.perf_counter()
run(count)
seconds = time.perf_counter() - start
print(json.dumps({"name": "fan-out/apimacro", "count": count, "seconds": seconds}), flush=True)
