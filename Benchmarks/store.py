#!/usr/bin/python3
"""Issue 38's speed rows: a state commit, and upserting GitHub-shaped rows into SQLite against
sqlite-utils (PyPI) and into PostgreSQL against psycopg's executemany, on the same rows.

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
Debian's sqlite3 committing the same write from Python is printed beside it), and the same
with the state in Redis (`APIMACRO_STATE=redis`, Debian's redis-server started here on a free
loopback port, no persistence: one round trip for the version, one for the script) and, with
--postgres, in PostgreSQL (`APIMACRO_STATE=postgresql://…`, fsync on: one transaction).
--state-only measures only the state commits (no sqlite-utils needed).

With --postgres, the same rows into one PostgreSQL server (Debian's, started here on a free
loopback port with initdb in a temporary folder, as the postgres user when run as root):
apimacro's `output(rows, to="postgresql://…", table="users", key="id")` and its commit against
psycopg 3's `executemany` of the same `INSERT … ON CONFLICT (id) DO UPDATE` (the nested value as
jsonb, one transaction), into a new table, then over the same rows.
"""
import argparse
import os
import pwd
import shutil
import socket
import time
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


APIMACRO_PG = """
import apimacro, sys, time
N = int(sys.argv[1])
""" + ROWS + """
start = time.perf_counter()
apimacro.output(rows, to=sys.argv[2], table="users", key="id")
apimacro.state.commit()
print(time.perf_counter() - start)
"""

PSYCOPG = """
import psycopg, sys, time
from psycopg.types.json import Jsonb
N = int(sys.argv[1])
""" + ROWS + """
COLUMNS = ["id", "login", "node_id", "avatar_url", "html_url", "type", "site_admin", "score", "starred_at", "repo"]
with psycopg.connect(sys.argv[2]) as conn:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS users_pg (id bigint PRIMARY KEY, login text, node_id text, avatar_url text, "
        "html_url text, type text, site_admin boolean, score double precision, starred_at text, repo jsonb)")
    conn.commit()
    start = time.perf_counter()
    sql = ("INSERT INTO users_pg (" + ", ".join(COLUMNS) + ") VALUES (" + ", ".join(["%s"] * len(COLUMNS))
           + ") ON CONFLICT (id) DO UPDATE SET " + ", ".join(f"{c} = EXCLUDED.{c}" for c in COLUMNS[1:]))
    with conn.cursor() as cursor:
        cursor.executemany(sql, [tuple(Jsonb(r[c]) if c == "repo" else r[c] for c in COLUMNS) for r in rows])
    conn.commit()
    print(time.perf_counter() - start)
"""


class Redis:
    """Debian's redis-server on a free loopback port, no persistence, in a temporary folder."""

    def __init__(self):
        self.folder = tempfile.mkdtemp(prefix="apimacro-redis-bench-", dir="/tmp")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        log = os.path.join(self.folder, "log")
        self.process = subprocess.Popen(
            ["/usr/bin/redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.folder, "--logfile", log], cwd=self.folder)
        deadline = time.monotonic() + 600
        while "Ready to accept connections" not in (open(log).read() if os.path.exists(log) else ""):
            if self.process.poll() is not None or time.monotonic() > deadline:
                sys.exit("store.py: redis-server did not start")
            time.sleep(0.05)
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def stop(self):
        self.process.terminate()
        self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


class Postgres:
    """Debian's PostgreSQL on a free loopback port, in a temporary folder (trust authentication)."""

    def __init__(self):
        versions = sorted(int(v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit())
        self.bin = f"/usr/lib/postgresql/{versions[-1]}/bin"
        self.folder = tempfile.mkdtemp(prefix="apimacro-pg-bench-", dir="/tmp")
        self.prefix = []
        if os.getuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            self.prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--"]
        data = os.path.join(self.folder, "data")
        subprocess.run(self.prefix + [f"{self.bin}/initdb", "-D", data, "-U", "bench", "--auth=trust",
                                      "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"],
                       cwd="/tmp", check=True, capture_output=True)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.log = open(os.path.join(self.folder, "log"), "w+", encoding="utf-8")
        self.process = subprocess.Popen(
            self.prefix + [f"{self.bin}/postgres", "-D", data, "-k", self.folder, "-p", str(self.port),
                           "-h", "127.0.0.1"], cwd="/tmp", stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 600
        while subprocess.run([f"{self.bin}/pg_isready", "-q", "-h", "127.0.0.1", "-p", str(self.port)],
                             check=False).returncode != 0:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.log.seek(0)
                sys.exit(f"store.py: postgres did not start:\n{self.log.read()[-600:]}")
            time.sleep(0.05)
        self.url = f"postgresql://bench@127.0.0.1:{self.port}/postgres"

    def sql(self, text):
        subprocess.run(["/usr/bin/psql", "-X", "-q", "-d", self.url, "-c", text], check=True, capture_output=True)

    def stop(self):
        self.process.terminate()
        self.process.wait()
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def postgres_rows(binary, python, rows, reps, work, env):
    server = Postgres()
    results = {(side, phase): [] for side in ("apimacro", "psycopg") for phase in ("insert", "update")}
    try:
        for name, text in [("upsert_pg.py", APIMACRO_PG), ("psycopg_pg.py", PSYCOPG)]:
            with open(os.path.join(work, name), "w", encoding="utf-8") as file:
                file.write(text)
        for _ in range(reps):
            server.sql("DROP TABLE IF EXISTS users, users_pg, _apimacro_runs")
            for phase in ("insert", "update"):
                run = [binary, "run", "--state-key", "bench-pg", "upsert_pg.py", str(rows), server.url]
                results[("apimacro", phase)] += timed(run, work, env)
                results[("psycopg", phase)] += timed([python, "psycopg_pg.py", str(rows), server.url], work)
    finally:
        server.stop()
    print(f"PostgreSQL, same server (rows/s, higher is better):")
    for phase in ("insert", "update"):
        ours = rows / statistics.median(results[("apimacro", phase)])
        theirs = rows / statistics.median(results[("psycopg", phase)])
        print(f"  {phase:<7} apimacro {ours:>10,.0f}   psycopg    {theirs:>10,.0f}   ratio {ours / theirs:.2f}")


def state_commits(binary, work, env, postgres):
    """The state commit's median and p90 (ms) with the state in SQLite, Redis and, when
    `postgres`, PostgreSQL; each line printed."""
    with open(os.path.join(work, "state.py"), "w", encoding="utf-8") as file:
        file.write(STATE)
    with open(os.path.join(work, "floor.py"), "w", encoding="utf-8") as file:
        file.write(SQLITE_FLOOR)
    sqlite = timed([binary, "run", "--state-key", "state", "state.py"], work, env)
    floor = timed(["/usr/bin/python3", "floor.py"], work)
    print(f"state commit, SQLite: median {sqlite[0]:.3f} ms, p90 {sqlite[1]:.3f} ms "
          f"(sqlite3's own commit of one row here: median {floor[0]:.3f} ms, p90 {floor[1]:.3f} ms)")
    redis = Redis()
    try:
        shared = dict(env, APIMACRO_STATE="redis", APIMACRO_SHARED_STATE=redis.url)
        on_redis = timed([binary, "run", "--state-key", "state", "state.py"], work, shared)
    finally:
        redis.stop()
    print(f"state commit, Redis (loopback): median {on_redis[0]:.3f} ms, p90 {on_redis[1]:.3f} ms")
    if postgres:
        server = Postgres()
        try:
            on_pg = timed([binary, "run", "--state-key", "state", "state.py"], work,
                          dict(env, APIMACRO_STATE=server.url))
        finally:
            server.stop()
        print(f"state commit, PostgreSQL (loopback, fsync on): median {on_pg[0]:.3f} ms, p90 {on_pg[1]:.3f} ms")


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
    parser.add_argument("--postgres", action="store_true", help="also PostgreSQL against psycopg's executemany")
    parser.add_argument("--only-postgres", action="store_true", help="only the PostgreSQL rows")
    parser.add_argument("--state-only", action="store_true", help="only the state commits")
    args = parser.parse_args()
    binary = os.path.join(ROOT, ".build", args.build, "apimacro")
    if not os.path.exists(binary):
        sys.exit(f"store.py: no {binary}; swift build -c {args.build} --product apimacro")
    if args.state_only:
        with tempfile.TemporaryDirectory(prefix="apimacro-store-bench-") as work:
            state_commits(binary, work, {"PATH": "/usr/bin:/bin", "HOME": work, "LANG": "C.UTF-8"}, args.postgres)
        return
    check = subprocess.run([args.python, "-c", "import sqlite_utils"], capture_output=True, check=False)
    if check.returncode != 0:
        sys.exit(f"store.py: {args.python} has no sqlite_utils; Benchmarks/run makes Benchmarks/.venv with it")
    results = {("apimacro", "insert"): [], ("apimacro", "update"): [],
               ("sqlite-utils", "insert"): [], ("sqlite-utils", "update"): []}
    with tempfile.TemporaryDirectory(prefix="apimacro-store-bench-") as work:
        env = {"PATH": "/usr/bin:/bin", "HOME": work, "LANG": "C.UTF-8"}
        if args.postgres or args.only_postgres:
            postgres_rows(binary, args.python, args.rows, args.reps, work, env)
            if args.only_postgres:
                return
        for name, text in [("upsert.py", APIMACRO), ("su.py", SQLITE_UTILS)]:
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
        print(f"{args.rows:,} GitHub-shaped rows, median of {args.reps} (rows/s, higher is better):")
        for phase in ("insert", "update"):
            ours = args.rows / statistics.median(results[("apimacro", phase)])
            theirs = args.rows / statistics.median(results[("sqlite-utils", phase)])
            print(f"  {phase:<7} apimacro {ours:>10,.0f}   sqlite-utils {theirs:>10,.0f}   ratio {ours / theirs:.2f}")
        state_commits(binary, work, env, args.postgres)


if __name__ == "__main__":
    main()
