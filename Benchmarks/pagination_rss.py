#!/usr/bin/python3
"""Peak memory while paginating: 100,000 items against 10,000 (issue 13: within 10 %).

Runs `apimacro run Benchmarks/macros/count_followers.py crowdN --no-cache` against the loopback
test server (`apimacro-testserver`, whose `crowdN` user has N followers, 100 per page) and reads
the child's peak RSS (ru_maxrss) for N = 10,000 and 100,000. Usage, after a build:
    Benchmarks/pagination_rss.py [BUILD_DIR]     (default .build/release; .build/debug works too)
"""
import os
import re
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def peak_rss_kib(command, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the maximum over all waited-for children: run the small one first.
    return max(after, before), result.stdout.strip()


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "release")
    binary = os.path.join(build, "apimacro")
    server = subprocess.Popen([os.path.join(build, "apimacro-testserver"), "--port", "0"],
                              stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        base = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)
        # Unpaced: GitHub's secondary limits would pace 1,000 pages to 900 a minute.
        env = dict(os.environ, APIMACRO_GITHUB_URL=base, APIMACRO_GITHUB_PACE="off", HOME=os.environ.get("HOME", "/tmp"))
        env.pop("APIMACRO_GITHUB_TOKEN", None)
        macro = os.path.join(ROOT, "Benchmarks", "macros", "count_followers.py")
        rows = []
        for count in (10_000, 100_000):
            rss, out = peak_rss_kib([binary, "run", "--no-cache", macro, f"crowd{count}"], env)
            assert out == str(count), f"counted {out}, expected {count}"
            rows.append((count, rss))
        for count, rss in rows:
            print(f"{count:>7,} followers: peak RSS {rss / 1024:.1f} MiB")
        ratio = rows[1][1] / rows[0][1]
        print(f"100,000 / 10,000 peak RSS: {ratio:.3f} (target <= 1.10)")
    finally:
        server.terminate()
        server.wait()


main()
