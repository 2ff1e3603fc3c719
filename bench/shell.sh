#!/usr/bin/env bash
# Shell benchmarks (release profile, in process): the spawn overhead of Bash{command:"true"}
# through the runtime against a bare `bash -c true`, and 1 GB of output through Bash (wall
# time, peak RSS growth, spill file) against the same pipeline run bare.
#   bench/shell.sh              # 300 calls per round, 1 GB of output
#   bench/shell.sh 100          # quicker (or BENCH_ITERS=100)
#   BENCH_GB=0 bench/shell.sh   # skip the 1 GB case; BENCH_DIR=/dev/shm to keep it off disk
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo bench -p toolbelt-tools --bench shell -- "$@"
