#!/usr/bin/env bash
# Runs the pipeline-overhead benchmark (release profile).
#   bench/pipeline.sh            # default: 20000 calls per round
#   bench/pipeline.sh 2000       # quick run (or BENCH_ITERS=2000 bench/pipeline.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo bench -p toolbelt-runtime --bench pipeline -- "$@"
