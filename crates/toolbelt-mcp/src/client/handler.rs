//! The client side of one upstream connection: progress routed to the call that asked, the
//! server's word that its tools changed passed to the supervisor, which lists them again, the
//! workspace roots offered (`roots/list`), and the server's questions (form elicitation) put
//! to the person behind the call that is waiting on it, and its requests for a message from a
//! model (sampling) to that call's client, when it lends its model. When that call is a 2026-07-28
//! client's, the question goes into the call's round ([`crate::round`]): the server is told
//! `cancel` for this attempt, the call's result asks the client, and the retried call, asked
//! again by the server, answers with the person's answer.
//!
//! Roots are deprecated from protocol 2026-07-28; for the versions this client speaks they are
//! how a server learns where the workspace is.
#![allow(deprecated)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ClientHandler;
use rmcp::RoleClient;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, ErrorData, Implementation, ListRootsResult, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, Root, RootsCapabilities,
};
use rmcp::service::{NotificationContext, RequestContext};
use toolbelt_core::{AskError, People, ToolContext};

use crate::round::{self, Round};

/// A call in flight on the server: its context, and its round if it has one.
#[derive(Clone)]
struct Route {
    cx: ToolContext,
    round: Option<Arc<Round>>,
}

/// Progress notifications go to the context of the call whose token they carry.
#[derive(Clone, Default)]
pub struct UpstreamHandler {
    routes: Arc<Mutex<HashMap<ProgressToken, Route>>>,
    /// Signalled when the server says its tools changed (a permit is kept when nobody waits,
    /// so a change during a listing is not lost).
    pub(super) tools_changed: Arc<tokio::sync::Notify>,
    /// The workspace roots offered to the server (none: the capability is not declared).
    pub(super) roots: Arc<[PathBuf]>,
    /// The server's name in settings, to say who asks.
    pub(super) server: Arc<str>,
    /// The version `initialize` offers (2025-11-25 unless the settings pin 2025-06-18).
    pub(super) initialize_version: Option<&'static str>,
}

impl UpstreamHandler {
    /// The handler of the server named `server` in settings.
    pub(super) fn new(server: &str) -> Self {
        Self { server: Arc::from(server), ..Self::default() }
    }

    /// The call a request of the server belongs to: the call in flight, or the first of those
    /// in flight when they are all one session's (one person to ask). `None` when no call is
    /// waiting, or calls of several sessions are (the request says nothing of which it is for).
    /// With rounds (2026-07-28 callers), the request must be one call's: several calls waiting,
    /// each answered by its own retry, leave it unknown whose it is.
    fn caller(&self) -> Option<Route> {
        let routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
        let first = routes.values().next()?;
        let one_session = routes.values().all(|r| r.cx.session().id() == first.cx.session().id());
        let rounds = routes.values().filter(|r| r.round.is_some()).count();
        (one_session && (rounds == 0 || routes.len() == 1)).then(|| first.clone())
    }

    /// Routes progress of `token` to `cx` until the guard is dropped. Called from the call's
    /// task, which is where its round is found.
    pub fn route(&self, token: ProgressToken, cx: ToolContext) -> RouteGuard {
        let round = Round::current(cx.session().id());
        self.routes.lock().unwrap_or_else(PoisonError::into_inner).insert(token.clone(), Route { cx, round });
        RouteGuard { routes: Arc::clone(&self.routes), token }
    }
}

/// Runs `ask` within the waiting call's round, if it has one: the asker picks the round when
/// it is called, so it must be called inside.
async fn within<T>(round: Option<Arc<Round>>, ask: impl Future<Output = T>) -> T {
    match round {
        Some(round) => round.scope(ask).await,
        None => ask.await,
    }
}

/// Removes a progress route when the call ends.
pub struct RouteGuard {
    routes: Arc<Mutex<HashMap<ProgressToken, Route>>>,
    token: ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.token);
    }
}

impl ClientHandler for UpstreamHandler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::builder().enable_elicitation().enable_sampling().build();
        if !self.roots.is_empty() {
            capabilities.roots = Some(RootsCapabilities::default());
        }
        ClientConfig::new(capabilities, Implementation::new("toolbelt", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(match self.initialize_version {
                Some("2025-06-18") => ProtocolVersion::V_2025_06_18,
                _ => ProtocolVersion::V_2025_11_25,
            })
    }

    /// A form the server wants filled in goes to the person behind the call waiting on the
    /// server, introduced as the server's (a server's questions must not pass for toolbelt's);
    /// declined when there is no such call, or no one there to ask. A URL to open is declined:
    /// toolbelt opens no browser on a server's word.
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let declined = ElicitResult::new(ElicitationAction::Decline);
        let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request else {
            tracing::info!(server = %self.server, "declined the MCP server's request to open a URL");
            return Ok(declined);
        };
        let Some(Route { cx, round }) = self.caller() else {
            tracing::info!(server = %self.server, "declined the MCP server's question: no call of one session is waiting on it");
            return Ok(declined);
        };
        let Some(people) = cx.service::<People>() else { return Ok(declined) };
        let schema =
            serde_json::to_value(&requested_schema).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let message = format!("The MCP server `{}` asks: {message}", self.server);
        let filled = within(round, async { people.0.fill(cx.session(), &message, &schema).await }).await;
        Ok(match filled {
            Ok(content) => ElicitResult::new(ElicitationAction::Accept).with_content(content),
            Err(AskError::Cancelled) => ElicitResult::new(ElicitationAction::Cancel),
            // Not "the user said no": the question went to the client, and the call is retried.
            Err(AskError::Failed(why)) if round::is_pending(&why) => ElicitResult::new(ElicitationAction::Cancel),
            Err(e) => {
                tracing::info!(server = %self.server, "the MCP server's question was not answered: {e}");
                declined
            }
        })
    }

    /// A request for a message from a model goes to the client of the call waiting on the
    /// server, when that client lends its model (MCP sampling), without `includeContext` (the
    /// client's context would be toolbelt's); refused otherwise, saying why.
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let refuse = |why: String| {
            tracing::info!(server = %self.server, "refused the MCP server's sampling request: {why}");
            ErrorData::invalid_request(format!("sampling refused: {why}"), None)
        };
        let Some(Route { cx, round }) = self.caller() else {
            return Err(refuse("no call of one session is waiting on this server".into()));
        };
        let Some(people) = cx.service::<People>() else {
            return Err(refuse("nobody is behind the call waiting on this server".into()));
        };
        // Context from the client's other servers (toolbelt's, here) is not the upstream's to ask for.
        let mut params = params;
        params.include_context = None;
        let request = serde_json::to_value(&params).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let sampled = within(round, async { people.0.sample(cx.session(), &request).await }).await;
        let result = sampled.map_err(|e| refuse(e.to_string()))?;
        serde_json::from_value(result)
            .map_err(|e| ErrorData::internal_error(format!("the client's answer is not a message: {e}"), None))
    }

    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        let roots = self
            .roots
            .iter()
            .filter_map(|root| {
                let uri = url::Url::from_directory_path(root).ok()?;
                let entry = Root::new(uri.as_str().trim_end_matches('/'));
                Some(match root.file_name() {
                    Some(name) => entry.with_name(name.to_string_lossy()),
                    None => entry,
                })
            })
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        let route = self.routes.lock().unwrap_or_else(PoisonError::into_inner).get(&params.progress_token).cloned();
        let cx = route.map(|r| r.cx);
        let Some(cx) = cx else { return };
        let fraction = params.total.filter(|t| *t > 0.0).map(|t| params.progress / t);
        let message = params.message.unwrap_or_else(|| match params.total {
            Some(total) => format!("{} of {total}", params.progress),
            None => format!("{}", params.progress),
        });
        cx.progress(message, fraction);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_introduces_itself() {
        let expected = serde_json::json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}, "sampling": {}},
            "clientInfo": {"name": "toolbelt", "version": env!("CARGO_PKG_VERSION")},
        });
        let config = UpstreamHandler::default().get_info();
        assert_eq!(serde_json::to_value(&config).unwrap(), expected);
        let with_roots = UpstreamHandler { roots: Arc::from(vec![PathBuf::from("/w/app")]), ..Default::default() };
        assert_eq!(
            serde_json::to_value(with_roots.get_info()).unwrap()["capabilities"],
            serde_json::json!({"roots": {}, "elicitation": {}, "sampling": {}})
        );
    }
}
