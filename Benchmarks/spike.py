#!/usr/bin/python3
"""The transport spike of issue 13: CPU cost per request of each call path, same workload.

    APIMACRO_SPIKE=1 swift build -c release --product transport-spike   # once (Package.swift)
    Benchmarks/spike.py [--reps N] [--count N] [--callgrind-count N] [--no-callgrind] [--only a,b]

Serves the harness's 1.3 KB GitHub user object with nginx on 127.0.0.1 (harness.Nginx),
then runs every client process twice per repetition: WARMUP requests, and WARMUP + COUNT.
The difference of the two, divided by COUNT, is the cost of one request in steady state
(start-up, connection set-up and the warm-up cancel out):

* CPU µs per request: user + system time of the client process (all its threads), from
  rusage; the median over the repetitions. nginx's own CPU is not counted (the same for all).
* instructions per request: callgrind's total (every thread), one run each of WARMUP and
  WARMUP + CALLGRIND_COUNT requests. Stable on a busy machine, unlike wall time.

Rows: transport-spike's modes (libcurl, AsyncHTTPClient futures waited on from the thread,
today's Task.detached + semaphore path), Python's http.client (Debian's /usr/bin/python3),
pycurl and aiohttp (Benchmarks/.venv, when Benchmarks/run made it), and the whole apimacro
binary (release build) running Benchmarks/macros/seq_user.py and fanout_user.py.
Prints one table and writes Benchmarks/results/spike.json.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from harness import Nginx, child_env  # noqa: E402  (the benchmarks' nginx set-up)

SPIKE = os.path.join(ROOT, ".build", "release", "transport-spike")
APIMACRO = os.path.join(ROOT, ".build", "release", "apimacro")
VENV_PY = os.path.join(HERE, ".venv", "bin", "python")
RESULTS = os.path.join(HERE, "results", "spike.json")

# One small Python client per process: sequential http.client / pycurl, aiohttp with 32 in flight.
PEER = r'''
import sys
mode, count, url = sys.argv[1], int(sys.argv[2]), sys.argv[3]
HEADERS = {"Accept": "application/vnd.github+json", "User-Agent": "apimacro-spike"}
got = 0
def check(status, body, headers):
    global got
    if status != 200 or not body.startswith(b"{") or not headers:
        raise SystemExit(f"unexpected response {status}")
    got += len(body)
if mode == "http.client":
    import http.client
    from urllib.parse import urlsplit
    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port)
    for _ in range(count):
        conn.request("GET", u.path, headers=HEADERS)
        r = conn.getresponse()
        body = r.read()
        check(r.status, body, r.getheaders())
elif mode == "pycurl":
    import io, pycurl
    c = pycurl.Curl()
    c.setopt(pycurl.URL, url)
    c.setopt(pycurl.HTTPHEADER, [f"{k}: {v}" for k, v in HEADERS.items()])
    c.setopt(pycurl.TIMEOUT_MS, 30000)
    for _ in range(count):
        buf, lines = io.BytesIO(), []
        c.setopt(pycurl.WRITEDATA, buf)
        c.setopt(pycurl.HEADERFUNCTION, lines.append)
        c.perform()
        check(c.getinfo(pycurl.RESPONSE_CODE), buf.getvalue(), lines)
elif mode == "aiohttp":
    import asyncio, aiohttp
    async def main():
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=32), headers=HEADERS) as s:
            sem = asyncio.Semaphore(32)
            async def one():
                async with sem:
                    async with s.get(url) as r:
                        check(r.status, await r.read(), list(r.headers.items()))
            await asyncio.gather(*(one() for _ in range(count)))
    asyncio.run(main())
print(got)
'''


class Failed(Exception):
    pass


def run_cpu(cmd, env):
    pid = os.posix_spawn(cmd[0], cmd, env, file_actions=[
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
    ])
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise Failed(f"{' '.join(cmd[:4])}: exit {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime


def without_debug_info(binary):
    """A copy of binary with its debug info stripped, beside it (so apimacro still finds its
    resources): valgrind gives up on the DWARF of Swift's release binaries."""
    copy = binary + ".nodebug"
    if not os.path.exists(copy) or os.path.getmtime(copy) < os.path.getmtime(binary):
        subprocess.run(["objcopy", "--strip-debug", binary, copy], check=True)
    return copy


def run_callgrind(cmd, env, tmp):
    out = os.path.join(tmp, "callgrind.out")
    if os.path.basename(cmd[0]) in ("transport-spike", "apimacro"):
        cmd = [without_debug_info(cmd[0]), *cmd[1:]]
    p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd], env=env,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=1800)
    if p.returncode != 0:
        raise Failed(f"callgrind {' '.join(cmd[:4])}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
    match = re.search(r"Collected\s*:\s*(\d+)", p.stderr)
    if not match:
        raise Failed("callgrind printed no total")
    return int(match.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--count", type=int, default=2000, help="measured requests per process (CPU time)")
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--callgrind-count", type=int, default=200)
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--only", help="comma-separated row names")
    ap.add_argument("--results", default=RESULTS, help="where the JSON goes")
    ap.add_argument("--apimacro", default=APIMACRO,
                    help="the apimacro binary for the 'apimacro run' rows (default: the release build)")
    args = ap.parse_args()
    apimacro = os.path.abspath(args.apimacro)

    if not os.access(SPIKE, os.X_OK):
        print(f"spike: {SPIKE} is missing (APIMACRO_SPIKE=1 swift build -c release --product transport-spike): "
              "only the peers and apimacro run", file=sys.stderr)
    tmp = tempfile.mkdtemp(prefix="apimacro-spike.")
    nginx = Nginx(tmp)
    try:
        nginx.start()
        url = nginx.url + "/users/octocat"
        print(f"spike: nginx {nginx.version()} on {nginx.url}", file=sys.stderr, flush=True)
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        am_env = child_env({"APIMACRO_GITHUB_URL": nginx.url, "APIMACRO_HOME": home, "APIMACRO_GITHUB_PACE": "off",
                            "XDG_CONFIG_HOME": os.path.join(tmp, "config"), "XDG_CACHE_HOME": os.path.join(tmp, "cache")})
        for secret in ("APIMACRO_GITHUB_TOKEN", "GITHUB_TOKEN"):
            am_env.pop(secret, None)
        env = child_env()
        venv = VENV_PY if os.access(VENV_PY, os.X_OK) else None

        # name -> (shape, function of the request count -> argv)
        rows = {}
        spike_modes = (("curl", "libcurl"), ("nio", "AsyncHTTPClient futures"), ("task", "old path: Task + semaphore"))
        for mode, label in spike_modes if os.access(SPIKE, os.X_OK) else ():
            rows[f"{label}, sequential"] = ("seq", lambda n, m=mode: [SPIKE, f"{m}-seq", str(n), "0", url], env)
            rows[f"{label}, 32 in flight"] = ("fan", lambda n, m=mode: [SPIKE, f"{m}-fan", str(n), "0", url], env)
        rows["http.client (/usr/bin/python3)"] = ("seq", lambda n: ["/usr/bin/python3", "-c", PEER, "http.client", str(n), url], env)
        system_pycurl = subprocess.run(["/usr/bin/python3", "-c", "import pycurl"], capture_output=True).returncode == 0
        if system_pycurl:  # Debian's python3-pycurl (Benchmarks/run installs it)
            rows["pycurl (/usr/bin/python3)"] = ("seq", lambda n: ["/usr/bin/python3", "-c", PEER, "pycurl", str(n), url], env)
        elif venv:
            rows["pycurl (venv)"] = ("seq", lambda n: [venv, "-c", PEER, "pycurl", str(n), url], env)
        if venv:
            rows["aiohttp, 32 in flight (venv)"] = ("fan", lambda n: [venv, "-c", PEER, "aiohttp", str(n), url], env)
        if os.access(apimacro, os.X_OK):
            seq, fan = os.path.join(HERE, "macros", "seq_user.py"), os.path.join(HERE, "macros", "fanout_user.py")
            rows["apimacro run, github.user loop"] = (
                "seq", lambda n: [apimacro, "run", "--no-cache", seq, str(n), "0"], am_env)
            rows["apimacro run, map 32"] = ("fan", lambda n: [apimacro, "run", "--no-cache", fan, str(n), "0"], am_env)
        if args.only:
            wanted = args.only.split(",")
            rows = {k: v for k, v in rows.items() if any(w in k for w in wanted)}

        cpu = {name: [] for name in rows}
        for rep in range(args.reps):
            for name, (_, argv, e) in rows.items():
                try:
                    base = run_cpu(argv(args.warmup), e)
                    full = run_cpu(argv(args.warmup + args.count), e)
                    cpu[name].append((full - base) / args.count * 1e6)
                except Failed as error:
                    print(f"spike: {name}: {error}", file=sys.stderr)
            print(f"spike: repetition {rep + 1}/{args.reps} done", file=sys.stderr, flush=True)
        instructions = {}
        if not args.no_callgrind and shutil.which("valgrind"):
            for name, (_, argv, e) in rows.items():
                try:
                    base = run_callgrind(argv(args.warmup), e, tmp)
                    full = run_callgrind(argv(args.warmup + args.callgrind_count), e, tmp)
                    instructions[name] = (full - base) / args.callgrind_count
                except Failed as error:
                    print(f"spike: {name}: {error}", file=sys.stderr)
                print(f"spike: callgrind {name} done", file=sys.stderr, flush=True)
        table = []
        print(f"{'client':38} {'CPU µs/req':>10} {'spread':>13} {'instr/req':>10}")
        for name, (shape, _, _) in rows.items():
            values = sorted(cpu[name])
            median = statistics.median(values) if values else None
            row = {"name": name, "shape": shape, "cpu_us": median, "cpu_us_all": values,
                   "instructions": instructions.get(name)}
            table.append(row)
            spread = f"{values[0]:.0f}–{values[-1]:.0f}" if values else "n/a"
            ins = f"{instructions[name]:,.0f}" if name in instructions else "n/a"
            med = f"{median:.1f}" if median is not None else "n/a"
            print(f"{name:38} {med:>10} {spread:>13} {ins:>10}")
        os.makedirs(os.path.dirname(args.results), exist_ok=True)
        with open(args.results, "w") as f:
            json.dump({"count": args.count, "warmup": args.warmup, "callgrind_count": args.callgrind_count,
                       "reps": args.reps, "load": os.getloadavg(), "rows": table}, f, indent=1)
    finally:
        nginx.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
