//! Streamable HTTP at `/mcp`: loopback by default, `Host` and `Origin` checked (DNS-rebinding
//! protection), an optional bearer token, and a session of its own for each MCP session.
//!
//! Every request that gets through carries an [`HttpClient`] (the peer's address, and which
//! token it presented) in its extensions, so the session can name its client in the audit
//! log.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::McpServer;

/// Who sent an HTTP request, as the server's middleware saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpClient {
    /// The peer's address and port.
    pub peer: Option<SocketAddr>,
    /// The id of the bearer token it presented ([`toolbelt_runtime::token_id`]), when one is
    /// required.
    pub token_id: Option<String>,
}

/// How the HTTP endpoint is served.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen.
    pub bind: SocketAddr,
    /// The bearer token every request must carry, if any.
    pub token: Option<String>,
}

/// Serves MCP at `http://<bind>/mcp` until `shutdown` fires. `new_server` makes the handler
/// of each new MCP session. A non-loopback address needs a token.
pub async fn serve(
    new_server: impl Fn() -> McpServer + Send + Sync + 'static,
    options: HttpOptions,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    if !options.bind.ip().is_loopback() && options.token.is_none() {
        return Err(std::io::Error::other(format!(
            "refusing to serve MCP on {} without a bearer token: bind 127.0.0.1, or pass --token-env VAR",
            options.bind
        )));
    }
    let listener = tokio::net::TcpListener::bind(options.bind).await?;
    serve_on(listener, new_server, options.token, shutdown).await
}

/// [`serve`] on a listener already bound (tests bind port 0 and read the port first).
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    new_server: impl Fn() -> McpServer + Send + Sync + 'static,
    token: Option<String>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let local = listener.local_addr()?;
    let loopback = local.ip().is_loopback();
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = shutdown.clone();
    // Browsers may only reach us from loopback pages; other origins are refused.
    config.allowed_origins =
        ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*", "https://localhost:*", "https://127.0.0.1:*"]
            .map(String::from)
            .to_vec();
    if !loopback {
        config.allowed_hosts.push(local.ip().to_string());
        config.allowed_hosts.push(local.to_string());
    }
    let service: StreamableHttpService<McpServer, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(new_server()), Arc::new(LocalSessionManager::default()), config);
    let token_id = token.as_deref().map(toolbelt_runtime::token_id).map(Arc::new);
    let token = token.map(Arc::new);
    let router = axum::Router::new().nest_service("/mcp", service).layer(axum::middleware::from_fn(
        move |mut request: Request, next: Next| {
            let token = token.clone();
            let client = HttpClient {
                peer: request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0),
                token_id: token_id.as_deref().cloned(),
            };
            request.extensions_mut().insert(client);
            async move { check_token(token.as_deref().map(String::as_str), request, next).await }
        },
    ));
    tracing::info!("serving MCP at http://{local}/mcp");
    eprintln!("toolbelt: serving MCP at http://{local}/mcp");
    axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await
}

async fn check_token(token: Option<&str>, request: Request, next: Next) -> Response {
    if let Some(expected) = token {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if !given.is_some_and(|g| constant_time_eq(g.as_bytes(), expected.as_bytes())) {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                "a valid bearer token is required\n",
            )
                .into_response();
        }
    }
    next.run(request).await
}

/// Compares without stopping at the first difference, so timing does not leak the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
