#!/usr/bin/python3
"""Start-up cost: `apimacro run` of an empty macro against the system python3.

Run with Debian's /usr/bin/python3 (the interpreter apimacro embeds) on a
release build:  Benchmarks/startup.py   (builds it with `swift build -c release`,
unless APIMACRO_BIN names a binary to measure).
The C embedder (Benchmarks/peers/embed_floor.c, built here with cc and pkg-config) is the
floor of any host of the shared libpython: what it costs over `python3 -c pass` is the
shared library's loading and relocation, not apimacro's.
Prints each command's median and best wall time over N runs, its median CPU time
(user + system, from the children's rusage: what a busy machine changes least) and
the ratios to `python3 -c pass`. Instruction counts, steadier still, come from
callgrind (docs/performance.md, Start-up).
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = int(os.environ.get("RUNS", "40"))


def cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(command):
    for _ in range(3):  # warm the page cache (and apimacro's compiled-code cache)
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    times, cpus = [], []
    for _ in range(RUNS):
        cpu_before = cpu()
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
        cpus.append(cpu() - cpu_before)
    return statistics.median(times), min(times), statistics.median(cpus)


def main():
    binary = os.environ.get("APIMACRO_BIN")
    if not binary:
        subprocess.run(["swift", "build", "-c", "release", "--product", "apimacro"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        binary = os.path.join(ROOT, ".build", "release", "apimacro")
    empty = os.path.join(ROOT, "Benchmarks", "macros", "empty.py")
    scratch = tempfile.mkdtemp(prefix="apimacro-startup-")
    floor = os.path.join(scratch, "embed_floor")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "python3-embed"], check=True,
                           capture_output=True, text=True).stdout.split()
    subprocess.run(["cc", "-O2", "-o", floor, os.path.join(ROOT, "Benchmarks", "peers", "embed_floor.c"), *flags],
                   check=True)
    rows = [
        ("/usr/bin/python3 -c pass", ["/usr/bin/python3", "-c", "pass"]),
        ("/usr/bin/python3 empty.py", ["/usr/bin/python3", empty]),
        ("C embedder of libpython (floor)", [floor]),
        ("apimacro run empty.py", [binary, "run", empty]),
        ("apimacro run --no-cache empty.py", [binary, "run", "--no-cache", empty]),
    ]
    results = {name: measure(command) for name, command in rows}
    base, base_cpu = results["/usr/bin/python3 -c pass"][0], results["/usr/bin/python3 -c pass"][2]
    print(f"{'command':34} {'median ms':>10} {'best ms':>8} {'ratio':>6} {'CPU ms':>7} {'ratio':>6}"
          f"   ({RUNS} runs, {sys.version.split()[0]})")
    for name, (median, best, cpu_time) in results.items():
        print(f"{name:34} {median * 1000:10.1f} {best * 1000:8.1f} {median / base:6.2f} "
              f"{cpu_time * 1000:7.1f} {cpu_time / base_cpu:6.2f}")
    os.remove(floor)
    os.rmdir(scratch)


if __name__ == "__main__":
    main()
