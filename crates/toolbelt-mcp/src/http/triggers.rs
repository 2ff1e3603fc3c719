//! Incoming triggers at `POST /triggers/NAME`: a request carrying the trigger's own bearer
//! token starts the job the trigger is configured with, and is answered `202 Accepted` with
//! the run's id (`{"trigger", "run_id", "status": "running"}`).
//!
//! The route sits beside `/mcp`, outside its session gate: a trigger has its own token, so a
//! CI system holding it can start that one job and reach nothing else. A request without the
//! right token is refused with `401` before anything runs; one for a trigger that is not
//! configured gets `404`. What runs, and under which policy, is the front end's business
//! ([`IncomingTriggers`]).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse as _, Response};
use serde_json::json;

/// The most of a request's body passed on to the job.
pub const MAX_BODY: usize = 64 * 1024;

/// Why a trigger did not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TriggerRefusal {
    /// No trigger of that name.
    Unknown,
    /// The token is missing or is not the trigger's.
    Unauthorized,
    /// The trigger cannot run now (its token variable is not set, the job store fails…).
    Unavailable(String),
}

/// Starts incoming triggers (the front end's jobs).
pub trait IncomingTriggers: Send + Sync + std::fmt::Debug {
    /// Starts trigger `name` when `token` is its token, with the request's `body` (cut to
    /// [`MAX_BODY`]); the run's id.
    fn fire(&self, name: &str, token: Option<&str>, body: String) -> Result<String, TriggerRefusal>;

    /// The triggers' names, for the startup lines.
    fn names(&self) -> Vec<String>;
}

/// The `/triggers/{name}` route.
pub(super) fn router(triggers: Arc<dyn IncomingTriggers>) -> axum::Router {
    axum::Router::new().route("/triggers/{name}", axum::routing::post(fire)).with_state(triggers)
}

async fn fire(
    State(triggers): State<Arc<dyn IncomingTriggers>>,
    Path(name): Path<String>,
    request: Request,
) -> Response {
    let token = super::gate::bearer(request.headers()).map(str::to_string);
    let bytes = match axum::body::to_bytes(request.into_body(), MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return answer(
                StatusCode::PAYLOAD_TOO_LARGE,
                json!({"error": format!("the body is over {MAX_BODY} bytes")}),
            );
        }
    };
    let body = String::from_utf8_lossy(&bytes).into_owned();
    match triggers.fire(&name, token.as_deref(), body) {
        Ok(run_id) => {
            tracing::info!(trigger = %name, run = %run_id, "incoming trigger started a run");
            answer(StatusCode::ACCEPTED, json!({"trigger": name, "run_id": run_id, "status": "running"}))
        }
        Err(TriggerRefusal::Unknown) => {
            answer(StatusCode::NOT_FOUND, json!({"error": format!("there is no incoming trigger `{name}`")}))
        }
        Err(TriggerRefusal::Unauthorized) => {
            tracing::warn!(trigger = %name, "incoming trigger refused: missing or wrong token");
            let mut response = answer(
                StatusCode::UNAUTHORIZED,
                json!({"error": "send the trigger's token: `Authorization: Bearer <token>`"}),
            );
            response.headers_mut().insert("www-authenticate", axum::http::HeaderValue::from_static("Bearer"));
            response
        }
        Err(TriggerRefusal::Unavailable(why)) => answer(StatusCode::SERVICE_UNAVAILABLE, json!({"error": why})),
    }
}

fn answer(status: StatusCode, body: serde_json::Value) -> Response {
    let mut response = (status, Body::from(body.to_string())).into_response();
    response
        .headers_mut()
        .insert(axum::http::header::CONTENT_TYPE, axum::http::HeaderValue::from_static("application/json"));
    response
}
