#!/usr/bin/env bash
# Many MCP sessions over Streamable HTTP: sessions/s, calls/s, errors, and the server's memory
# before, at its peak and after the idle sessions were closed.
#   bench/mcp_http.sh               # 1000 sessions x 5 calls, idle timeout 3 s
#   bench/mcp_http.sh 200 2         # quick
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p toolbelt
cargo bench -p toolbelt-mcp --bench http_load -- "${1:-1000}" "${2:-5}"
