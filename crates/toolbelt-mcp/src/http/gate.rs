//! What every request passes before rmcp sees it: the bearer token, the `Origin`, and the
//! session limits.
//!
//! * The token is compared in constant time over SHA-256 digests of both sides, so neither
//!   the time taken nor an early length check tells a caller anything about the token.
//! * A browser's `Origin` must be the server's own (`http://127.0.0.1:PORT`,
//!   `http://localhost:PORT` on loopback) or one configured; a request without `Origin`
//!   (a program, not a web page) passes. rmcp checks `Host` and `Origin` again.
//! * A request that may open a session (a `POST` without a session id) holds a place among
//!   the sessions until it is answered, or gets `503` when none is left; a request past its
//!   session's in-flight limit gets `429`; each with a JSON-RPC error saying what to do.
//!   [`Sessions`] enforces both again where a session is made or a request routed. A request
//!   without a protocol session (MCP 2026-07-28, by its `MCP-Protocol-Version`) opens none:
//!   it counts among the requests in flight of its token's session until its response ends.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use subtle::ConstantTimeEq as _;

use super::sessions::{InlineInFlight, Reservation, SessionError, Sessions};
use crate::drain::Drain;

/// The header naming the MCP session of a request.
const SESSION_HEADER: &str = "mcp-session-id";
/// The header naming the protocol version of a request.
const VERSION_HEADER: &str = "mcp-protocol-version";

/// The checks of [`super::serve_on`]'s middleware.
pub(super) struct Gate {
    /// SHA-256 of the token every request must carry, if any.
    token_digest: Option<String>,
    origins: Origins,
    sessions: Arc<Sessions>,
    /// The server's drain, if it drains: no new session once it began.
    drain: Option<Arc<Drain>>,
    /// Whether requests of another replica's session are passed on to it.
    forwards: bool,
}

impl Gate {
    pub(super) fn new(
        token: Option<&str>,
        origins: Origins,
        sessions: Arc<Sessions>,
        drain: Option<Arc<Drain>>,
        forwards: bool,
    ) -> Self {
        Self { token_digest: token.map(toolbelt_core::sha256_hex), origins, sessions, drain, forwards }
    }

    /// Whether `request` goes on to rmcp.
    pub(super) fn admit(&self, request: &Request) -> Admission {
        if let Some(refusal) = self.refuse(request) {
            return Admission::Refused(refusal);
        }
        // A session this server does not hold: it ended, or it was opened on another replica
        // (one that is down, when a load balancer sends its requests here). Said in words,
        // with the 404 that tells clients to start a new session.
        if let Some(id) = headers_session(request.headers())
            && !self.sessions.is_open(id)
        {
            let gone = self.sessions.not_here(id);
            // Another replica's: passed on to it, once.
            if let SessionError::Elsewhere { owner, .. } = &gone
                && self.forwards
                && !request.headers().contains_key(super::forward::FORWARDED_HEADER)
            {
                return Admission::Forward { owner: owner.clone(), gone };
            }
            return Admission::Refused(jsonrpc_refusal(StatusCode::NOT_FOUND, &gone));
        }
        if request.method() != Method::POST {
            return Admission::Pass(None);
        }
        if is_inline(request.headers()) {
            return match self.sessions.start_inline() {
                Ok(counted) => Admission::Inline(counted),
                Err(e) => Admission::Refused(jsonrpc_refusal(StatusCode::TOO_MANY_REQUESTS, &e)),
            };
        }
        match headers_session(request.headers()) {
            None if self.drain.as_ref().is_some_and(|d| d.is_draining()) => {
                Admission::Refused(jsonrpc_refusal(StatusCode::SERVICE_UNAVAILABLE, &SessionError::Draining))
            }
            None => match self.sessions.reserve() {
                Ok(place) => Admission::Pass(Some(place)),
                Err(e) => Admission::Refused(jsonrpc_refusal(StatusCode::SERVICE_UNAVAILABLE, &e)),
            },
            Some(id) => match self.sessions.refuse_request(id) {
                Some(e) => Admission::Refused(jsonrpc_refusal(StatusCode::TOO_MANY_REQUESTS, &e)),
                None => Admission::Pass(None),
            },
        }
    }

    /// The response refusing `request` for its token or origin, if any.
    pub(super) fn refuse(&self, request: &Request) -> Option<Response> {
        let headers = request.headers();
        if let Some(expected) = &self.token_digest
            && !bearer(headers).is_some_and(|given| digest_matches(expected, given))
        {
            return Some(
                (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, "Bearer")],
                    "a valid bearer token is required: send `Authorization: Bearer <token>` with the token the \
                     server was started with (--token-env)\n",
                )
                    .into_response(),
            );
        }
        if let Some(origin) = headers.get(header::ORIGIN)
            && !origin.to_str().is_ok_and(|o| self.origins.allows(o))
        {
            let shown = String::from_utf8_lossy(origin.as_bytes()).into_owned();
            let message = format!(
                "Origin {shown} is not allowed: this server answers web pages from {} only; start it with \
                 --allow-origin ORIGIN (or set mcp.allowed_origins) to allow another\n",
                self.origins.list().join(", ")
            );
            return Some((StatusCode::FORBIDDEN, message).into_response());
        }
        None
    }
}

/// What the gate decided about a request.
pub(super) enum Admission {
    /// On to rmcp, holding a session place while it may open a session.
    Pass(Option<Reservation>),
    /// On to rmcp without a protocol session, counted in flight until its response ends.
    Inline(InlineInFlight),
    /// Answered with this refusal.
    Refused(Response),
    /// Passed on to the replica `owner`, which holds its session; `gone` when it cannot be.
    Forward {
        /// The replica the session's id names.
        owner: String,
        /// The refusal, should the owner be out of reach.
        gone: SessionError,
    },
}

/// The session a request names, if it names one.
fn headers_session(headers: &HeaderMap) -> Option<&str> {
    headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok())
}

/// Whether a request follows MCP 2026-07-28 or later (no protocol session), by its
/// `MCP-Protocol-Version` (dates in ISO order compare as text).
fn is_inline(headers: &HeaderMap) -> bool {
    headers.get(VERSION_HEADER).and_then(|v| v.to_str().ok()).is_some_and(|v| v >= "2026-07-28")
}

/// The token of an `Authorization: Bearer …` header (the scheme in any case).
pub(super) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Whether `given` hashes to `expected` (a SHA-256 hex digest), compared in constant time:
/// both digests have the same length whatever the token's, and every byte is compared.
fn digest_matches(expected: &str, given: &str) -> bool {
    let given = toolbelt_core::sha256_hex(given);
    given.as_bytes().ct_eq(expected.as_bytes()).into()
}

/// An HTTP error whose body is a JSON-RPC error without an id, as the Streamable HTTP
/// transport allows for a message the server does not accept.
pub(super) fn jsonrpc_refusal(status: StatusCode, error: &SessionError) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": error.to_string()}});
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// The browser origins the server answers: its own, and those configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Origins(Vec<Origin>);

/// One origin: scheme, host (lowercase; IPv6 in brackets) and port (the scheme's default
/// when it has none), or a page of no origin (`null`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    Tuple { scheme: String, host: String, port: u16 },
    Null,
}

impl Origin {
    fn parse(text: &str) -> Option<Origin> {
        let text = text.trim();
        if text == "null" {
            return Some(Origin::Null);
        }
        let url = url::Url::parse(text).ok()?;
        let bare = url.path() == "/" && url.query().is_none() && url.fragment().is_none() && url.username().is_empty();
        if !bare || !matches!(url.scheme(), "http" | "https") || url.password().is_some() {
            return None;
        }
        Some(Origin::Tuple {
            scheme: url.scheme().to_string(),
            host: url.host_str()?.to_ascii_lowercase(),
            port: url.port_or_known_default()?,
        })
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Tuple { scheme, host, port } => write!(f, "{scheme}://{host}:{port}"),
            Origin::Null => f.write_str("null"),
        }
    }
}

impl Origins {
    /// The server's own origins at `local` (as a client on this machine would write them),
    /// and `extra`; an entry that is not an origin is an error naming it.
    pub(super) fn new(local: SocketAddr, extra: &[String]) -> Result<Origins, String> {
        let port = local.port();
        let mut own = vec![format!("http://{local}")];
        if local.ip().is_loopback() || local.ip().is_unspecified() {
            own.push(format!("http://localhost:{port}"));
        }
        if local.ip().is_unspecified() {
            own.push(format!("http://127.0.0.1:{port}"));
        }
        let mut origins = Vec::new();
        for text in own.iter().chain(extra) {
            let origin = Origin::parse(text).ok_or_else(|| {
                format!("`{text}` is not an origin: write scheme://host[:port] (e.g. http://localhost:3000), or null")
            })?;
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        Ok(Origins(origins))
    }

    /// Whether a request with this `Origin` header may be answered.
    pub(super) fn allows(&self, header: &str) -> bool {
        Origin::parse(header).is_some_and(|origin| self.0.contains(&origin))
    }

    /// Every origin, as `scheme://host:port` (for rmcp's own check and for messages).
    pub(super) fn list(&self) -> Vec<String> {
        self.0.iter().map(ToString::to_string).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origins(bind: &str, extra: &[&str]) -> Origins {
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        Origins::new(bind.parse().unwrap(), &extra).unwrap()
    }

    #[test]
    fn only_the_server_s_own_origin_by_default() {
        let o = origins("127.0.0.1:8765", &[]);
        assert_eq!(o.list(), ["http://127.0.0.1:8765", "http://localhost:8765"]);
        assert!(o.allows("http://127.0.0.1:8765") && o.allows("http://LOCALHOST:8765"));
        for other in ["http://localhost:3000", "http://127.0.0.1:8766", "https://localhost:8765", "null", "x"] {
            assert!(!o.allows(other), "{other}");
        }
        let v6 = origins("[::1]:9000", &[]);
        assert!(v6.allows("http://[::1]:9000") && v6.allows("http://localhost:9000"));
    }

    #[test]
    fn configured_origins_are_added_with_their_default_port() {
        let o = origins("127.0.0.1:8765", &["https://app.example.com", "http://localhost:3000", "null"]);
        assert!(o.allows("https://app.example.com:443") && o.allows("https://app.example.com"));
        assert!(o.allows("http://localhost:3000") && o.allows("null"));
        assert!(!o.allows("http://app.example.com"));
        let bad = Origins::new("127.0.0.1:1".parse().unwrap(), &["localhost:3000".to_string()]);
        assert!(bad.is_err_and(|e| e.contains("`localhost:3000` is not an origin")));
        assert!(Origins::new("127.0.0.1:1".parse().unwrap(), &["http://a.b/path".to_string()]).is_err());
    }

    #[test]
    fn tokens_are_compared_over_digests() {
        let expected = toolbelt_core::sha256_hex("s3cret");
        assert!(digest_matches(&expected, "s3cret"));
        assert!(!digest_matches(&expected, "s3creT") && !digest_matches(&expected, "s3cret-longer"));
        assert!(!digest_matches(&expected, ""));
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, "bearer abc ".parse().unwrap());
        assert_eq!(bearer(&headers), Some("abc"));
        headers.insert(header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(bearer(&headers), None);
    }
}
