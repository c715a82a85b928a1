"""The Python peers' side of the benchmarks: one workload per process.

    python workloads.py BENCH TOOL BASE_URL COUNT WARMUP

COUNT is requests (sequential, fan-out), full passes over the 20 pages (pagination)
or decodes (decoding).

Each run warms up (WARMUP requests, or one full pass), then times the workload
with time.perf_counter() and prints one JSON line {"name", "count", "seconds", ...}
as the apimacro macros in ../macros/ do. A wrong result raises (exit 1), so the
harness reports the row as n/a rather than a rate for work that was not done.
"""
import json
import sys
import time

HEADERS = {"Accept": "application/vnd.github+json", "User-Agent": "apimacro-bench"}
PAGES = 20
PER_PAGE = 100
ITEMS = PAGES * PER_PAGE


def emit(name, count, seconds, **extra):
    print(json.dumps({"name": name, "count": count, "seconds": seconds, **extra}), flush=True)


def check_user(user):
    if user.get("login") != "octocat":
        raise RuntimeError(f"unexpected user object: {str(user)[:80]}")


def timed(fn, count, warmup):
    if warmup:
        fn(warmup)
    start = time.perf_counter()
    fn(count)
    return time.perf_counter() - start


# --- sequential: COUNT GETs of /users/octocat, one after another --------------------

def seq_http_client(base, count, warmup):
    import http.client
    from urllib.parse import urlsplit
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port)

    def run(n):
        for _ in range(n):
            conn.request("GET", "/users/octocat", headers=HEADERS)
            r = conn.getresponse()
            body = r.read()
            if r.status != 200:
                raise RuntimeError(f"HTTP {r.status}")
            check_user(json.loads(body))
    return timed(run, count, warmup)


def seq_pycurl(base, count, warmup):
    # Debian's python3-pycurl (libcurl 7.88, the library apimacro's transport uses): run with
    # /usr/bin/python3, since pip cannot build it into the venv without root's headers.
    import pycurl
    from io import BytesIO
    handle = pycurl.Curl()
    handle.setopt(pycurl.URL, base + "/users/octocat")
    handle.setopt(pycurl.HTTPHEADER, [f"{k}: {v}" for k, v in HEADERS.items()])
    handle.setopt(pycurl.ACCEPT_ENCODING, "")

    def run(n):
        for _ in range(n):
            buffer = BytesIO()
            handle.setopt(pycurl.WRITEDATA, buffer)
            handle.perform()
            status = handle.getinfo(pycurl.RESPONSE_CODE)
            if status != 200:
                raise RuntimeError(f"HTTP {status}")
            check_user(json.loads(buffer.getvalue()))
    return timed(run, count, warmup)


def seq_urllib3(base, count, warmup):
    import urllib3
    pool = urllib3.PoolManager(headers=HEADERS)
    url = base + "/users/octocat"

    def run(n):
        for _ in range(n):
            r = pool.request("GET", url)
            if r.status != 200:
                raise RuntimeError(f"HTTP {r.status}")
            check_user(r.json())
    return timed(run, count, warmup)


def seq_requests(base, count, warmup):
    import requests
    s = requests.Session()
    s.headers.update(HEADERS)
    url = base + "/users/octocat"

    def run(n):
        for _ in range(n):
            r = s.get(url)
            r.raise_for_status()
            check_user(r.json())
    return timed(run, count, warmup)


def seq_httpx(base, count, warmup):
    import httpx
    c = httpx.Client(headers=HEADERS)
    url = base + "/users/octocat"

    def run(n):
        for _ in range(n):
            r = c.get(url)
            r.raise_for_status()
            check_user(r.json())
    return timed(run, count, warmup)


# --- fan-out: COUNT GETs with 32 in flight ---------------------------------------------

CONCURRENCY = 32



async def timed_gather(one, count, warmup):
    """Run `one()` `warmup` times, then `count` times timed, all at once through asyncio.gather;
    checks every user and returns the timed seconds."""
    import asyncio

    async def run(n):
        for user in await asyncio.gather(*(one() for _ in range(n))):
            check_user(user)

    await run(warmup)
    start = time.perf_counter()
    await run(count)
    return time.perf_counter() - start

def fan_aiohttp(base, count, warmup):
    import asyncio
    import aiohttp
    url = base + "/users/octocat"

    async def main():
        conn = aiohttp.TCPConnector(limit=CONCURRENCY)
        async with aiohttp.ClientSession(connector=conn, headers=HEADERS) as s:
            sem = asyncio.Semaphore(CONCURRENCY)

            async def one():
                async with sem:
                    async with s.get(url) as r:
                        r.raise_for_status()
                        return await r.json()

            return await timed_gather(one, count, warmup)
    return asyncio.run(main())


def fan_httpx(base, count, warmup):
    import asyncio
    import httpx
    url = base + "/users/octocat"

    async def main():
        limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
        async with httpx.AsyncClient(headers=HEADERS, limits=limits, timeout=30) as c:
            sem = asyncio.Semaphore(CONCURRENCY)

            async def one():
                async with sem:
                    r = await c.get(url)
                    r.raise_for_status()
                    return r.json()

            return await timed_gather(one, count, warmup)
    return asyncio.run(main())


def fan_threads_requests(base, count, warmup):
    import threading
    from concurrent.futures import ThreadPoolExecutor
    import requests
    url = base + "/users/octocat"
    local = threading.local()

    def one(_):
        s = getattr(local, "session", None)
        if s is None:
            s = local.session = requests.Session()
            s.headers.update(HEADERS)
        r = s.get(url)
        r.raise_for_status()
        return r.json()

    with ThreadPoolExecutor(CONCURRENCY) as pool:
        def run(n):
            for user in pool.map(one, range(n)):
                check_user(user)
        return timed(run, count, warmup)


# --- pagination: every page of /users/many/repos, following Link rel="next" -------------

def next_link(header):
    """The rel="next" URL of a Link header, or None."""
    for part in (header or "").split(","):
        section = part.split(";")
        if len(section) < 2:
            continue
        url = section[0].strip()
        if any(p.strip() == 'rel="next"' for p in section[1:]) and url.startswith("<"):
            return url[1:-1]
    return None


def check_items(items):
    if len(items) != ITEMS or len({r["id"] for r in items}) != ITEMS:
        raise RuntimeError(f"collected {len(items)} items, expected {ITEMS} distinct")


def pag_http_client(base, count, warmup):
    import http.client
    from urllib.parse import urlsplit
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port)

    def run(passes):
        for _ in range(passes):
            one_pass()

    def one_pass():
        items, pages = [], 0
        url = f"/users/many/repos?per_page={PER_PAGE}"
        while url:
            conn.request("GET", url, headers=HEADERS)
            r = conn.getresponse()
            body = r.read()
            if r.status != 200:
                raise RuntimeError(f"HTTP {r.status}")
            items.extend(json.loads(body))
            pages += 1
            nxt = next_link(r.getheader("Link"))
            url = None
            if nxt:
                n = urlsplit(nxt)
                url = n.path + ("?" + n.query if n.query else "")
        check_items(items)
    return timed(run, count, 1)


def pag_requests(base, count, warmup):
    import requests
    s = requests.Session()
    s.headers.update(HEADERS)

    def run(passes):
        for _ in range(passes):
            items = []
            url = f"{base}/users/many/repos?per_page={PER_PAGE}"
            while url:
                r = s.get(url)
                r.raise_for_status()
                items.extend(r.json())
                url = r.links.get("next", {}).get("url")
            check_items(items)
    return timed(run, count, 1)


def pag_urllib3(base, count, warmup):
    import urllib3
    pool = urllib3.PoolManager(headers=HEADERS)

    def run(passes):
        for _ in range(passes):
            items = []
            url = f"{base}/users/many/repos?per_page={PER_PAGE}"
            while url:
                r = pool.request("GET", url)
                if r.status != 200:
                    raise RuntimeError(f"HTTP {r.status}")
                items.extend(json.loads(r.data))
                url = next_link(r.headers.get("Link"))
            check_items(items)
    return timed(run, count, 1)


def pag_pygithub(base, count, warmup):
    import logging
    import warnings
    warnings.simplefilter("ignore")
    logging.getLogger("github").setLevel(logging.ERROR)
    from github import Github
    # PyGithub sleeps 0.25 s between requests by default (seconds_between_requests),
    # which would measure its throttle rather than its client: turned off here.
    g = Github(base_url=base, per_page=PER_PAGE, seconds_between_requests=0, user_agent=HEADERS["User-Agent"])
    user = g.get_user("many")

    def run(passes):
        for _ in range(passes):
            repos = list(user.get_repos())
            if len(repos) != ITEMS or len({r.id for r in repos}) != ITEMS:
                raise RuntimeError(f"collected {len(repos)} repos, expected {ITEMS} distinct")
    return timed(run, count, 1)


# --- decoding: a 5 MB body already in memory, COUNT times ---------------------------------

def _big_body(base):
    import urllib.request
    with urllib.request.urlopen(base + "/big.json") as r:
        return r.read()


def dec(loads, base, count, warmup):
    body = _big_body(base)
    for _ in range(max(warmup, 1)):
        first = loads(body)
    if not isinstance(first, list) or not first:
        raise RuntimeError("big.json did not decode to a non-empty list")
    start = time.perf_counter()
    for _ in range(count):
        loads(body)
    return time.perf_counter() - start, len(body)


def dec_json(base, count, warmup):
    return dec(json.loads, base, count, warmup)


def dec_orjson(base, count, warmup):
    import orjson
    return dec(orjson.loads, base, count, warmup)


WORKLOADS = {
    ("sequential", "http.client"): seq_http_client,
    ("sequential", "pycurl"): seq_pycurl,
    ("sequential", "urllib3"): seq_urllib3,
    ("sequential", "requests"): seq_requests,
    ("sequential", "httpx"): seq_httpx,
    ("fan-out", "aiohttp"): fan_aiohttp,
    ("fan-out", "httpx"): fan_httpx,
    ("fan-out", "threads+requests"): fan_threads_requests,
    ("pagination", "http.client"): pag_http_client,
    ("pagination", "requests"): pag_requests,
    ("pagination", "urllib3"): pag_urllib3,
    ("pagination", "PyGithub"): pag_pygithub,
    ("decoding", "json"): dec_json,
    ("decoding", "orjson"): dec_orjson,
}


def main(argv):
    bench, tool, base, count, warmup = argv[1], argv[2], argv[3], int(argv[4]), int(argv[5])
    result = WORKLOADS[(bench, tool)](base, count, warmup)
    name = f"{bench}/{tool}"
    if bench == "pagination":
        emit(name, ITEMS * count, result, pages=PAGES * count, passes=count)
    elif bench == "decoding":
        seconds, size = result
        emit(name, count, seconds, bytes=size)
    else:
        emit(name, count, result)


if __name__ == "__main__":
    main(sys.argv)
