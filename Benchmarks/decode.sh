#!/usr/bin/env bash
# Benchmarks/decode.sh [PASSES]: the native JSON fast path against json.loads on a 5 MB body of
# recorded GitHub repositories, CPU time, one process, release build (its own scratch folder:
# only PythonBridge is compiled, a minute or two).
# Benchmarks/decode.sh scan PAGE.json [PASSES]: only JSONTape.scan of one file (a pagination
# page: Benchmarks/harness.py's write_data makes pages/page-N.json), no Python; for instruction
# counts, callgrind `.build-bench-decode/release/json-decode-bench PAGE.json N scan` for two N.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/.."
APIMACRO_BENCH_DECODE=1 swift build -c release --scratch-path .build-bench-decode --product json-decode-bench >&2
if [ "${1:-}" = scan ]; then
    .build-bench-decode/release/json-decode-bench "$2" "${3:-200}" scan
    exit
fi
.build-bench-decode/release/json-decode-bench "$here/../../shared/fixtures/github/octokit-get-repository.json" "${1:-20}"
