"""The fault soak (issue 8): 20,000 requests through apimacro's real pipeline against the
loopback test server in soak mode (5 % 503, 2 % resets, 2 % answers past the 1 s timeout,
1 % truncated bodies, 1 % 429 with retry-after), from 8 concurrent apimacro.map workers.

    swift build -c release --product apimacro && swift build -c release --product apimacro-testserver
    /usr/bin/python3 Benchmarks/soak.py [--calls 20000] [--workers 8] [--seed 1]

Passes (exit 0) when nothing crashed or hung, every call ended in a result or an exception
SPEC names for these faults (HTTPError, NetworkError, Timeout, RateLimited), results plus
exceptions equal the calls, and the peak RSS at the end is within 10 % of the peak after
the first 2,000 calls. Writes Benchmarks/results/soak-latest.json.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RELEASE = os.path.join(ROOT, ".build", "release")
RESULTS = os.path.join(HERE, "results", "soak-latest.json")
EXPECTED = {"result", "HTTPError", "NetworkError", "Timeout", "RateLimited"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--limit", type=float, default=1800, help="seconds before the run counts as hung")
    parser.add_argument("--build", default="release", help="release (default) or debug")
    args = parser.parse_args()
    global RELEASE
    RELEASE = os.path.join(ROOT, ".build", args.build)
    for binary in ("apimacro", "apimacro-testserver"):
        if not os.path.exists(os.path.join(RELEASE, binary)):
            sys.exit(f"soak: build first: swift build -c release --product {binary}")

    server = subprocess.Popen([os.path.join(RELEASE, "apimacro-testserver"), "--soak", str(args.seed)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = server.stdout.readline().strip().split("=", 1)[1]
        environment = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "SOAK_URL": url,
                       "SOAK_CALLS": str(args.calls), "SOAK_WORKERS": str(args.workers), "APIMACRO_MAX_WAIT": "5"}
        started = time.monotonic()
        try:
            run = subprocess.run([os.path.join(RELEASE, "apimacro"), "run", "--no-cache",
                                  os.path.join(HERE, "macros", "soak.py")],
                                 env=environment, capture_output=True, text=True, timeout=args.limit)
        except subprocess.TimeoutExpired:
            sys.exit(f"soak: FAILED: the run did not end within {args.limit:.0f} s (hung)")
        seconds = time.monotonic() - started
    finally:
        server.terminate()
        server.wait()

    problems = []
    if run.returncode != 0:
        problems.append(f"apimacro exited {run.returncode}: {run.stderr[-2000:]}")
        report = {}
    else:
        report = json.loads(run.stdout.strip().splitlines()[-1])
        outcomes = report["outcomes"]
        if sum(outcomes.values()) != args.calls:
            problems.append(f"results + exceptions = {sum(outcomes.values())}, not {args.calls}")
        unexpected = set(outcomes) - EXPECTED
        if unexpected:
            problems.append(f"outcomes SPEC does not name for these faults: {sorted(unexpected)}")
        first, end = report["memory_first"]["VmHWM"], report["memory_end"]["VmHWM"]
        if end > first * 1.10:
            problems.append(f"peak RSS grew from {first} KiB at {report['first']} calls to {end} KiB (> 10 %)")
    report.update({"seconds": round(seconds, 1), "seed": args.seed, "workers": args.workers,
                   "problems": problems})
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as out:
        json.dump(report, out, indent=2)

    print(f"soak: {args.calls} calls, {args.workers} workers, seed {args.seed}: {seconds:.1f} s")
    for name, count in sorted(report.get("outcomes", {}).items(), key=lambda item: -item[1]):
        print(f"  {name:<14}{count:>7}")
    if report.get("memory_first"):
        print(f"  peak RSS after {report['first']} calls: {report['memory_first']['VmHWM'] / 1024:.1f} MiB; "
              f"at the end: {report['memory_end']['VmHWM'] / 1024:.1f} MiB")
    for problem in problems:
        print("soak: FAILED:", problem)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
