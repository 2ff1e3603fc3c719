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
//!
//! Requests without a protocol session (MCP 2026-07-28) are served by any replica, from the
//! state the replicas share, except what holds a machine's resources: a call naming another
//! replica's background task (`bash_3@r0`) is passed on to that replica, whose session of the
//! same token holds the task ([`Forwarder::forward_task_call`]).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, StatusCode, header};
use axum::response::{IntoResponse as _, Response};

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
        let Ok(body) = axum::body::to_bytes(body, MAX_BODY).await else {
            return refuse("its body is larger than 4 MiB or was cut short");
        };
        match self.send(&parts, body, &url, here).await {
            Ok(response) => response,
            Err(why) => refuse(&why),
        }
    }

    /// A `tools/call` without a protocol session (MCP 2026-07-28) naming another replica's
    /// background task (`bash_3@r0`: reading its output, stopping it), passed on to that
    /// replica, whose session of the same token holds the task; `Err` gives the request back
    /// to be answered here when it names no such task, or when the owner cannot take it (this
    /// replica then says where the task runs).
    pub(super) async fn forward_task_call(&self, request: Request, here: &str) -> Result<Response, Request> {
        let (parts, body) = request.into_parts();
        let body = match axum::body::to_bytes(body, MAX_BODY).await {
            Ok(body) => body,
            // What rmcp answers a body it would not read either.
            Err(_) => {
                let message = "the request body is larger than 4 MiB\n";
                return Ok((StatusCode::PAYLOAD_TOO_LARGE, message).into_response());
            }
        };
        let Some(owner) = task_owner(&body, here) else { return Err(Request::from_parts(parts, Body::from(body))) };
        let replicas = Arc::clone(&self.replicas);
        let name = owner.clone();
        let url = match tokio::task::spawn_blocking(move || replicas.locate(&name)).await {
            Ok(Ok(Some(url))) => url,
            _ => return Err(Request::from_parts(parts, Body::from(body))),
        };
        match self.send(&parts, body.clone(), &url, here).await {
            Ok(response) => Ok(response),
            Err(why) => {
                tracing::info!(owner, "not passing a call of another replica's task on: {why}");
                Err(Request::from_parts(parts, Body::from(body)))
            }
        }
    }

    /// Sends the request `parts` with `body` to the replica at `url`; its answer, streamed
    /// back as it comes.
    async fn send(
        &self,
        parts: &axum::http::request::Parts,
        body: axum::body::Bytes,
        url: &str,
        here: &str,
    ) -> Result<Response, String> {
        let target = format!(
            "{}{}",
            url.trim_end_matches('/'),
            parts.uri.path_and_query().map_or("/mcp", axum::http::uri::PathAndQuery::as_str)
        );
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
        let sent = self.client.request(parts.method.clone(), &target).headers(headers).body(body).send().await;
        let answer = sent.map_err(|e| format!("{target} cannot be reached ({e})"))?;
        tracing::debug!(status = %answer.status(), "passed a request on to {target}");
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
        response.body(Body::from_stream(chunks)).map_err(|_| "its answer could not be passed back".to_string())
    }
}

/// The arguments that name a background task or a terminal session (the tools' own names and
/// their aliases).
const TASK_ARGUMENTS: [&str; 5] = ["task_id", "shell_id", "bash_id", "session_id", "id"];

/// The replica whose background task the `tools/call` in `body` names, when it is not `here`:
/// an argument such as `"task_id": "bash_3@r0"` (a word, `_`, a number, `@`, the replica).
fn task_owner(body: &[u8], here: &str) -> Option<String> {
    // Most calls name no task: no `@`, nothing to parse.
    if !body.contains(&b'@') {
        return None;
    }
    let message: serde_json::Value = serde_json::from_slice(body).ok()?;
    if message.get("method")?.as_str()? != "tools/call" {
        return None;
    }
    let arguments = message.get("params")?.get("arguments")?.as_object()?;
    // Only what names a task or a terminal session: an argument of a command or a file that
    // happens to read `x_1@r2` runs here.
    let ids = arguments.iter().filter(|(key, _)| TASK_ARGUMENTS.contains(&key.as_str())).map(|(_, v)| v);
    ids.filter_map(serde_json::Value::as_str).find_map(|value| {
        let (id, owner) = value.rsplit_once('@')?;
        let (prefix, number) = id.rsplit_once('_')?;
        let task = !prefix.is_empty()
            && prefix.bytes().all(|b| b.is_ascii_lowercase())
            && !number.is_empty()
            && number.bytes().all(|b| b.is_ascii_digit());
        let replica = !owner.is_empty() && owner.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        (task && replica && owner != here).then(|| owner.to_string())
    })
}

/// `headers` without those of one hop and without a length (the body's own is sent).
fn passed_on(headers: &HeaderMap) -> HeaderMap {
    let mut out = headers.clone();
    for name in HOP_BY_HOP.iter().chain([&header::CONTENT_LENGTH]) {
        out.remove(name);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::task_owner;

    fn call(arguments: &str) -> Vec<u8> {
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"TaskOutput","arguments":{arguments}}}}}"#)
            .into_bytes()
    }

    #[test]
    fn a_call_naming_another_replica_s_task_names_its_owner() {
        assert_eq!(task_owner(&call(r#"{"task_id":"bash_3@r0"}"#), "r1").as_deref(), Some("r0"));
        assert_eq!(task_owner(&call(r#"{"shell_id":"bash_12@pod-7.a"}"#), "r1").as_deref(), Some("pod-7.a"));
        // Its own, none, or what only looks like one.
        assert_eq!(task_owner(&call(r#"{"task_id":"bash_3@r1"}"#), "r1"), None);
        assert_eq!(task_owner(&call(r#"{"task_id":"bash_3"}"#), "r1"), None);
        assert_eq!(task_owner(&call(r#"{"command":"mail me@example.com"}"#), "r1"), None);
        assert_eq!(task_owner(&call(r#"{"task_id":"x_1@y z"}"#), "r1"), None, "no replica has a space in its name");
        assert_eq!(task_owner(&call(r#"{"command":"echo bash_1@r0"}"#), "r1"), None, "not an id");
        let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"bash_1@r0"}}"#;
        assert_eq!(task_owner(list, "r1"), None);
    }
}
