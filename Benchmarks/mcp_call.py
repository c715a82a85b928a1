"""What a tool call of `apimacro mcp` costs (issue 42): time and memory.

    swift build -c release --product apimacro && swift build -c release --product apimacro-testserver
    /usr/bin/python3 Benchmarks/mcp_call.py [--calls 200] [--build release|debug]

Starts `apimacro mcp` over stdio (raw JSON-RPC lines, only the standard library) in a folder
holding two macros, with the `apimacro-testserver` on 127.0.0.1 as GitHub:

* `rows`: no network, main(n: int) outputs n rows: the server's own cost per call (reading
  the macro's schema with ast, a fresh module, running it, the result as JSON);
* `user`: one `github.user` request per call (--no-cache, so each call goes to the loopback
  server).

Reported: the server's start (spawn to the initialize answer), the first call of each macro
(cold: imports), the median and 90th percentile of CALLS warm calls of each, and the server's
RSS (VmRSS from /proc) after start, after the calls, and its peak (VmHWM).
Writes Benchmarks/results/mcp-latest.json.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results", "mcp-latest.json")

ROWS = '''"""Rows without the network."""
import apimacro


def main(n: int = 10):
    apimacro.output([{"i": i, "name": f"row {i}"} for i in range(n)])
'''

USER = '''"""One GitHub user."""
import apimacro


def main(login: str = "octocat"):
    user = apimacro.github.user(login)
    apimacro.output([{"login": user["login"], "id": user["id"]}])
'''


def status(pid, field):
    with open(f"/proc/{pid}/status") as file:
        for line in file:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024  # MiB
    return 0.0


class Client:
    def __init__(self, process):
        self.process = process
        self.next_id = 0

    def request(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        if answer.get("id") != self.next_id or "error" in answer:
            sys.exit(f"mcp_call: unexpected answer to {method}: {answer}")
        return answer["result"]

    def call(self, name, arguments):
        start = time.perf_counter()
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        elapsed = time.perf_counter() - start
        if result.get("isError"):
            sys.exit(f"mcp_call: {name} failed: {result}")
        return elapsed


def start_test_server(path):
    server = subprocess.Popen([path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline().strip()
    if not line.startswith("APIMACRO_GITHUB_URL="):
        server.kill()
        sys.exit(f"mcp_call: unexpected first line from {path}: {line!r}")
    return server, line.split("=", 1)[1]


def milliseconds(seconds):
    return round(seconds * 1000, 2)


def summary(times):
    ordered = sorted(times)
    return {
        "median_ms": milliseconds(statistics.median(ordered)),
        "p90_ms": milliseconds(ordered[int(len(ordered) * 0.9) - 1]),
        "min_ms": milliseconds(ordered[0]),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--build", choices=["release", "debug"], default="release")
    parser.add_argument("--server", help="the apimacro-testserver to use (default: the same build's)")
    options = parser.parse_args()
    build = os.path.join(ROOT, ".build", options.build)
    apimacro = os.path.join(build, "apimacro")
    test_server, url = start_test_server(options.server or os.path.join(build, "apimacro-testserver"))
    try:
        with tempfile.TemporaryDirectory() as folder:
            os.makedirs(os.path.join(folder, "macros"))
            os.makedirs(os.path.join(folder, "home"), mode=0o700)
            for name, text in (("rows", ROWS), ("user", USER)):
                with open(os.path.join(folder, "macros", name + ".py"), "w") as file:
                    file.write(text)
            env = {
                "PATH": "/usr/bin:/bin", "HOME": folder, "LANG": "C.UTF-8",
                "APIMACRO_HOME": os.path.join(folder, "home"), "APIMACRO_GITHUB_URL": url,
                "APIMACRO_GITHUB_TOKEN": "ghp_benchmark0123456789", "APIMACRO_GITHUB_PACE": "off",
            }
            start = time.perf_counter()
            process = subprocess.Popen(
                [apimacro, "mcp", "--no-cache"], cwd=folder, env=env, text=True,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            client = Client(process)
            client.request("initialize", {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "mcp_call", "version": "1"}})
            started = time.perf_counter() - start
            rss_start = status(process.pid, "VmRSS")
            tools = client.request("tools/list")["tools"]
            results = {
                "build": options.build, "test_server": options.server or "same build", "calls": options.calls, "start_ms": milliseconds(started),
                "tools": len(tools), "rss_after_start_mib": round(rss_start, 1),
            }
            for name, arguments in (("rows", {"n": 10}), ("user", {"login": "octocat"})):
                results[f"{name}_first_call_ms"] = milliseconds(client.call(name, arguments))
                times = [client.call(name, arguments) for _ in range(options.calls)]
                results[f"{name}_warm"] = summary(times)
            results["rss_after_calls_mib"] = round(status(process.pid, "VmRSS"), 1)
            results["rss_peak_mib"] = round(status(process.pid, "VmHWM"), 1)
            process.stdin.close()
            process.wait()
    finally:
        test_server.kill()
        test_server.wait()
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as file:
        json.dump(results, file, indent=2)
        file.write("\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
