"""Reference and memory audit of the Python bridge (issue 8).

    swift build -c release --product apimacro
    /usr/bin/python3 Benchmarks/audit_refs.py [--calls 1000000] [--build release|debug]

Runs Benchmarks/macros/audit_refs.py in apimacro, answered from the project's cassettes merged
into one HAR (no network): CALLS calls of the native functions with every argument type and
every error path. Passes when Python's live objects (len(gc.get_objects())) come back within
OBJECTS_SLACK of where they started and its allocated blocks (sys.getallocatedblocks())
within BLOCKS_SLACK (caches settle; a leak grows with the calls). Then the negative control:
the same audit with one object kept every 10 calls must be seen as a leak.
Writes Benchmarks/results/audit-refs-latest.json.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results", "audit-refs-latest.json")
OBJECTS_SLACK = 50
BLOCKS_SLACK = 2000


def merged_cassettes(folder):
    entries = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "cassettes", "*.har"))) + sorted(
            glob.glob(os.path.join(ROOT, "plugins", "*", "cassettes", "*.har"))):
        with open(path) as har:
            entries += json.load(har)["log"]["entries"]
    path = os.path.join(folder, "audit.har")
    with open(path, "w") as out:
        json.dump({"log": {"version": "1.2", "creator": {"name": "audit_refs", "version": "1"}, "entries": entries}}, out)
    return path


def audit(binary, har, calls, plant, home):
    started = time.monotonic()
    arguments = [binary, "run", "--replay", har, os.path.join(HERE, "macros", "audit_refs.py"), "--calls", str(calls)]
    if plant:
        arguments.append("--plant-leak")
    run = subprocess.run(arguments, env={"PATH": "/usr/bin:/bin", "HOME": home}, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"audit_refs: the audit macro failed (exit {run.returncode}):\n{run.stderr[-3000:]}")
    report = json.loads(run.stdout.strip().splitlines()[-1])
    report["seconds"] = round(time.monotonic() - started, 1)
    report["objects_grown"] = report["objects_after"] - report["objects_before"]
    report["blocks_grown"] = report["blocks_after"] - report["blocks_before"]
    report["leak_seen"] = report["objects_grown"] > OBJECTS_SLACK or report["blocks_grown"] > BLOCKS_SLACK
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--build", default="release")
    args = parser.parse_args()
    binary = os.path.join(ROOT, ".build", args.build, "apimacro")
    if not os.path.exists(binary):
        sys.exit(f"audit_refs: build first: swift build -c {args.build} --product apimacro")
    with tempfile.TemporaryDirectory() as folder:
        har = merged_cassettes(folder)
        clean = audit(binary, har, args.calls, False, folder)
        control = audit(binary, har, max(10_000, args.calls // 10), True, folder)
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as out:
        json.dump({"audit": clean, "negative_control": control}, out, indent=2)
    for name, report in (("audit", clean), ("negative control (leak planted)", control)):
        print(f"{name}: {report['calls']:,} calls in {report['seconds']} s; live objects "
              f"{report['objects_before']:,} → {report['objects_after']:,} ({report['objects_grown']:+,}), "
              f"allocated blocks {report['blocks_before']:,} → {report['blocks_after']:,} ({report['blocks_grown']:+,})")
    problems = []
    if clean["leak_seen"]:
        problems.append(f"the audit grew past its slack ({OBJECTS_SLACK} objects, {BLOCKS_SLACK} blocks)")
    if not control["leak_seen"]:
        problems.append("the negative control's planted leak was not seen: the audit is blind")
    for problem in problems:
        print("audit_refs: FAILED:", problem)
    if not problems:
        print("audit_refs: ok (the bridge returns every object; the planted leak is seen)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
