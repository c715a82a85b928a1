"""Scale of `apimacro batch`: N small macros through `batch -j J` against the loopback server.

    swift build -c release --product apimacro && swift build -c release --product apimacro-testserver
    /usr/bin/python3 Benchmarks/batch_scale.py [--count 200] [--jobs 2] [--reps 3]

Each macro makes one GitHub request (`github.user`) to the `apimacro-testserver`
on 127.0.0.1 and prints one line; the batch runs with --no-cache so every macro
really goes to the network. Reported, per repetition and as the median:

* wall time of the whole batch, and per macro;
* peak memory of the batch parent (VmHWM, read from /proc while it runs);
* peak memory of the largest single process in the tree (getrusage RUSAGE_CHILDREN
  ru_maxrss: the parent and every child it waited for);
* peak total RSS of the tree (parent + running children, sampled every 10 ms);
* the summary's own counts (ok macros, HTTP requests) as a check that all ran.

Only the standard library; writes Benchmarks/results/batch-latest.json.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RELEASE = os.path.join(ROOT, ".build", "release")
RESULTS = os.path.join(HERE, "results", "batch-latest.json")

MACRO = """from apimacro import github
user = github.user("octocat")
print({index}, user["login"], user["id"])
"""


def kib(status_text, field):
    for line in status_text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def tree_rss(pid):
    """RSS in KiB of pid and its live descendants."""
    total = kib(read(f"/proc/{pid}/status"), "VmRSS")
    for task in os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else []:
        for child in read(f"/proc/{pid}/task/{task}/children").split():
            total += tree_rss(int(child))
    return total


class Sampler(threading.Thread):
    """Polls the batch parent's VmHWM and the whole tree's RSS until it ends."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.parent_hwm = 0
        self.tree_peak = 0
        self.done = False

    def run(self):
        while not self.done:
            status = read(f"/proc/{self.pid}/status")
            if status:
                self.parent_hwm = max(self.parent_hwm, kib(status, "VmHWM"))
                self.tree_peak = max(self.tree_peak, tree_rss(self.pid))
            time.sleep(0.01)


def start_server(path):
    server = subprocess.Popen([path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline().strip()
    if not line.startswith("APIMACRO_GITHUB_URL="):
        server.kill()
        sys.exit(f"batch_scale: unexpected first line from {path}: {line!r}")
    return server, line.split("=", 1)[1]


def one_batch(apimacro, folder, names, jobs, url):
    env = dict(os.environ, APIMACRO_GITHUB_URL=url, APIMACRO_GITHUB_PACE="off", HOME=folder, APIMACRO_HOME=os.path.join(folder, "home"))
    env.pop("GITHUB_TOKEN", None)
    env.pop("APIMACRO_GITHUB_TOKEN", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(
        [apimacro, "batch", "-j", str(jobs), "--no-cache", "--output-dir", os.path.join(folder, "out")] + names,
        cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = Sampler(process.pid)
    sampler.start()
    stdout, stderr = process.communicate()
    seconds = time.perf_counter() - start
    sampler.done = True
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rows = [line.split() for line in stdout.splitlines()[1:-1]]
    return {
        "exit_code": process.returncode,
        "seconds": seconds,
        "ok": sum(1 for row in rows if len(row) > 1 and row[1] == "ok"),
        "requests": sum(int(row[4]) for row in rows if len(row) > 4 and row[4].isdigit()),
        "parent_peak_mib": sampler.parent_hwm / 1024,
        "largest_process_peak_mib": after.ru_maxrss / 1024,
        "tree_peak_mib": sampler.tree_peak / 1024,
        "children_cpu_seconds": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "tail": stdout.splitlines()[-1] if stdout else stderr[-300:],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apimacro", default=os.path.join(RELEASE, "apimacro"))
    parser.add_argument("--server", default=os.path.join(RELEASE, "apimacro-testserver"))
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    for path in (args.apimacro, args.server):
        if not os.access(path, os.X_OK):
            sys.exit(f"batch_scale: {path} not found; build it with swift build -c release")

    server, url = start_server(args.server)
    try:
        with tempfile.TemporaryDirectory(prefix="apimacro-batch-bench-") as folder:
            names = []
            for index in range(args.count):
                name = f"m{index:03d}.py"
                with open(os.path.join(folder, name), "w") as f:
                    f.write(MACRO.format(index=index))
                names.append(name)
            runs = [one_batch(args.apimacro, folder, names, args.jobs, url) for _ in range(args.reps)]
    finally:
        server.terminate()
        server.wait(timeout=10)

    for run in runs:
        if run["exit_code"] != 0 or run["ok"] != args.count:
            sys.exit(f"batch_scale: a batch failed: {run}")
    median = {key: statistics.median(run[key] for run in runs)
              for key in ("seconds", "parent_peak_mib", "largest_process_peak_mib", "tree_peak_mib",
                          "children_cpu_seconds")}
    report = {
        "count": args.count, "jobs": args.jobs, "reps": args.reps, "cpus": os.cpu_count(),
        "median": median, "per_macro_ms": 1000 * median["seconds"] / args.count, "runs": runs,
    }
    print(f"{args.count} macros, batch -j {args.jobs}, {args.reps} runs (median), {os.cpu_count()} CPUs")
    print(f"  wall time            {median['seconds']:.2f} s  ({report['per_macro_ms']:.1f} ms per macro)")
    print(f"  children CPU         {median['children_cpu_seconds']:.2f} s")
    print(f"  parent peak RSS      {median['parent_peak_mib']:.1f} MiB")
    print(f"  largest process RSS  {median['largest_process_peak_mib']:.1f} MiB")
    print(f"  tree peak RSS        {median['tree_peak_mib']:.1f} MiB (parent + running children)")
    print(f"  requests (summary)   {runs[0]['requests']}; {runs[0]['tail']}")
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
