#!/usr/bin/env bash
# Benchmarks/per_request.sh BIN [BIN2 ...]: a cache hit, a `--no-cache` GET and a 304 per
# request, as instructions (callgrind) and CPU time (perf stat task-clock).
#
# Each workload is the loop `for _ in range(n): github.get(path)` against a fresh
# `apimacro-testserver` (its rate-limit budget runs out after 5,000 calls) and a fresh cache
# folder, no token, APIMACRO_GITHUB_PACE=off, PYTHONHASHSEED=0:
#   hit   /cache/max-age/3600          (one fetch, then hits)
#   get   /cache/etag/a with --no-cache (a network GET each call)
#   304   /cache/etag/a                (one fetch, then a 304 each call)
# and the same three on a GitHub user of about 1.3 KB (the test server's `/users/octocat`, built
# from the recorded `octokit-get-repository.json` of ../shared/fixtures/github, octokit/fixtures):
#   uhit  /cache/fresh/users/octocat    (the user with max-age=3600: one fetch, then hits)
#   uget  /users/octocat with --no-cache
#   u304  /users/octocat               (one fetch, then a 304 each call)
# Instructions a call: callgrind's total, (N = 500 − N = 100) / 400. CPU a call: perf stat's
# task-clock, (N = 2,100 − N = 100) / 2,000, the median of REPS (default 5) pairs, the
# binaries interleaved. BIN should be a stripped copy of a release build (`strip --strip-debug`;
# a copy still finds its Python package in the checkout it was built from).
#
# Environment: SERVER (default .build/debug/apimacro-testserver), REPS, SKIP_CALLGRIND=1,
# SKIP_PERF=1, WORKLOADS (default "hit get 304"; "uhit uget u304" for the user), CALL=http for
# `apimacro.get(URL)` in the loop instead of `github.get(path)`.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
server="${SERVER:-$here/../.build/debug/apimacro-testserver}"
reps="${REPS:-5}"
workloads="${WORKLOADS:-hit get 304}"
[ $# -ge 1 ] || { echo "usage: $0 BIN [BIN2 ...]" >&2; exit 2; }
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cat >"$scratch/loop.py" <<'EOF'
import os, sys
import apimacro
from apimacro import github
path, n, call = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if call == "http":
    url = os.environ["APIMACRO_GITHUB_URL"] + path
    for _ in range(n):
        apimacro.get(url)
else:
    for _ in range(n):
        github.get(path)
EOF

# run BIN WORKLOAD N PREFIX...: one process under PREFIX (callgrind or perf), its own server and cache.
run() {
    local bin="$1" workload="$2" n="$3"
    shift 3
    local path flags=()
    case "$workload" in
        hit) path=/cache/max-age/3600 ;;
        get) path=/cache/etag/a; flags=(--no-cache) ;;
        304) path=/cache/etag/a ;;
        uhit) path=/cache/fresh/users/octocat ;;
        uget) path=/users/octocat; flags=(--no-cache) ;;
        u304) path=/users/octocat ;;
    esac
    local exports
    exports="$("$server" --env 2>/dev/null)"
    local url pid
    url="$(sed -n 's/^export APIMACRO_GITHUB_URL=//p' <<<"$exports")"
    pid="$(sed -n 's/^export APIMACRO_TESTSERVER_PID=//p' <<<"$exports")"
    local home="$scratch/home.$RANDOM"
    mkdir -p "$home"
    env -u GITHUB_TOKEN -u GH_TOKEN APIMACRO_GITHUB_URL="$url" APIMACRO_GITHUB_PACE=off PYTHONHASHSEED=0 \
        HOME="$home" XDG_CACHE_HOME="$home/cache" APIMACRO_HOME="$home/apimacro" \
        "$@" "$bin" run "${flags[@]}" "$scratch/loop.py" "$path" "$n" "${CALL:-github}" >/dev/null 2>"$scratch/err" ||
        { kill "$pid"; echo "$bin failed:" >&2; cat "$scratch/err" >&2; exit 1; }
    kill "$pid"
    rm -rf "$home"
}

# callgrind's instruction total for one process.
instructions() {
    local out="$scratch/cg.out"
    run "$1" "$2" "$3" valgrind --tool=callgrind --callgrind-out-file="$out"
    sed -n 's/^summary: //p' "$out" | awk '{print $1}'
    rm -f "$out"
}

# perf stat's task-clock in milliseconds for one process.
taskclock() {
    local out="$scratch/perf.out"
    run "$1" "$2" "$3" perf stat -x, -e task-clock -o "$out"
    awk -F, '/task-clock/ {print $1}' "$out"
}

if [ -z "${SKIP_CALLGRIND:-}" ]; then
    for bin in "$@"; do
        for workload in $workloads; do
            small="$(instructions "$bin" "$workload" 100)"
            large="$(instructions "$bin" "$workload" 500)"
            awk -v b="$bin" -v w="$workload" -v s="$small" -v l="$large" \
                'BEGIN { printf "callgrind %-4s %s: %.1f k instructions a call\n", w, b, (l - s) / 400 / 1000 }'
        done
    done
fi

if [ -z "${SKIP_PERF:-}" ]; then
    declare -A samples
    for _ in $(seq "$reps"); do
        for workload in $workloads; do
            for bin in "$@"; do
                small="$(taskclock "$bin" "$workload" 100)"
                large="$(taskclock "$bin" "$workload" 2100)"
                samples["$workload|$bin"]+="$(awk -v s="$small" -v l="$large" 'BEGIN { printf "%.2f ", (l - s) / 2000 * 1000 }')"
            done
        done
    done
    for workload in $workloads; do
        for bin in "$@"; do
            printf "perf      %-4s %s: " "$workload" "$bin"
            tr ' ' '\n' <<<"${samples["$workload|$bin"]}" | grep . | sort -n |
                awk '{ v[NR] = $1 } END { printf "%.2f µs CPU a call (median of %d; %s–%s)\n", v[int((NR + 1) / 2)], NR, v[1], v[NR] }'
        done
    done
fi
