//! Streamable HTTP at `/mcp`: loopback by default, `Host` and `Origin` checked (DNS-rebinding
//! protection), an optional bearer token, and a session of its own for each MCP session —
//! at most [`SessionLimits::max_sessions`] of them, each closed after
//! [`SessionLimits::idle_timeout`] without use ([`sessions`]).
//!
//! Every request that gets through carries an [`HttpClient`] (the peer's address, and which
//! token it presented) in its extensions, so the session can name its client in the audit
//! log.

pub mod forward;
mod gate;
pub mod ops;
pub mod replay;
mod session_ids;
mod session_limits;
pub mod sessions;
pub mod triggers;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request};
use axum::middleware::Next;
use axum::response::IntoResponse as _;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

pub use self::sessions::{Reservation, SessionError, SessionLimits, Sessions};
use crate::McpServer;

/// Who sent an HTTP request, as the server's middleware saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpClient {
    /// The peer's address and port.
    pub peer: Option<SocketAddr>,
    /// The id of the bearer token it presented ([`toolbelt_runtime::token_id`]), when one is
    /// required.
    pub token_id: Option<String>,
    /// For a request another replica passed on: the client's address as it said it.
    pub forwarded_for: Option<String>,
}

/// How the HTTP endpoint is served.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// The bearer token every request must carry, if any.
    pub token: Option<String>,
    /// Browser origins allowed besides the server's own (`scheme://host[:port]`, or `null`).
    pub allowed_origins: Vec<String>,
    /// `Host` names answered besides the server's address (and localhost on loopback): the
    /// name clients reach it by through a load balancer (`toolbelt.example.com`; `host:port`
    /// pins a port). Any other `Host` is refused (DNS rebinding).
    pub allowed_hosts: Vec<String>,
    /// How many sessions, for how long idle, with how many requests in flight.
    pub limits: SessionLimits,
    /// The incoming triggers served at `POST /triggers/NAME`, if any.
    pub triggers: Option<Arc<dyn triggers::IncomingTriggers>>,
    /// How the server drains when told to stop: no new session once it began (give the same
    /// drain to the [`crate::ServerOptions`] of its sessions, which refuse new calls).
    pub drain: Option<Arc<crate::drain::Drain>>,
    /// What the front end adds to `/readyz` and `/metrics` ([`ops`]).
    pub ops: Option<Arc<dyn ops::Ops>>,
    /// The replica this server is, when several serve a team: session ids name it
    /// (`replica.<uuid>`), so a request that reaches another replica is told whose session it
    /// is.
    pub replica: Option<String>,
    /// Where the team's replicas are, to pass a request of another replica's session on to
    /// it ([`forward`]); `None`: such a request is told the session is not here.
    pub replicas: Option<Arc<dyn forward::Replicas>>,
}

/// Serves MCP at `http://<bind>/mcp` until `shutdown` fires. `new_server` makes the handler
/// of each new MCP session. A non-loopback address needs a token.
pub async fn serve(
    bind: SocketAddr,
    new_server: impl Fn() -> McpServer + Send + Sync + 'static,
    options: HttpOptions,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    if !bind.ip().is_loopback() && options.token.is_none() {
        return Err(std::io::Error::other(format!(
            "refusing to serve MCP on {bind} without a bearer token: bind 127.0.0.1, or pass --token-env VAR"
        )));
    }
    let listener = tokio::net::TcpListener::bind(bind).await?;
    serve_on(listener, new_server, options, shutdown).await
}

/// [`serve`] on a listener already bound (tests bind port 0 and read the port first).
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    new_server: impl Fn() -> McpServer + Send + Sync + 'static,
    options: HttpOptions,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let local = listener.local_addr()?;
    let origins = gate::Origins::new(local, &options.allowed_origins)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_origins(origins.list())
        .enforce_origin_validation()
        .with_cancellation_token(shutdown.clone());
    if !local.ip().is_loopback() {
        config.allowed_hosts.push(local.ip().to_string());
        config.allowed_hosts.push(local.to_string());
    }
    config.allowed_hosts.extend(options.allowed_hosts.iter().filter(|h| !h.trim().is_empty()).cloned());
    let sessions = Arc::new(Sessions::named(options.limits, options.replica.as_deref()));
    if let Some(ops) = &options.ops {
        let counted = Arc::clone(&sessions);
        ops.sessions_counted(Arc::new(move || counted.len()));
    }
    tokio::spawn(sessions::reap(Arc::clone(&sessions), shutdown.clone()));
    let service: StreamableHttpService<McpServer, Sessions> =
        StreamableHttpService::new(move || Ok(new_server()), Arc::clone(&sessions), config);
    let token_id = options.token.as_deref().map(toolbelt_runtime::token_id);
    let forwarder = match (&options.replicas, &options.replica) {
        (Some(replicas), Some(_)) => Some(Arc::new(forward::Forwarder::new(Arc::clone(replicas))?)),
        _ => None,
    };
    let here = options.replica.clone().unwrap_or_default();
    let draining = options.drain.clone();
    let gate = Arc::new(gate::Gate::new(
        options.token.as_deref(),
        origins,
        Arc::clone(&sessions),
        options.drain.clone(),
        forwarder.is_some(),
    ));
    let ops = Arc::new(ops::OpsState {
        ops: options.ops.clone(),
        drain: options.drain.clone(),
        sessions,
        gate: Arc::clone(&gate),
        loopback: local.ip().is_loopback(),
    });
    let router = axum::Router::new().nest_service("/mcp", service).layer(axum::middleware::from_fn(
        move |mut request: Request, next: Next| {
            let headers = request.headers();
            let forwarded_for = headers
                .contains_key(forward::FORWARDED_HEADER)
                .then(|| {
                    let claimed = headers.get(forward::FORWARDED_FOR_HEADER).and_then(|v| v.to_str().ok());
                    // An address: bounded, whatever a client writes there.
                    claimed.map(|v| v.chars().take(64).collect::<String>())
                })
                .flatten();
            let client = HttpClient {
                peer: request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0),
                token_id: token_id.clone(),
                forwarded_for,
            };
            request.extensions_mut().insert(client);
            let admitted = gate.admit(&request);
            let delete = request.method() == axum::http::Method::DELETE;
            let (forwarder, here, drain) = (forwarder.clone(), here.clone(), draining.clone());
            async move {
                match admitted {
                    gate::Admission::Forward { owner, gone } => match forwarder {
                        Some(forwarder) => forwarder.forward(request, owner, &here, gone).await,
                        None => gate::jsonrpc_refusal(axum::http::StatusCode::NOT_FOUND, &gone),
                    },
                    // A session place, if held, is kept until the response is made.
                    gate::Admission::Pass(_place) if delete => session_ended(next.run(request).await),
                    gate::Admission::Pass(_place) => next.run(request).await,
                    // Without a protocol session, a call of another replica's background task
                    // goes to that replica (once).
                    gate::Admission::Inline(counted) => {
                        // A draining replica passes nothing on: it refuses the call itself.
                        let passes = !request.headers().contains_key(forward::FORWARDED_HEADER)
                            && !drain.as_ref().is_some_and(|d| d.is_draining());
                        let request = match forwarder {
                            Some(forwarder) if passes => match forwarder.forward_task_call(request, &here).await {
                                Ok(answer) => return counted_until_sent(answer, counted),
                                Err(request) => request,
                            },
                            _ => request,
                        };
                        counted_until_sent(next.run(request).await, counted)
                    }
                    gate::Admission::Refused(refusal) => refusal,
                }
            }
        },
    ));
    // The probes and metrics check what they need themselves; triggers carry their own
    // tokens: their routes are outside the MCP gate.
    let router = router.merge(ops::router(ops));
    let router = match options.triggers.clone() {
        Some(triggers) => {
            let drain = options.drain.clone();
            // A draining server starts no job: a trigger gets 503, to be sent again elsewhere.
            let refusing = axum::middleware::from_fn(move |request: Request, next: Next| {
                let draining = drain.as_ref().is_some_and(|d| d.is_draining());
                async move {
                    if draining {
                        let message = "this server is shutting down; send the trigger again\n";
                        return (axum::http::StatusCode::SERVICE_UNAVAILABLE, message).into_response();
                    }
                    next.run(request).await
                }
            });
            router.merge(triggers::router(triggers).layer(refusing))
        }
        None => router,
    };
    announce(local, &options);
    axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await
}

/// `response`, holding `counted` until its body is sent (or dropped): an SSE response's body
/// lasts as long as its call.
fn counted_until_sent(
    response: axum::response::Response,
    counted: sessions::InlineInFlight,
) -> axum::response::Response {
    use futures_util::StreamExt as _;
    response.map(|body| {
        let stream = body.into_data_stream().map(move |chunk| {
            let _held = &counted;
            chunk
        });
        axum::body::Body::from_stream(stream)
    })
}

/// The answer to a `DELETE` that ended a session: `204 No Content`. rmcp answers `202
/// Accepted`, which the specification leaves open but the Python SDK reads as a failure
/// (logging "Session termination failed: 202" at every disconnect); 200 and 204 are what the
/// SDKs accept, and the session is gone by then, so nothing is pending either.
fn session_ended(mut response: axum::response::Response) -> axum::response::Response {
    if response.status() == axum::http::StatusCode::ACCEPTED {
        *response.status_mut() = axum::http::StatusCode::NO_CONTENT;
        *response.body_mut() = axum::body::Body::empty();
    }
    response
}

/// The startup lines on stderr: where, within which limits, and, on loopback without a
/// token, who else can call every tool.
fn announce(local: SocketAddr, options: &HttpOptions) {
    let limits = options.limits;
    tracing::info!("serving MCP at http://{local}/mcp");
    // Scripts read the address from the end of this line.
    eprintln!("toolbelt: serving MCP at http://{local}/mcp");
    eprintln!("toolbelt: probes at http://{local}/healthz and /readyz, metrics at /metrics");
    eprintln!(
        "toolbelt: at most {} sessions at once; a session unused for {} is closed",
        limits.max_sessions,
        sessions::words(limits.idle_timeout)
    );
    if !options.allowed_hosts.is_empty() {
        eprintln!("toolbelt: answering requests for Host {} too", options.allowed_hosts.join(", "));
    }
    if let Some(triggers) = &options.triggers {
        for name in triggers.names() {
            eprintln!(
                "toolbelt: incoming trigger `{name}` at POST http://{local}/triggers/{name} (its own bearer token)"
            );
        }
    }
    if options.token.is_none() {
        eprintln!(
            "toolbelt: no token is required: any local process, of any user of this machine, can use every tool \
             through this server; pass --token-env VAR to require `Authorization: Bearer <the token in VAR>`"
        );
    }
}
