#!/usr/bin/env bash
# MCP server benchmark beside the reference server-filesystem: raw JSON-RPC figures (Rust
# driver), then through the official Python SDK client. Needs the peers (.ci/run installs them).
#   bench/mcp.sh            # 5 rounds
#   bench/mcp.sh 2          # quick
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p toolbelt
cargo bench -p toolbelt-mcp --bench stdio -- "${1:-5}"
echo
.ci/peers/venv/bin/python bench/mcp_sdk.py
