#!/usr/bin/python3
"""Issue 38's speed rows: a state commit, and upserting GitHub-shaped rows into SQLite against
sqlite-utils (PyPI) on the same rows.

    swift build -c release --product apimacro
    /usr/bin/python3 Benchmarks/store.py [--rows 100000] [--reps 3] [--build release]
        [--python PATH]   a Python with sqlite-utils (default: Benchmarks/.venv/bin/python,
                          which Benchmarks/run makes from requirements.txt)

For each rep, interleaved, in a fresh folder: apimacro (`apimacro.output(rows, to="bench.db",
table="users", key="id")`, then the commit that writes them) and sqlite-utils
(`db["users"].upsert_all(rows, pk="id", alter=True)` in one transaction), each timed inside
its own process from the rows in memory to the rows committed; first into a new table
(insert), then again over the same rows (update). Prints each side's median rows per second
and apimacro's ratio. Then 300 `apimacro.state.commit()`s of a two-key state (the median and
90th percentile; each is one SQLite transaction with its fsync, so the disk sets the floor:
Debian's sqlite3 committing the same write from Python is printed beside it).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

ROWS = """
rows = [{"id": i, "login": f"user{i}", "node_id": f"MDQ6VXNlcj{i}",
         "avatar_url": f"https://avatars.githubusercontent.com/u/{i}?v=4",
         "html_url": f"https://github.com/user{i}", "type": "User", "site_admin": False, "score": 1.5 * i,
         "starred_at": "2024-01-01T00:00:00Z", "repo": {"full_name": "octocat/Hello-World", "id": 1296269}}
        for i in range(N)]
"""

APIMACRO = """
import apimacro, sys, time
N = int(sys.argv[1])
""" + ROWS + """
start = time.perf_counter()
apimacro.output(rows, to="bench.db", table="users", key="id")
apimacro.state.commit()
print(time.perf_counter() - start)
"""

SQLITE_UTILS = """
import sqlite_utils, sys, time
N = int(sys.argv[1])
""" + ROWS + """
db = sqlite_utils.Database("su.db")
start = time.perf_counter()
with db.conn:
    db["users"].upsert_all(rows, pk="id", alter=True)
print(time.perf_counter() - start)
"""

STATE = """
import apimacro, time
apimacro.state["n"] = 0
apimacro.state.commit()
times = []
for i in range(300):
    apimacro.state["n"] = i
    apimacro.state["cursor"] = {"at": "2024-01-01T00:00:00Z", "seen": list(range(10))}
    start = time.perf_counter()
    apimacro.state.commit()
    times.append(time.perf_counter() - start)
times.sort()
print(times[150] * 1000, times[270] * 1000)
"""

SQLITE_FLOOR = """
import sqlite3, time
db = sqlite3.connect("floor.db", isolation_level=None)
db.execute("CREATE TABLE state (macro TEXT, key TEXT, value TEXT, PRIMARY KEY (macro, key))")
times = []
for i in range(300):
    start = time.perf_counter()
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT OR REPLACE INTO state VALUES ('bench', 'n', ?)", (str(i),))
    db.execute("COMMIT")
    times.append(time.perf_counter() - start)
times.sort()
print(times[150] * 1000, times[270] * 1000)
"""


def timed(command, folder, env=None):
    result = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"store.py: {' '.join(command[:3])} failed:\n{result.stderr}")
    return [float(word) for word in result.stdout.split()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--build", default="release")
    parser.add_argument("--python", default=os.path.join(HERE, ".venv", "bin", "python"))
    args = parser.parse_args()
    binary = os.path.join(ROOT, ".build", args.build, "apimacro")
    if not os.path.exists(binary):
        sys.exit(f"store.py: no {binary}; swift build -c {args.build} --product apimacro")
    check = subprocess.run([args.python, "-c", "import sqlite_utils"], capture_output=True, check=False)
    if check.returncode != 0:
        sys.exit(f"store.py: {args.python} has no sqlite_utils; Benchmarks/run makes Benchmarks/.venv with it")
    results = {("apimacro", "insert"): [], ("apimacro", "update"): [],
               ("sqlite-utils", "insert"): [], ("sqlite-utils", "update"): []}
    with tempfile.TemporaryDirectory(prefix="apimacro-store-bench-") as work:
        env = {"PATH": "/usr/bin:/bin", "HOME": work, "LANG": "C.UTF-8"}
        for name, text in [("upsert.py", APIMACRO), ("su.py", SQLITE_UTILS), ("state.py", STATE),
                           ("floor.py", SQLITE_FLOOR)]:
            with open(os.path.join(work, name), "w", encoding="utf-8") as file:
                file.write(text)
        for _ in range(args.reps):
            for path in ("bench.db", "su.db"):
                if os.path.exists(os.path.join(work, path)):
                    os.remove(os.path.join(work, path))
            for phase in ("insert", "update"):
                run = [binary, "run", "--state-key", "bench", "upsert.py", str(args.rows)]
                results[("apimacro", phase)] += timed(run, work, env)
                results[("sqlite-utils", phase)] += timed([args.python, "su.py", str(args.rows)], work)
        state = timed([binary, "run", "--state-key", "state", "state.py"], work, env)
        floor = timed(["/usr/bin/python3", "floor.py"], work)
    print(f"{args.rows:,} GitHub-shaped rows, median of {args.reps} (rows/s, higher is better):")
    for phase in ("insert", "update"):
        ours = args.rows / statistics.median(results[("apimacro", phase)])
        theirs = args.rows / statistics.median(results[("sqlite-utils", phase)])
        print(f"  {phase:<7} apimacro {ours:>10,.0f}   sqlite-utils {theirs:>10,.0f}   ratio {ours / theirs:.2f}")
    print(f"state commit: median {state[0]:.3f} ms, p90 {state[1]:.3f} ms "
          f"(sqlite3's own commit of one row here: median {floor[0]:.3f} ms, p90 {floor[1]:.3f} ms)")


if __name__ == "__main__":
    main()
