//! Calling an upstream server's tool: progress passed to the call, cancellation passed on,
//! and, with a 2026-07-28 server, its `input_required` rounds answered.
//!
//! A 2026-07-28 server asks the client nothing while a call runs: it answers the call with
//! `input_required` (a form to fill, a model to sample, the client's roots), and the call is
//! sent again with the answers and the server's `requestState`. The answers come from the
//! same [`UpstreamHandler`] methods that answer a 2025 server's requests mid-call, so a
//! question reaches the same person either way. At most [`MAX_ROUNDS`] rounds.

use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientRequest, ClientResult, InputRequest, InputRequiredResult,
    InputResponses, NumberOrString, Request, RequestId, ServerRequest, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RequestContext};
use rmcp::{Peer, RoleClient, Service as _};
use serde_json::Value;
use toolbelt_core::{ToolContext, ToolError, ToolOutput};

use super::Upstream;
use crate::client::convert;
use crate::client::handler::UpstreamHandler;

/// The most `input_required` rounds one call is given.
const MAX_ROUNDS: usize = 10;

impl Upstream {
    /// Calls one of its tools, with progress passed to `cx` and cancellation passed on.
    pub async fn call_tool(&self, tool: &str, arguments: Value, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let peer = self.peer().ok_or_else(|| self.unavailable())?;
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = match arguments {
            Value::Object(arguments) => Some(arguments),
            Value::Null => None,
            other => {
                return Err(ToolError::internal(format!(
                    "cannot build the call: arguments must be an object, not {other}"
                )));
            }
        };
        for _ in 0..MAX_ROUNDS {
            let request = ClientRequest::CallToolRequest(Request::new(params.clone()));
            let handle = peer
                .send_cancellable_request(request, PeerRequestOptions::no_options())
                .await
                .map_err(|e| self.call_failed(&e, "could not be sent the call"))?;
            // Kept through the answering of a round: the questions go to this call's person.
            let _route = self.handler.route(handle.progress_token.clone(), cx.clone());
            // If this future is dropped (the runtime's timeout) or cancelled, the server is told.
            let mut guard = CancelOnDrop { peer: Some(handle.peer.clone()), id: handle.id.clone() };
            let outcome = tokio::select! {
                r = handle.await_response() => r,
                () = cx.cancellation().cancelled() => return Err(ToolError::Cancelled),
            };
            guard.peer = None;
            let response = outcome.map_err(|e| self.call_failed(&e, "failed the call"))?;
            let result = match response {
                ServerResult::InputRequiredResult(asked) => {
                    let (responses, state) = self.answer(asked, &peer).await?;
                    params.input_responses = responses;
                    params.request_state = state;
                    continue;
                }
                ServerResult::CallToolResult(result) => result,
                // A result rmcp could not read as a tool's (a content block of a kind newer
                // than it knows): read as far as it goes.
                ServerResult::CustomResult(custom) => convert::lenient_result(&custom.0),
                _ => Default::default(),
            };
            return Ok(convert::output_from_result(&result));
        }
        Err(ToolError::failed(format!(
            "MCP server `{}` still asked for input after {MAX_ROUNDS} rounds; the call was given up",
            self.name
        )))
    }

    /// What a call is told of `error`: the server's refusal for want of a sign-in or scope
    /// (what to run), else that it `failed` and why.
    fn call_failed(&self, error: &rmcp::ServiceError, failed: &str) -> ToolError {
        let why = self.refusal_of(error);
        ToolError::failed(why.unwrap_or_else(|| format!("MCP server `{}` {failed}: {error}", self.name)))
    }

    /// The answers to one `input_required` round, and the state to send back with them.
    async fn answer(
        &self,
        asked: InputRequiredResult,
        peer: &Peer<RoleClient>,
    ) -> Result<(Option<InputResponses>, Option<String>), ToolError> {
        let requests = asked.input_requests.unwrap_or_default();
        if requests.is_empty() && asked.request_state.is_none() {
            return Err(ToolError::failed(format!(
                "MCP server `{}` asked for input without saying what it needs",
                self.name
            )));
        }
        let mut responses = InputResponses::new();
        for (key, request) in requests {
            let answer = answer_one(&self.handler, &key, request, peer).await.map_err(|why| {
                ToolError::failed(format!("MCP server `{}` asked for input that could not be given: {why}", self.name))
            })?;
            responses.insert(key, answer);
        }
        Ok(((!responses.is_empty()).then_some(responses), asked.request_state))
    }
}

/// One answer, from the handler that answers the same request sent mid-call.
async fn answer_one(
    handler: &UpstreamHandler,
    key: &str,
    request: InputRequest,
    peer: &Peer<RoleClient>,
) -> Result<Value, String> {
    let request = match request {
        InputRequest::CreateMessage(r) => ServerRequest::CreateMessageRequest(r),
        InputRequest::Elicitation(r) => ServerRequest::ElicitRequest(r),
        InputRequest::ListRoots(r) => ServerRequest::ListRootsRequest(r),
        _ => return Err("a kind of request toolbelt does not know".into()),
    };
    let context = RequestContext::new(NumberOrString::String(key.into()), peer.clone());
    let result = handler.handle_request(request, context).await.map_err(|e| e.message.to_string())?;
    let value = match result {
        ClientResult::CreateMessageResult(r) => serde_json::to_value(r),
        ClientResult::ElicitResult(r) => serde_json::to_value(r),
        ClientResult::ListRootsResult(r) => serde_json::to_value(r),
        _ => return Err("an answer of another kind".into()),
    };
    value.map_err(|e| e.to_string())
}

/// Sends `notifications/cancelled` for a request abandoned before its answer.
struct CancelOnDrop {
    peer: Option<Peer<RoleClient>>,
    id: RequestId,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else { return };
        let param = CancelledNotificationParam::new(Some(self.id.clone()), Some("the call was cancelled".into()));
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                let _ = peer.notify_cancelled(param).await;
            });
        }
    }
}
