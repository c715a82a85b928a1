"""Benchmark: list(github.repos("many")), 20 pages of 100 repositories (Link rel="next").

    apimacro run [--no-cache] paginate_repos.py PASSES
(APIMACRO_GITHUB_URL points at the harness's nginx.) One warm pass, then PASSES
timed passes, each checked to yield the 2,000 distinct repositories; prints one
JSON line (`thread_seconds`: the CPU time of the Python thread over the timed passes,
`time.thread_time()`; the pages ahead are fetched and scanned on other threads).
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
start, thread_start = time.perf_counter(), time.thread_time()
for _ in range(passes):
    run()
seconds, thread_seconds = time.perf_counter() - start, time.thread_time() - thread_start
print(json.dumps({"name": "pagination/apimacro", "count": ITEMS * passes, "seconds": seconds,
                  "thread_seconds": thread_seconds, "pages": PAGES * passes, "passes": passes}), flush=True)
