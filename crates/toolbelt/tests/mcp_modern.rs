//! `toolbelt mcp` at MCP 2026-07-28, under the official Python SDK client in its default
//! mode (which probes `server/discover` and speaks 2026-07-28 to a server that offers it):
//! over stdio and Streamable HTTP, no `initialize`; the session remembers what was read
//! between requests; approvals and questions travel as `input_required` results; and a
//! tampered, misused or replayed `requestState` is refused (an unanswered question is asked
//! again).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/http_server.rs"]
mod http_server;
#[path = "common/modern.rs"]
mod modern;
#[path = "common/peers.rs"]
mod peers;

use http_server::HttpServer;
use modern::check_modern_session;
use peers::{Peers, project, run, script, toolbelt};

#[test]
fn the_python_sdk_speaks_2026_07_28_over_stdio() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let mut cmd = Command::new(peers.python());
    cmd.arg(script("modern_client.py")).arg("stdio").arg(toolbelt()).arg(&root);
    let seen = run(cmd, &root, "");
    check_modern_session(&seen, &root);
}

#[test]
fn the_python_sdk_speaks_2026_07_28_over_http_without_sessions() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let server = HttpServer::start(&root);
    let mut cmd = Command::new(peers.python());
    cmd.arg(script("modern_client.py")).arg("http").arg(&server.url).arg(&root);
    let seen = run(cmd, &root, "");
    check_modern_session(&seen, &root);
}
