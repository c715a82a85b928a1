"""apimacro's benchmark harness: apimacro against its Python peers, same run, same machine.

Run it through Benchmarks/run (which installs nginx, wrk and the venv of peers):

    Benchmarks/run [--quick] [--with-apimacro] [--reps N] [--only BENCH[,BENCH]]

It writes the test data into a temp dir, serves it with nginx on 127.0.0.1 (a free
port, this user, every path in the temp dir), runs each workload REPS times in fresh
processes (interleaved, after a warm-up), prints one table of medians with the ratio
apimacro / peer, and writes it as JSON to Benchmarks/results/latest.json.
nginx is stopped on every way out (finally, SIGTERM, and PR_SET_PDEATHSIG).
"""
import argparse
import ctypes
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURE = os.path.join(ROOT, "..", "shared", "fixtures", "github", "octokit-get-repository.json")
MACROS = os.path.join(HERE, "macros")
WORKLOADS = os.path.join(HERE, "peers", "workloads.py")
FETCH_ONE = os.path.join(HERE, "peers", "fetch_one_requests.py")
RESULTS = os.path.join(HERE, "results", "latest.json")
VENV_PY = os.path.join(HERE, ".venv", "bin", "python")
PY = VENV_PY if os.path.exists(VENV_PY) else sys.executable

PAGES, PER_PAGE = 20, 100
BIG_BYTES = 5_000_000
BUDGET_SECONDS = 540          # stop starting new measurements after 9 minutes
STEP_TIMEOUT = 120            # one process of one workload

ACCEPT = "application/vnd.github+json"


# --- test data ---------------------------------------------------------------------------

def user_object(login, ident, base="https://api.github.com"):
    """A user in the shape of GitHub's GET /users/octocat (about 1.3 KB)."""
    u = f"{base}/users/{login}"
    return {
        "login": login, "id": ident, "node_id": "MDQ6VXNlcjU4MzIzMQ==",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{ident}?v=4", "gravatar_id": "",
        "url": u, "html_url": f"https://github.com/{login}",
        "followers_url": f"{u}/followers", "following_url": f"{u}/following{{/other_user}}",
        "gists_url": f"{u}/gists{{/gist_id}}", "starred_url": f"{u}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{u}/subscriptions", "organizations_url": f"{u}/orgs",
        "repos_url": f"{u}/repos", "events_url": f"{u}/events{{/privacy}}",
        "received_events_url": f"{u}/received_events", "type": "User", "user_view_type": "public",
        "site_admin": False, "name": "The Octocat", "company": "@github", "blog": "https://github.blog",
        "location": "San Francisco", "email": None, "hireable": None, "bio": None,
        "twitter_username": None, "public_repos": 8, "public_gists": 8, "followers": 21542,
        "following": 9, "created_at": "2011-01-25T18:44:36Z", "updated_at": "2025-10-21T12:53:17Z",
    }


def write_data(www, base_url):
    """Writes the files nginx serves; returns facts about them.

    Objects carry the server's own URLs (as GitHub's do), so clients that follow
    them (PyGithub's user.get_repos() uses the user's "url") stay on nginx.
    """
    os.makedirs(os.path.join(www, "users"), exist_ok=True)
    os.makedirs(os.path.join(www, "pages"), exist_ok=True)

    def dump(path, obj):
        data = json.dumps(obj, separators=(",", ":")).encode()
        with open(os.path.join(www, path), "wb") as f:
            f.write(data)
        return len(data)

    facts = {"user_bytes": dump("users/octocat.json", user_object("octocat", 583231, base_url))}
    # The same user under /fresh/, which nginx serves with Cache-Control: max-age (the cache benchmark).
    os.makedirs(os.path.join(www, "fresh", "users"), exist_ok=True)
    dump("fresh/users/octocat.json", user_object("octocat", 583231, base_url + "/fresh"))
    dump("users/many.json", user_object("many", 1000, base_url))

    with open(FIXTURE) as f:
        template = json.dumps(json.load(f)[0]["response"]).replace("https://api.github.com", base_url)
    repo_sizes = []
    for page in range(1, PAGES + 1):
        repos = []
        for i in range((page - 1) * PER_PAGE, page * PER_PAGE):
            name = f"repo-{i:04d}"
            repo = json.loads(template.replace("octokit-fixture-org", "many").replace("hello-world", name))
            repo["id"] = 100000 + i
            repo["owner"]["id"] = 1000
            repos.append(repo)
        size = dump(f"pages/page-{page}.json", repos)
        repo_sizes.append(size / PER_PAGE)
    facts["repo_bytes"] = round(statistics.mean(repo_sizes))

    users, size, i = [], 2, 0   # "[" + "]"
    while size < BIG_BYTES:
        obj = user_object(f"user{i:05d}", 2_000_000 + i)
        size += len(json.dumps(obj, separators=(",", ":"))) + 1
        users.append(obj)
        i += 1
    facts["big_bytes"] = dump("big.json", users)
    facts["big_items"] = len(users)
    return facts


def link_header(base_url, page):
    def url(n):
        return f"{base_url}/users/many/repos?per_page={PER_PAGE}&page={n}"
    links = []
    if page > 1:
        links.append(f'<{url(page - 1)}>; rel="prev"')
    if page < PAGES:
        links += [f'<{url(page + 1)}>; rel="next"', f'<{url(PAGES)}>; rel="last"']
    if page > 1:
        links.append(f'<{url(1)}>; rel="first"')
    return ", ".join(links)


# --- nginx -------------------------------------------------------------------------------------

def nginx_binary():
    return shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)


def nginx_modules(binary):
    out = subprocess.run([binary, "-V"], capture_output=True, text=True).stderr
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nginx_conf(prefix, www, port, base_url, configure_args):
    temp_paths = ["client_body_temp_path"]
    for module, directive in (("proxy", "proxy_temp_path"), ("fastcgi", "fastcgi_temp_path"),
                              ("uwsgi", "uwsgi_temp_path"), ("scgi", "scgi_temp_path")):
        if f"--without-http_{module}_module" not in configure_args:
            temp_paths.append(directive)
    temps = "\n".join(f"    {d} {prefix}/{d.replace('_path', '')};" for d in temp_paths)
    pages = "\n".join(f'        "{n}" {n};' for n in range(1, PAGES + 1))
    links = "\n".join(f"        {n} '{link_header(base_url, n)}';" for n in range(1, PAGES + 1))
    reset = int(time.time()) + 3600
    ratelimit = (f"add_header X-RateLimit-Limit 5000 always; add_header X-RateLimit-Remaining 4999 always; "
                 f"add_header X-RateLimit-Reset {reset} always; add_header X-RateLimit-Used 1 always; "
                 f"add_header X-RateLimit-Resource core always;")
    # Running as root, workers would switch to "nobody"; keep them as this user.
    user = ""
    if os.geteuid() == 0:
        user = "user root root;"
    return f"""# written by Benchmarks/harness.py
worker_processes 1;
daemon off;
master_process on;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
{user}
events {{ worker_connections 1024; }}
http {{
    access_log off;
{temps}
    types {{ application/json json; }}
    default_type application/json;
    charset utf-8;
    charset_types application/json;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 120s;
    keepalive_requests 1000000;
    server_tokens off;
    map $arg_page $page {{
        default "";
        "" 1;
{pages}
    }}
    map $page $link {{
        default "";
{links}
    }}
    server {{
        listen 127.0.0.1:{port};
        root {www};
        location /users/ {{
            try_files $uri $uri.json =404;
            {ratelimit}
        }}
        location = /users/many/repos {{
            try_files /pages/page-$page.json =404;
            add_header Link $link always;
            {ratelimit}
        }}
        location /fresh/users/ {{
            try_files $uri $uri.json =404;
            add_header Cache-Control "private, max-age=3600" always;
            {ratelimit}
        }}
        location = /big.json {{ }}
        location / {{ return 404; }}
    }}
}}
"""


def _pdeathsig():
    """In the child: get SIGTERM when the harness dies, however it dies (Linux)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


class Nginx:
    def __init__(self, tmp):
        self.tmp = tmp
        self.prefix = os.path.join(tmp, "nginx")
        self.www = os.path.join(tmp, "www")
        self.proc = None
        self.port = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        binary = nginx_binary()
        if not binary:
            raise SystemExit("bench: nginx is not installed (Benchmarks/run installs it)")
        configure_args = nginx_modules(binary)
        os.makedirs(self.prefix, exist_ok=True)
        last_error = ""
        for _ in range(5):
            self.port = free_port()
            self.facts = write_data(self.www, self.url)
            conf = os.path.join(self.prefix, "nginx.conf")
            with open(conf, "w") as f:
                f.write(nginx_conf(self.prefix, self.www, self.port, self.url, configure_args))
            errlog = os.path.join(self.prefix, "error.log")
            self.proc = subprocess.Popen([binary, "-p", self.prefix + "/", "-e", errlog, "-c", conf],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                         preexec_fn=_pdeathsig)
            deadline = time.time() + 10
            while time.time() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    with urllib.request.urlopen(self.url + "/users/octocat", timeout=1) as r:
                        if r.status == 200:
                            return self
                except OSError:
                    time.sleep(0.05)
            last_error = self.stop()
            if os.path.exists(errlog):
                with open(errlog) as f:
                    last_error = (last_error + "\n" + f.read()).strip()
        raise SystemExit(f"bench: nginx did not start: {last_error[-500:]}")

    def stop(self):
        """Stops nginx (fast shutdown); returns its stderr."""
        proc, self.proc = self.proc, None
        if proc is None:
            return ""
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""

    def version(self):
        out = subprocess.run([nginx_binary(), "-v"], capture_output=True, text=True).stderr.strip()
        return out.split("/", 1)[-1] if "/" in out else out


# --- running one measurement -------------------------------------------------------------------

class Failed(Exception):
    pass


def reason_from(stderr, stdout="", code=None):
    """The first line of stderr; for a Python traceback, its last line (the exception)."""
    lines = [l.strip() for l in (stderr or "").splitlines() if l.strip()]
    if lines and lines[0].startswith("Traceback"):
        line = lines[-1]
    elif lines:
        line = lines[0]
    else:
        line = (stdout or "").strip().splitlines()[-1] if (stdout or "").strip() else f"exit status {code}"
    return line[:110]


def child_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra or {})
    return env


def run_json(cmd, env, timeout=STEP_TIMEOUT):
    """Runs one measuring process; returns its JSON line (the last one on stdout)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise Failed(f"timed out after {timeout} s")
    except OSError as e:
        raise Failed(str(e))
    if p.returncode != 0:
        raise Failed(reason_from(p.stderr, p.stdout, p.returncode))
    for line in reversed(p.stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    raise Failed("no JSON result line on stdout: " + reason_from(p.stderr, p.stdout, 0))


def run_wrk(url, connections, threads, duration):
    cmd = ["wrk", f"-c{connections}", f"-t{threads}", f"-d{duration}s", "--timeout", "10s",
           "-H", f"Accept: {ACCEPT}", "-H", "User-Agent: apimacro-bench", url]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 30,
                           env=child_env(), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Failed(str(e))
    if p.returncode != 0:
        raise Failed(reason_from(p.stderr, p.stdout, p.returncode))
    for bad in ("Non-2xx or 3xx responses", "Socket errors"):
        if bad in p.stdout:
            raise Failed(next(l.strip() for l in p.stdout.splitlines() if bad in l))
    m = re.search(r"Requests/sec:\s+([\d.]+)", p.stdout)
    if not m:
        raise Failed("no Requests/sec in wrk's output")
    return float(m.group(1))


def time_processes(cmd, env, runs, warmup, expect=None):
    """Wall time in ms of `cmd` as a fresh process, `runs` times after `warmup` runs."""
    times = []
    for i in range(warmup + runs):
        start = time.perf_counter()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise Failed("timed out after 60 s")
        except OSError as e:
            raise Failed(str(e))
        elapsed = time.perf_counter() - start
        if p.returncode != 0:
            raise Failed(reason_from(p.stderr, p.stdout, p.returncode))
        if expect is not None and expect not in p.stdout:
            raise Failed(f"output lacks {expect!r}: {p.stdout.strip()[:60]!r}")
        if i >= warmup:
            times.append(elapsed * 1000)
    return times


# --- the benchmark plan --------------------------------------------------------------------------

class Row:
    def __init__(self, bench, tool, unit, measure, apimacro=False, note=""):
        self.bench, self.tool, self.unit = bench, tool, unit
        self.measure = measure      # callable(rep) -> float or dict, raising Failed
        self.apimacro = apimacro
        self.note = note
        self.values, self.runs = [], []
        self.status, self.reason = "ok", ""
        self.ratio = None

    @property
    def value(self):
        return statistics.median(self.values) if self.values and self.status == "ok" else None

    def fail(self, reason):
        if self.status == "ok":
            self.status, self.reason = "n/a", reason


def rate_of(result, unit):
    if result.get("cached"):
        return "cached"
    seconds = float(result["seconds"])
    if seconds <= 0:
        raise Failed(f"non-positive time {seconds}")
    if unit == "MB/s":
        return result["bytes"] * result["count"] / seconds / 1e6
    return result["count"] / seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 repetition, fewer requests and runs")
    ap.add_argument("--with-apimacro", action="store_true",
                    help="build the release apimacro first (swift build -c release --product apimacro)")
    ap.add_argument("--reps", type=int, help="repetitions of each measurement (default 3, quick 1)")
    ap.add_argument("--only", help="comma-separated benchmarks: sequential,fan-out,pagination,decoding,start-up,cache")
    args = ap.parse_args()

    quick = args.quick
    reps = args.reps or (1 if quick else 3)
    requests_n = 300 if quick else 2000
    warm_n = 50 if quick else 200
    wrk_seconds = 2 if quick else 5
    decode_n = 5 if quick else 20
    startup_runs = 5 if quick else 20
    passes = 2 if quick else 5        # full 20-page paginations timed per process
    only = set(args.only.split(",")) if args.only else None

    t0 = time.time()
    load_before = os.getloadavg()
    tmp = os.environ.get("BENCH_TMP")
    own_tmp = not tmp
    if own_tmp:
        tmp = tempfile.mkdtemp(prefix="apimacro-bench.")

    def on_term(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)

    nginx = Nginx(tmp)
    try:
        # apimacro: build only when asked; otherwise use the release binary if it exists.
        binary = os.environ.get("APIMACRO_BIN") or os.path.join(ROOT, ".build", "release", "apimacro")
        apimacro_missing = None
        if args.with_apimacro:
            print("bench: swift build -c release --product apimacro", file=sys.stderr, flush=True)
            b = subprocess.run(["swift", "build", "-c", "release", "--product", "apimacro"], cwd=ROOT,
                               capture_output=True, text=True)
            if b.returncode != 0:
                err = [l for l in (b.stderr + b.stdout).splitlines() if "error" in l.lower()]
                apimacro_missing = "build failed: " + (err[0] if err else f"exit {b.returncode}")[:90]
        if apimacro_missing is None and not os.access(binary, os.X_OK):
            apimacro_missing = "no release build (Benchmarks/run --with-apimacro builds it)"
        run_flags, apimacro_version = [], None
        if apimacro_missing is None:
            h = subprocess.run([binary, "run", "--help"], capture_output=True, text=True, timeout=30)
            if "--no-cache" in h.stdout + h.stderr:
                run_flags = ["--no-cache"]
            v = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
            apimacro_version = (v.stdout.strip() or v.stderr.strip()).splitlines()[0] if v.returncode == 0 else "?"

        nginx.start()
        url = nginx.url
        print(f"bench: nginx {nginx.version()} on {url} (temp dir {tmp})", file=sys.stderr, flush=True)

        am_home = os.path.join(tmp, "apimacro-home")
        # APIMACRO_GITHUB_PACE=off: GitHub's secondary limits (900 points a minute) would pace
        # 2,000 GETs to nginx over two minutes; the benchmarks measure the client, not the pace.
        am_env = child_env({"APIMACRO_GITHUB_URL": url, "APIMACRO_HOME": am_home, "APIMACRO_GITHUB_PACE": "off",
                            "XDG_CONFIG_HOME": os.path.join(tmp, "config"),
                            "XDG_CACHE_HOME": os.path.join(tmp, "cache")})
        for secret in ("APIMACRO_GITHUB_TOKEN", "GITHUB_TOKEN"):
            am_env.pop(secret, None)
        os.makedirs(am_home, exist_ok=True)
        py_env = child_env()
        cache_note = "" if run_flags or apimacro_missing else "cache on (no --no-cache flag)"

        def peer(bench, tool, count, warmup, unit, python=None):
            def measure(rep):
                command = [python or PY, WORKLOADS, bench, tool, url, str(count), str(warmup)]
                return rate_of(run_json(command, py_env), unit)
            return measure

        def macro(name, *margs, unit):
            def measure(rep):
                if apimacro_missing:
                    raise Failed(apimacro_missing)
                result = run_json([binary, "run", *run_flags, os.path.join(MACROS, name), *margs], am_env)
                return rate_of(result, unit)
            return measure

        def cached_macro(name, flags, base, *margs, unit):
            # The HTTP cache on (or off with flags=["--no-cache"]), a fresh cache folder per process.
            def measure(rep):
                if apimacro_missing:
                    raise Failed(apimacro_missing)
                cache_dir = tempfile.mkdtemp(prefix="cache.", dir=tmp)
                env = dict(am_env, APIMACRO_GITHUB_URL=base, XDG_CACHE_HOME=cache_dir)
                try:
                    result = run_json([binary, "run", *flags, os.path.join(MACROS, name), *margs], env)
                finally:
                    shutil.rmtree(cache_dir, ignore_errors=True)
                return rate_of(result, unit)
            return measure

        def wrk(connections, threads):
            warmed = []

            def measure(rep):
                if not warmed:
                    run_wrk(url + "/users/octocat", connections, threads, 1)
                    warmed.append(True)
                return run_wrk(url + "/users/octocat", connections, threads, wrk_seconds)
            return measure

        def startup(cmd, env, expect=None, needs_apimacro=False):
            def measure(rep):
                if needs_apimacro and apimacro_missing:
                    raise Failed(apimacro_missing)
                runs = time_processes(cmd, env, startup_runs, 3, expect)
                return {"value": statistics.median(runs), "runs": runs}
            return measure

        n, w = str(requests_n), str(warm_n)
        groups = [
            ("sequential", f"{requests_n} GETs of /users/octocat, one at a time, JSON decoded", "req/s", [
                Row("sequential", "apimacro github.user", "req/s", macro("seq_user.py", n, w, unit="req/s"),
                    True, cache_note),
                Row("sequential", "http.client", "req/s", peer("sequential", "http.client", requests_n, warm_n, "req/s")),
                Row("sequential", "pycurl", "req/s",
                    peer("sequential", "pycurl", requests_n, warm_n, "req/s", python="/usr/bin/python3"),
                    note="Debian's python3-pycurl"),
                Row("sequential", "urllib3", "req/s", peer("sequential", "urllib3", requests_n, warm_n, "req/s")),
                Row("sequential", "requests Session", "req/s", peer("sequential", "requests", requests_n, warm_n, "req/s")),
                Row("sequential", "httpx Client", "req/s", peer("sequential", "httpx", requests_n, warm_n, "req/s")),
                Row("sequential", f"wrk -c1 -t1 -d{wrk_seconds}s", "req/s", wrk(1, 1), note="transport limit, no decoding"),
            ]),
            ("fan-out", f"{requests_n} GETs of /users/octocat, 32 in flight", "req/s", [
                Row("fan-out", "apimacro map(github.user, 32)", "req/s", macro("fanout_user.py", n, w, unit="req/s"),
                    True, cache_note),
                Row("fan-out", "aiohttp", "req/s", peer("fan-out", "aiohttp", requests_n, warm_n, "req/s")),
                Row("fan-out", "httpx AsyncClient", "req/s", peer("fan-out", "httpx", requests_n, warm_n, "req/s")),
                Row("fan-out", "threads(32)+requests", "req/s",
                    peer("fan-out", "threads+requests", requests_n, warm_n, "req/s")),
                Row("fan-out", f"wrk -c32 -t2 -d{wrk_seconds}s", "req/s", wrk(32, 2), note="transport limit, no decoding"),
            ]),
            ("pagination", f"/users/many/repos: {PAGES} pages x {PER_PAGE} repos via Link rel=next, "
                           f"{passes} timed passes per process", "items/s", [
                Row("pagination", "apimacro github.repos", "items/s",
                    macro("paginate_repos.py", str(passes), unit="items/s"),
                    True, cache_note),
                Row("pagination", "http.client", "items/s", peer("pagination", "http.client", passes, 1, "items/s")),
                Row("pagination", "urllib3", "items/s", peer("pagination", "urllib3", passes, 1, "items/s")),
                Row("pagination", "requests Session", "items/s", peer("pagination", "requests", passes, 1, "items/s")),
                Row("pagination", "PyGithub", "items/s", peer("pagination", "PyGithub", passes, 1, "items/s"),
                    note="seconds_between_requests=0"),
            ]),
            ("decoding", f"5 MB JSON body in memory, decoded {decode_n} times", "MB/s", [
                Row("decoding", "apimacro Response.json()", "MB/s",
                    macro("decode_big.py", url + "/big.json", str(decode_n), "2", unit="MB/s"), True),
                Row("decoding", "json.loads", "MB/s", peer("decoding", "json", decode_n, 2, "MB/s")),
                Row("decoding", "orjson.loads", "MB/s", peer("decoding", "orjson", decode_n, 2, "MB/s")),
            ]),
            ("cache", f"{requests_n} GETs of one user, one at a time, through the HTTP cache "
                      f"(the warm-up fills it)", "req/s", [
                Row("cache", "apimacro github.user, cache hit", "req/s",
                    cached_macro("seq_user.py", [], url + "/fresh", n, w, unit="req/s"), True,
                    "Cache-Control: max-age, no request"),
                Row("cache", "apimacro --no-cache (network GET)", "req/s",
                    cached_macro("seq_user.py", ["--no-cache"], url, n, w, unit="req/s"),
                    note="the same macro, cache off"),
                Row("cache", "apimacro, revalidated (304)", "req/s",
                    cached_macro("seq_user.py", [], url, n, w, unit="req/s"),
                    note="ETag from nginx, If-None-Match each time"),
                Row("cache", "http.client", "req/s", peer("sequential", "http.client", requests_n, warm_n, "req/s")),
            ]),
            ("start-up", f"fresh process, median of {startup_runs} runs (lower is better)", "ms", [
                Row("start-up", "apimacro run empty.py", "ms",
                    startup([binary, "run", *run_flags, os.path.join(MACROS, "empty.py")], am_env, needs_apimacro=True),
                    True),
                Row("start-up", "python3 -c pass", "ms", startup([PY, "-c", "pass"], py_env)),
                Row("start-up", "apimacro run fetch_one.py", "ms",
                    startup([binary, "run", *run_flags, os.path.join(MACROS, "fetch_one.py")], am_env, "octocat",
                            needs_apimacro=True), True),
                Row("start-up", "python3 fetch_one (requests)", "ms", startup([PY, FETCH_ONE, url], py_env, "octocat")),
            ]),
        ]
        if only:
            unknown = only - {g[0] for g in groups}
            if unknown:
                raise SystemExit(f"bench: unknown benchmark(s): {', '.join(sorted(unknown))}")
            groups = [g for g in groups if g[0] in only]

        # Run: repetitions interleaved across the tools of a group, so drift hits all alike.
        for bench, _, _, rows in groups:
            print(f"bench: {bench}", file=sys.stderr, flush=True)
            for rep in range(reps):
                for row in rows:
                    if row.status != "ok":
                        continue
                    if time.time() - t0 > BUDGET_SECONDS:
                        row.fail("skipped: time budget of the run used up")
                        continue
                    try:
                        v = row.measure(rep)
                    except Failed as e:
                        row.fail(str(e))
                        continue
                    if v == "cached":
                        row.status, row.reason = "cached", "Response.json() returns the same object each call"
                    elif isinstance(v, dict):
                        row.values.append(v["value"])
                        row.runs.extend(v["runs"])
                    else:
                        row.values.append(v)

        # Ratios: apimacro / peer (start-up: apimacro_ms / peer_ms, paired by position).
        for bench, _, unit, rows in groups:
            if bench == "start-up":
                pairs = [(rows[0], rows[1])] + ([(rows[2], rows[3])] if len(rows) > 3 else [])
                for am, p in pairs:
                    if am.value and p.value:
                        p.ratio = am.value / p.value
            else:
                am = rows[0]
                for p in rows[1:]:
                    if am.value and p.value:
                        p.ratio = am.value / p.value

        facts = machine_facts(nginx, apimacro_version, binary, run_flags, apimacro_missing)
        facts.update(nginx.facts)
        facts.update(reps=reps, quick=quick, seconds=round(time.time() - t0, 1),
                     loadavg_before=[round(x, 2) for x in load_before],
                     loadavg_after=[round(x, 2) for x in os.getloadavg()])
        print_table(groups, facts)
        write_json(groups, facts, url)
    finally:
        nginx.stop()
        if own_tmp:
            shutil.rmtree(tmp, ignore_errors=True)


# --- output ---------------------------------------------------------------------------------------

def machine_facts(nginx, apimacro_version, binary, run_flags, apimacro_missing):
    from importlib import metadata
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    wrk_v = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split(" [")[0].strip()
    py = subprocess.run([PY, "-c", "import sys; print(sys.version.split()[0], sys.executable)"],
                        capture_output=True, text=True).stdout.split()
    libs = {}
    for name in ("requests", "httpx", "aiohttp", "urllib3", "orjson", "PyGithub"):
        try:
            libs[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            libs[name] = None
    return {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "nproc": os.cpu_count(), "cpu": cpu, "kernel": platform.release(),
        "python": py[0] if py else platform.python_version(), "python_executable": PY,
        "nginx": nginx.version(), "nginx_workers": 1, "wrk": wrk_v, "libraries": libs,
        "apimacro": apimacro_version or f"n/a ({apimacro_missing})", "apimacro_binary": binary,
        "apimacro_run_flags": run_flags,
    }


def figure(row):
    if row.status == "cached":
        return "cached"
    if row.status != "ok":
        reason = row.reason if len(row.reason) <= 60 else row.reason[:59] + "…"
        return f"n/a (reason: {reason})"
    v = row.value
    if row.unit == "ms":
        return f"{v:,.1f} ms"
    if row.unit == "MB/s":
        return f"{v:,.0f} MB/s"
    text = f"{v:,.0f} {row.unit}"
    if row.unit == "items/s":
        text += f" ({v / PER_PAGE:,.1f} pages/s)"
    return text


def spread(row):
    if row.status != "ok" or len(row.values) < 2:
        return ""
    return f"±{(max(row.values) - min(row.values)) / 2 / row.value * 100:.0f}%"


def print_table(groups, facts):
    libs = ", ".join(f"{k} {v}" for k, v in facts["libraries"].items())
    print()
    print(f"apimacro benchmarks  {facts['date']}  {'QUICK  ' if facts['quick'] else ''}"
          f"reps={facts['reps']} (median)  run took {facts['seconds']:.0f} s")
    print(f"machine: nproc={facts['nproc']}  {facts['cpu']}  kernel {facts['kernel']}")
    print(f"python {facts['python']} ({facts['python_executable']})  nginx {facts['nginx']} "
          f"(1 worker, 127.0.0.1)  {facts['wrk']}")
    print(f"peers: {libs}")
    print(f"apimacro: {facts['apimacro']}  run flags: {' '.join(facts['apimacro_run_flags']) or '(none)'}")
    busy = facts["loadavg_before"][0] > 0.5
    print(f"load average (1 min) before {facts['loadavg_before'][0]:.2f}, after {facts['loadavg_after'][0]:.2f}"
          + ("  WARNING: the machine was busy before the run; figures are noisy" if busy else ""))
    print(f"data: user {facts['user_bytes']} B, repo ~{facts['repo_bytes']} B, big.json "
          f"{facts['big_bytes']:,} B ({facts['big_items']} users)")
    header = ("benchmark", "tool", "figure", "spread", "apimacro / peer")
    lines = []
    for bench, desc, unit, rows in groups:
        for row in rows:
            if row.apimacro:
                ratio = ""
            elif row.ratio is not None:
                ratio = f"{row.ratio:.2f}"
            else:
                ratio = "—"
            fig = figure(row) + (f"  [{row.note}]" if row.note and row.status == "ok" else "")
            lines.append((bench, row.tool, fig, spread(row), ratio))
    widths = [max(len(str(l[i])) for l in lines + [header]) for i in range(5)]
    fmt = lambda l: "  ".join(str(c).ljust(widths[i]) if i != 4 else str(c) for i, c in enumerate(l))
    print()
    print(fmt(header))
    print("  ".join("-" * w for w in widths))
    last = None
    for l in lines:
        if last and l[0] != last:
            print()
        print(fmt(l if l[0] != last else ("",) + l[1:]))
        last = l[0]
    print()
    print("ratio: apimacro's figure / the peer's (throughput: >1 means apimacro is faster; "
          "start-up: apimacro ms / peer ms, <1 means apimacro is faster).")
    for bench, desc, unit, rows in groups:
        print(f"  {bench}: {desc}")
    print("spread: ± half the range of the repetitions' figures, relative to their median.")


def write_json(groups, facts, url):
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    out = {"machine": facts, "server": url, "rows": []}
    for bench, desc, unit, rows in groups:
        for row in rows:
            out["rows"].append({
                "benchmark": bench, "description": desc, "tool": row.tool, "apimacro": row.apimacro,
                "unit": row.unit, "value": row.value, "values": row.values, "runs": row.runs or None,
                "status": row.status,
                "reason": row.reason or None, "note": row.note or None,
                "ratio_apimacro_over_peer": row.ratio,
                "pages_per_s": row.value / PER_PAGE if row.unit == "items/s" and row.value else None,
            })
    tmp = RESULTS + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=2)
    os.replace(tmp, RESULTS)
    print(f"\nwrote {os.path.relpath(RESULTS, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
