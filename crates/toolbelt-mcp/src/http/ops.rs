//! What an operator's machinery polls, beside `/mcp`:
//!
//! * `GET /healthz`: `200 ok` while the process serves — a liveness probe.
//! * `GET /readyz`: `200 ready`, or `503` with the reason: draining after SIGTERM, or what
//!   the front end says keeps it from serving ([`Ops::unready`]: its storage out of reach).
//!   A load balancer sends new sessions only to ready servers.
//! * `GET /metrics`: the Prometheus text format: the front end's ([`Ops::write_metrics`]:
//!   calls, latency, decisions, approvals, processes, storage errors) and the HTTP layer's
//!   (open sessions, whether it drains).
//!
//! The probes tell nothing but up or not, so they need no token: a kubelet's probe carries
//! none. `/metrics` names tools and counts calls, so it takes the same bearer token as
//! `/mcp` when one is set, and on loopback only a loopback `Host` (a web page that rebinds
//! its name to 127.0.0.1 cannot read it). A browser page of another origin is refused as at
//! `/mcp`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::Sessions;
use crate::drain::Drain;

/// What the front end adds to the operator's endpoints.
pub trait Ops: Send + Sync + std::fmt::Debug {
    /// Appends its metrics in the Prometheus text format (each family with `# HELP` and
    /// `# TYPE`).
    fn write_metrics(&self, out: &mut String);

    /// Why the server cannot take new work now, if it cannot. It may block (asking a
    /// database): it runs on a blocking thread.
    fn unready(&self) -> Option<String>;

    /// Called once the server holds sessions: `open` counts them now, for a front end that
    /// reports them elsewhere too (OpenTelemetry). Nothing by default.
    fn sessions_counted(&self, open: Arc<dyn Fn() -> usize + Send + Sync>) {
        let _ = open;
    }
}

/// What the endpoints read.
pub(super) struct OpsState {
    pub ops: Option<Arc<dyn Ops>>,
    pub drain: Option<Arc<Drain>>,
    pub sessions: Arc<Sessions>,
    /// The gate's checks of `/metrics` (token, origin).
    pub gate: Arc<super::gate::Gate>,
    /// Whether the server listens on loopback only (then `/metrics` wants a loopback `Host`).
    pub loopback: bool,
}

/// The three routes.
pub(super) fn router(state: Arc<OpsState>) -> axum::Router {
    axum::Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .route("/metrics", get(metrics))
        .with_state(state)
}

async fn ready(State(state): State<Arc<OpsState>>) -> Response {
    let reason = if state.drain.as_ref().is_some_and(|d| d.is_draining()) {
        Some("draining: the server is shutting down and takes no new sessions".to_string())
    } else if let Some(ops) = state.ops.clone() {
        // Asking storage may block (a connection to a database).
        tokio::task::spawn_blocking(move || ops.unready()).await.unwrap_or_else(|e| Some(e.to_string()))
    } else {
        None
    };
    match reason {
        None => "ready\n".into_response(),
        Some(reason) => (StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {reason}\n")).into_response(),
    }
}

async fn metrics(State(state): State<Arc<OpsState>>, request: Request) -> Response {
    if let Some(refusal) = state.gate.refuse(&request) {
        return refusal;
    }
    if state.loopback && !loopback_host(request.headers()) {
        return (StatusCode::FORBIDDEN, "this server answers /metrics for a loopback Host only\n").into_response();
    }
    let mut out = String::with_capacity(16 * 1024);
    if let Some(ops) = &state.ops {
        ops.write_metrics(&mut out);
    }
    use std::fmt::Write as _;
    toolbelt_runtime::metrics::family(&mut out, "toolbelt_mcp_sessions_open", "gauge", "MCP sessions open over HTTP.");
    let _ = writeln!(out, "toolbelt_mcp_sessions_open {}", state.sessions.len());
    toolbelt_runtime::metrics::family(
        &mut out,
        "toolbelt_mcp_draining",
        "gauge",
        "1 while the server drains after SIGTERM, else 0.",
    );
    let draining = state.drain.as_ref().is_some_and(|d| d.is_draining());
    let _ = writeln!(out, "toolbelt_mcp_draining {}", u8::from(draining));
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], out).into_response()
}

/// Whether the request's `Host` names this machine's loopback (any port).
fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else { return false };
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    matches!(name.to_ascii_lowercase().as_str(), "localhost" | "127.0.0.1" | "::1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_pass() {
        let with = |host: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::HOST, host.parse().unwrap());
            loopback_host(&headers)
        };
        assert!(with("127.0.0.1:8080"));
        assert!(with("localhost"));
        assert!(with("[::1]:9"));
        assert!(!with("evil.example:8080"));
        assert!(!with("127.0.0.1.evil.example"));
        assert!(!loopback_host(&HeaderMap::new()));
    }
}
