"""Reference and memory audit of the bridge: CALLS calls of the native functions (every argument
type, every error path) answered from a HAR replay, then Python's live objects
(len(gc.get_objects())) and blocks (sys.getallocatedblocks()) must be back where they started.

Run by Benchmarks/audit_refs.py with --replay of the merged cassettes. --plant-leak keeps one
object per call on purpose: the negative control that proves the audit sees a leak.
"""
import gc
import itertools
import json
import sys

import apimacro
from apimacro import github, instagram, shortener

PLANTED = []


def expect(exception, function, *args, **kwargs):
    try:
        function(*args, **kwargs)
    except exception:
        return
    raise AssertionError(f"{function!r}{args} did not raise {exception.__name__}")


weather = apimacro.client("openweather")
hackernews = apimacro.client("hackernews")

# Each step calls native code once or a few times; together they cover every argument type the
# module takes and each error path a macro can reach.
STEPS = [
    lambda i: github.user("octocat")["login"],
    lambda i: expect(TypeError, github.user, 12345),
    lambda i: expect(TypeError, github.user),
    lambda i: expect(TypeError, github.user, "octocat", bogus=True),
    lambda i: list(itertools.islice(github.repos("octocat", type="owner"), 3)),
    lambda i: github.get("/users/octocat", params=None, headers={"X-Audit": str(i)}),
    lambda i: expect(apimacro.OfflineError, github.get, f"/users/nobody-{i % 7}"),
    lambda i: expect(apimacro.OfflineError, github.user, "ghost"),
    lambda i: github.rate_limit,
    lambda i: list(instagram.followed_by(limit=30)),
    lambda i: instagram.logged_in,
    lambda i: expect(ValueError, shortener.shorten, "not a url"),
    lambda i: expect(TypeError, shortener.expand, 3.5),
    lambda i: apimacro.get("https://api.github.com/users/octocat").json(),
    lambda i: apimacro.request("GET", "https://api.github.com/users/octocat", params=None,
                               headers={"Accept": "application/json"}, timeout=5.0, check=False).text,
    lambda i: expect(apimacro.OfflineError, apimacro.post, "https://example.invalid/x", json={"a": [1, 2.5, None, True]}),
    lambda i: expect(apimacro.OfflineError, apimacro.post, "https://example.invalid/x", data={"k": "v"}),
    lambda i: expect(apimacro.OfflineError, apimacro.post, "https://example.invalid/x", data=b"\x00\xff"),
    lambda i: expect(apimacro.OfflineError, apimacro.post, "https://example.invalid/x",
                     files={"f": ("a.txt", b"abc", "text/plain")}, auth=("user", "pass")),
    lambda i: expect(TypeError, apimacro.request, "GET", 42),
    lambda i: expect(ValueError, apimacro.request, "GET", "ftp://example.com/"),
    lambda i: apimacro.map(github.user, ["octocat", "octocat"], concurrency=2),
    lambda i: expect(apimacro.OfflineError, apimacro.map, github.user, ["octocat", "ghost"], concurrency=2),
    lambda i: apimacro.map(len, ["ab", "c"], concurrency=2),
    lambda i: list(weather.find(q="Altstadt", cnt=5, type="like", units="metric")),
    lambda i: expect(ValueError, weather.find, q=1),
    lambda i: expect(ValueError, weather.find),
    lambda i: list(hackernews.search(query="swift", tags="story", limit=30)),
    lambda i: expect(LookupError, apimacro.client, "no-such-plugin"),
]


def run(calls, plant):
    for i in range(calls):
        result = STEPS[i % len(STEPS)](i)
        if plant and i % 10 == 0:
            PLANTED.append([result, i])


def live():
    gc.collect()
    return len(gc.get_objects()), sys.getallocatedblocks()


def main(calls: int = 1_000_000, plant_leak: bool = False):
    """Runs the audit; prints one JSON line (objects and blocks before and after)."""
    run(len(STEPS) * 200, False)  # warm-up: imports, caches, interned strings
    objects_before, blocks_before = live()
    run(calls, plant_leak)
    objects_after, blocks_after = live()
    print(json.dumps({"calls": calls, "steps": len(STEPS), "objects_before": objects_before,
                      "objects_after": objects_after, "blocks_before": blocks_before, "blocks_after": blocks_after,
                      "planted": len(PLANTED)}))
