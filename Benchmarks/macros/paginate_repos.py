"""Benchmark: list(github.repos("many")), 20 pages of 100 repositories (Link rel="next").

    apimacro run [--no-cache] paginate_repos.py PASSES
(APIMACRO_GITHUB_URL points at the harness's nginx.) One warm pass, then PASSES
timed passes, each checked to yield the 2,000 distinct repositories; prints one
JSON line.
"""
import json
import sys
import time

import apimacro  # noqa: F401
from apimacro import github

ITEMS, PAGES = 2000, 20
passes = int(sys.argv[1]) if len(sys.argv) > 1 else 1


def run():
    repos = list(github.repos("many"))
    if len(repos) != ITEMS or len({r["id"] for r in repos}) != ITEMS:
        raise RuntimeError(f"github.repos('many') yielded {len(repos)} repositories, expected {ITEMS} distinct")


run()
start = time.perf_counter()
for _ in range(passes):
    run()
seconds = time.perf_counter() - start
print(json.dumps({"name": "pagination/apimacro", "count": ITEMS * passes, "seconds": seconds,
                  "pages": PAGES * passes, "passes": passes}), flush=True)
