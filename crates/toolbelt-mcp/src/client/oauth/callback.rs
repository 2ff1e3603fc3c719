//! The loopback listener the browser comes back to after signing in: `GET /callback` on
//! `127.0.0.1:PORT`, answered only for this sign-in's `state` and on its own `Host`.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Html;
use tokio::sync::mpsc;

/// What the browser brought back.
pub(super) struct Callback {
    pub(super) code: String,
    pub(super) state: String,
    pub(super) iss: Option<String>,
}

#[derive(Clone)]
struct Waiting {
    port: u16,
    state: String,
    sender: mpsc::Sender<Result<Callback, String>>,
}

/// Answers `GET /callback` on `listener` until a redirect with `state` comes.
pub(super) async fn serve(
    listener: tokio::net::TcpListener,
    port: u16,
    state: String,
    sender: mpsc::Sender<Result<Callback, String>>,
) {
    let app = axum::Router::new().route("/callback", axum::routing::get(callback)).with_state(Waiting {
        port,
        state,
        sender,
    });
    let _ = axum::serve(listener, app).await;
}

async fn callback(
    State(waiting): State<Waiting>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
) -> (StatusCode, Html<String>) {
    let query: BTreeMap<String, String> =
        url::form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes()).into_owned().collect();
    // Only the address it was sent to (a page elsewhere cannot aim a browser at it by
    // another name, DNS rebinding).
    let host = headers.get("host").and_then(|h| h.to_str().ok()).unwrap_or_default();
    let port = waiting.port;
    if host != format!("127.0.0.1:{port}") && host != format!("localhost:{port}") {
        return page(StatusCode::BAD_REQUEST, "This address is not the one toolbelt is waiting on.");
    }
    let given = query.get("state").map(String::as_bytes).unwrap_or_default();
    if !bool::from(subtle::ConstantTimeEq::ct_eq(given, waiting.state.as_bytes())) {
        return page(StatusCode::BAD_REQUEST, "This sign-in is not the one toolbelt is waiting for; it was ignored.");
    }
    if let Some(error) = query.get("error") {
        let detail = query.get("error_description").map(|d| format!(": {d}")).unwrap_or_default();
        let _ = waiting.sender.try_send(Err(format!("{error}{detail}")));
        return page(StatusCode::OK, "The sign-in was refused; see the terminal.");
    }
    let Some(code) = query.get("code") else {
        return page(StatusCode::BAD_REQUEST, "The sign-in came back without a code.");
    };
    let callback = Callback { code: code.clone(), state: waiting.state.clone(), iss: query.get("iss").cloned() };
    let _ = waiting.sender.try_send(Ok(callback));
    page(StatusCode::OK, "Signed in. You can close this tab and go back to the terminal.")
}

fn page(status: StatusCode, text: &str) -> (StatusCode, Html<String>) {
    (status, Html(format!("<!doctype html><title>toolbelt</title><p>{text}</p>")))
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// Sends `GET path` with `host` to the listener on `port`: the status code.
    async fn get(port: u16, host: &str, path: &str) -> u16 {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    #[tokio::test]
    async fn the_listener_takes_only_its_own_sign_in() {
        let listener = super::super::login::bind(0).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (sender, mut returned) = mpsc::channel(1);
        let server = tokio::spawn(serve(listener, port, "s3cret".into(), sender));
        let host = format!("127.0.0.1:{port}");
        // Another state, another name for the host, another path: turned away, still waiting.
        assert_eq!(get(port, &host, "/callback?code=c&state=other").await, 400);
        assert_eq!(get(port, &host, "/callback?code=c").await, 400);
        assert_eq!(get(port, "evil.example", "/callback?code=c&state=s3cret").await, 400);
        assert_eq!(get(port, &host, "/elsewhere?code=c&state=s3cret").await, 404);
        assert!(returned.try_recv().is_err());
        // The authorization server's refusal ends the wait with it.
        let refused = "/callback?state=s3cret&error=access_denied&error_description=no%20thanks";
        assert_eq!(get(port, &format!("localhost:{port}"), refused).await, 200);
        assert_eq!(returned.recv().await.unwrap().err().unwrap(), "access_denied: no thanks");
        // The sign-in.
        assert_eq!(get(port, &host, "/callback?code=the-code&state=s3cret&iss=https%3A%2F%2Fas").await, 200);
        let callback = returned.recv().await.unwrap().ok().unwrap();
        assert_eq!((callback.code.as_str(), callback.iss.as_deref()), ("the-code", Some("https://as")));
        server.abort();
    }
}
