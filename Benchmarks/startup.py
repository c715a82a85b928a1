#!/usr/bin/python3
"""Start-up cost: `apimacro run` of an empty macro against the system python3.

Run with Debian's /usr/bin/python3 (the interpreter apimacro embeds) on a
release build:  Benchmarks/startup.py   (builds it with `swift build -c release`).
Prints each command's median and best wall time over N runs and the ratio.
"""
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = int(os.environ.get("RUNS", "40"))


def measure(command):
    for _ in range(3):  # warm the page cache
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def main():
    subprocess.run(["swift", "build", "-c", "release", "--product", "apimacro"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    binary = os.path.join(ROOT, ".build", "release", "apimacro")
    empty = os.path.join(ROOT, "Benchmarks", "macros", "empty.py")
    rows = [
        ("/usr/bin/python3 -c pass", ["/usr/bin/python3", "-c", "pass"]),
        ("/usr/bin/python3 empty.py", ["/usr/bin/python3", empty]),
        ("apimacro run empty.py", [binary, "run", empty]),
    ]
    results = {name: measure(command) for name, command in rows}
    base = results["/usr/bin/python3 -c pass"][0]
    print(f"{'command':28} {'median ms':>10} {'best ms':>8} {'ratio':>6}   ({RUNS} runs, {sys.version.split()[0]})")
    for name, (median, best) in results.items():
        print(f"{name:28} {median * 1000:10.1f} {best * 1000:8.1f} {median / base:6.2f}")


if __name__ == "__main__":
    main()
