//! Requests for another replica's session, passed on to the replica that holds it.
//!
//! A session's id names the replica that opened it (`replica.<uuid>`, see [`super::Sessions`]),
//! and only that replica holds what the session runs. When a load balancer without affinity
//! (a Kubernetes Service, a round robin) sends a request of that session here, this replica
//! looks the owner up ([`Replicas`], the shared database's table of replicas) and passes the
//! request on: the same method, path, headers (the client's token, which the owner checks
//! again) and body, with `toolbelt-forwarded-by` naming this replica; the owner's answer
//! (an SSE stream as it is produced) goes back as it comes. A request that was forwarded once
//! is never forwarded again. When the owner is not known to be alive, or cannot be reached,
//! the client gets the 404 that says whose session it was and that it is gone.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, StatusCode, header};
use axum::response::Response;

use super::gate::jsonrpc_refusal;
use super::sessions::SessionError;

/// The header a forwarded request carries: the replica that forwarded it.
pub const FORWARDED_HEADER: &str = "toolbelt-forwarded-by";

/// The header that says, on a forwarded request, the client's address (for the owner's audit
/// log, where the connection's own peer is the forwarding replica).
pub const FORWARDED_FOR_HEADER: &str = "toolbelt-forwarded-for";

/// The largest request body passed on (rmcp's own limit).
const MAX_BODY: usize = 4 * 1024 * 1024;

/// Headers of one hop only, never passed on.
const HOP_BY_HOP: [HeaderName; 8] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
];

/// Where a team's replicas are: the owner of a session is looked up here.
pub trait Replicas: Send + Sync + std::fmt::Debug {
    /// The base URL (`http://10.0.0.12:8080`) of replica `name`, if it is alive. Blocking:
    /// called on a blocking thread.
    fn locate(&self, name: &str) -> Result<Option<String>, String>;
}

/// Passes requests on to the replicas that own their sessions.
pub(super) struct Forwarder {
    replicas: Arc<dyn Replicas>,
    client: reqwest::Client,
}

impl Forwarder {
    pub(super) fn new(replicas: Arc<dyn Replicas>) -> std::io::Result<Self> {
        crate::client::http_client::install_tls_provider();
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(2))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(std::io::Error::other)?;
        Ok(Self { replicas, client })
    }

    /// The owner's answer to `request`, or the 404 saying the session is gone (`gone`).
    pub(super) async fn forward(&self, request: Request, owner: String, here: &str, gone: SessionError) -> Response {
        let refuse = |why: &str| {
            tracing::info!(owner, "not passing a request of another replica's session on: {why}");
            jsonrpc_refusal(StatusCode::NOT_FOUND, &gone)
        };
        let replicas = Arc::clone(&self.replicas);
        let name = owner.clone();
        let url = match tokio::task::spawn_blocking(move || replicas.locate(&name)).await {
            Ok(Ok(Some(url))) => url,
            Ok(Ok(None)) => return refuse("it is not alive"),
            Ok(Err(e)) => return refuse(&format!("cannot look it up: {e}")),
            Err(e) => return refuse(&format!("the lookup failed: {e}")),
        };
        let (parts, body) = request.into_parts();
        let target = format!(
            "{}{}",
            url.trim_end_matches('/'),
            parts.uri.path_and_query().map_or("/mcp", axum::http::uri::PathAndQuery::as_str)
        );
        let Ok(body) = axum::body::to_bytes(body, MAX_BODY).await else {
            return refuse("its body is larger than 4 MiB or was cut short");
        };
        let mut headers = passed_on(&parts.headers);
        if let Ok(value) = here.parse() {
            headers.insert(FORWARDED_HEADER, value);
        }
        // The client's own address, never one the client wrote itself.
        headers.remove(FORWARDED_FOR_HEADER);
        let peer = parts.extensions.get::<super::HttpClient>().and_then(|c| c.peer);
        if let Some(value) = peer.and_then(|p| p.to_string().parse().ok()) {
            headers.insert(FORWARDED_FOR_HEADER, value);
        }
        let sent = self.client.request(parts.method, &target).headers(headers).body(body).send().await;
        let answer = match sent {
            Ok(answer) => answer,
            Err(e) => return refuse(&format!("{target} cannot be reached ({e})")),
        };
        tracing::debug!(owner, status = %answer.status(), "passed a request of its session on");
        let mut response = Response::builder().status(answer.status());
        if let Some(out) = response.headers_mut() {
            *out = passed_on(answer.headers());
        }
        let chunks = futures_util::stream::unfold(Some(answer), |answer| async move {
            let mut answer = answer?;
            match answer.chunk().await {
                Ok(Some(bytes)) => Some((Ok(bytes), Some(answer))),
                Ok(None) => None,
                Err(e) => Some((Err(e), None)),
            }
        });
        response.body(Body::from_stream(chunks)).unwrap_or_else(|_| refuse("its answer could not be passed back"))
    }
}

/// `headers` without those of one hop and without a length (the body's own is sent).
fn passed_on(headers: &HeaderMap) -> HeaderMap {
    let mut out = headers.clone();
    for name in HOP_BY_HOP.iter().chain([&header::CONTENT_LENGTH]) {
        out.remove(name);
    }
    out
}
