"""Benchmark: Response.json() of a 5 MB body already fetched, COUNT times.

    apimacro run [--no-cache] decode_big.py URL COUNT WARMUP
Fetches URL once (apimacro.get), then times resp.json(). If json() hands back the
same object twice it caches, and a rate would be meaningless: prints "cached".
Prints one JSON line.
"""
import json
import sys
import time

import apimacro

url, count, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
resp = apimacro.get(url)
size = len(resp.content)
a = resp.json()
b = resp.json()
if not isinstance(a, list) or not a:
    raise RuntimeError("big.json did not decode to a non-empty list")
if a is b:
    print(json.dumps({"name": "decoding/apimacro", "cached": True, "bytes": size}), flush=True)
    sys.exit(0)
del a, b
for _ in range(warmup):
    resp.json()
start = time.perf_counter()
for _ in range(count):
    resp.json()
seconds = time.perf_counter() - start
print(json.dumps({"name": "decoding/apimacro", "count": count, "seconds": seconds, "bytes": size}), flush=True)
