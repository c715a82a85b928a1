#!/usr/bin/python3
"""The rate-limit governor's cost per request against a loopback Redis (issue 17, aim < 0.1 ms).

    swift build -c release --product apimacro && swift build -c release --product apimacro-testserver
    /usr/bin/python3 Benchmarks/governor.py [--count 3000] [--reps 5] [--build release]

Starts the loopback test server and a `redis-server` (Debian's) on free loopback ports, then
runs Benchmarks/macros/seq_user.py (COUNT sequential github.user calls, timed inside the
macro after a warm-up) with --no-cache in three modes, interleaved, REPS times each:

- off: no APIMACRO_SHARED_STATE (no Redis code runs);
- governor: APIMACRO_SHARED_STATE set: one budget reservation and one record per request,
  two EVALSHA round trips;
- governor+limits: also APIMACRO_MAX_CONCURRENCY=64 and APIMACRO_MAX_RATE=1000000 (a lease
  and the pace in the same scripts; a 1 µs pace, which a sequential loop never waits for).

Prints each mode's median wall milliseconds per request, the CPU apimacro spent per request
(user + system, from getrusage: the warm-up and start-up are included, the same in every
mode) and the CPU Redis spent per request (INFO cpu), and their differences from "off": the
governor's cost per request. On a busy machine the wall difference is mostly waiting for
the scheduler to run redis-server; the CPU columns are the work. Then:

- scripts: the governor's two Lua scripts (read from Sources/WebAPI/SharedState/
  GovernorScripts.swift) timed by `redis-benchmark` with one client and no pipelining, on
  their common path (a known budget: reserve one unit, record an answer's headers). One
  request costs one of each: the sum is the governor's Redis cost per request.
"""
import argparse
import json
import os
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(folder):
    port = free_port()
    log = os.path.join(folder, "redis.log")
    process = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no", "--dir", folder, "--logfile", log],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if os.path.exists(log) and "Ready to accept connections" in open(log).read():
            return process, port
        if process.poll() is not None:
            sys.exit(f"governor: redis-server exited: {open(log).read()[-300:]}")
        time.sleep(0.02)
    process.kill()
    sys.exit("governor: redis-server did not start in 60 s")


def scripts():
    """The reserve and record scripts' text, as the Swift multi-line literals hold them."""
    source = open(os.path.join(ROOT, "Sources", "WebAPI", "SharedState", "GovernorScripts.swift")).read()
    found = {}
    for name in ("reserve", "record"):
        match = re.search(r"static let " + name + r' = RedisScript\(\n\s*"""\n(.*?)\n(\s*)"""', source, re.S)
        indent = len(match.group(2))
        found[name] = "\n".join(line[indent:] for line in match.group(1).split("\n"))
    return found


def script_costs(port, calls):
    """Milliseconds per call of reserve and record on their common path, one client."""
    def cli(*words):
        return subprocess.run(["redis-cli", "-p", str(port), *words], capture_output=True, text=True, check=True).stdout.strip()
    reset = str(int(time.time()) + 3600)
    state, leases = "{apimacro:bench}:limits", "{apimacro:bench}:leases"
    cli("HSET", state, "route:users", "core", "core:remaining", "1000000000", "core:reset", reset)
    text = scripts()
    digests = {name: cli("SCRIPT", "LOAD", body) for name, body in text.items()}
    commands = {
        "GET (baseline)": ["GET", "{apimacro:bench}:nothing"],
        "reserve": ["EVALSHA", digests["reserve"], "2", state, leases, "users", "lease-1", "64", "40000", "1", "35000"],
        "record": ["EVALSHA", digests["record"], "2", state, leases, "users", "lease-1", "0", "core", "1", "1", "5000",
                   "4999", reset, "core"],
    }
    costs = {}
    cli("CONFIG", "RESETSTAT")
    for name, command in commands.items():
        out = subprocess.run(["redis-benchmark", "-p", str(port), "-c", "1", "-n", str(calls), "-q", *command],
                             capture_output=True, text=True, check=True).stdout
        rps = float(re.findall(r"([0-9.]+) requests per second", out)[-1])
        costs[name] = 1000 / rps
        # Redis's own time inside the command (no network, no scheduling): INFO commandstats.
        stats = cli("INFO", "commandstats")
        command_name = command[0].lower()
        found = re.search(r"cmdstat_" + command_name + r":calls=(\d+),usec=(\d+),usec_per_call=([0-9.]+)", stats)
        if found:
            costs[name + " (in Redis)"] = float(found.group(3)) / 1000
        cli("CONFIG", "RESETSTAT")
    return costs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--build", default="release", help="release (default) or debug")
    parser.add_argument("--calls", type=int, default=50000, help="calls of each script in the scripts part")
    args = parser.parse_args()
    binaries = os.path.join(ROOT, ".build", args.build)
    for binary in ("apimacro", "apimacro-testserver"):
        if not os.path.exists(os.path.join(binaries, binary)):
            sys.exit(f"governor: build first: swift build -c {args.build} --product {binary}")
    folder = tempfile.mkdtemp(prefix="apimacro-governor-")
    redis, port = start_redis(folder)
    try:
        base = {"PATH": "/usr/bin:/bin", "HOME": folder, "APIMACRO_GITHUB_TOKEN": "ghp_benchmarkToken0123456789",
                # GitHub's secondary limits would pace 3,200 GETs to 900 a minute.
                "APIMACRO_GITHUB_PACE": "off"}
        shared = {"APIMACRO_SHARED_STATE": f"redis://127.0.0.1:{port}/0"}
        modes = {
            "off": base,
            "governor": {**base, **shared},
            "governor+limits": {**base, **shared, "APIMACRO_MAX_CONCURRENCY": "64", "APIMACRO_MAX_RATE": "1000000"},
        }
        times = {name: [] for name in modes}
        cpu = {name: [] for name in modes}
        redis_cpu = {name: [] for name in modes}

        def redis_seconds():
            info = subprocess.run(["redis-cli", "-p", str(port), "INFO", "cpu"], capture_output=True, text=True).stdout
            return sum(float(v) for k, v in re.findall(r"(used_cpu_(?:sys|user)):([0-9.]+)", info))
        for _ in range(args.reps):
            for name, environment in modes.items():
                # A fresh server (and budget) per run: the test server allows 5,000 requests an hour.
                server = subprocess.Popen([os.path.join(binaries, "apimacro-testserver")], stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, text=True)
                url = server.stdout.readline().strip().split("=", 1)[1]
                subprocess.run(["redis-cli", "-p", str(port), "FLUSHALL"], capture_output=True, check=True)
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                redis_before = redis_seconds()
                try:
                    run = subprocess.run([os.path.join(binaries, "apimacro"), "run", "--no-cache",
                                          os.path.join(HERE, "macros", "seq_user.py"), str(args.count), str(args.warmup)],
                                         env={**environment, "APIMACRO_GITHUB_URL": url}, capture_output=True, text=True,
                                         timeout=600)
                finally:
                    server.terminate()
                    server.wait()
                if run.returncode != 0 or run.stderr:
                    sys.exit(f"governor: {name} failed ({run.returncode}): {run.stderr[-500:]}")
                line = json.loads(run.stdout.strip().splitlines()[-1])
                times[name].append(line["seconds"] * 1000 / line["count"])
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                calls = args.count + args.warmup
                # Children's CPU includes the test server's (also a child): the same work in every mode.
                spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                cpu[name].append(spent * 1000 / calls)
                redis_cpu[name].append((redis_seconds() - redis_before) * 1000 / calls)
        off = statistics.median(times["off"])
        print(f"{args.count} sequential github.user calls, {args.build} build, median of {args.reps}:")
        cpu_off = statistics.median(cpu["off"])
        print(f"{'mode':<18}{'wall ms/req':>12}{'(+off)':>10}{'CPU ms/req':>12}{'(+off)':>10}{'Redis CPU':>11}")
        for name, values in times.items():
            median, used = statistics.median(values), statistics.median(cpu[name])
            extra = "" if name == "off" else f"{median - off:+.3f}"
            extra_cpu = "" if name == "off" else f"{used - cpu_off:+.3f}"
            print(f"{name:<18}{median:>12.3f}{extra:>10}{used:>12.3f}{extra_cpu:>10}{statistics.median(redis_cpu[name]):>11.4f}")
        costs = script_costs(port, args.calls)
        print(f"\nthe governor's scripts, redis-benchmark, 1 client, {args.calls} calls each:")
        for name, cost in costs.items():
            print(f"{name:<18}{cost:>12.4f} ms")
        print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print("per request: one reserve waited for; the record is written without waiting for its answer")
    finally:
        redis.terminate()
        redis.wait()


if __name__ == "__main__":
    main()
