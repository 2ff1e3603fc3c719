//! Agents on the MCP host's own model: [`SamplingProvider`] sends each model turn to the
//! connected client as `sampling/createMessage`.
//!
//! A client that declares `sampling.tools` (protocol 2025-11-25) is given the agent's tools
//! and `toolChoice`, and the conversation with its `tool_use` and `tool_result` content. A
//! client that declares `sampling` alone takes text only: the agent gets no tools
//! ([`Provider::supports_tools`] is false), and its system prompt opens with a line that says
//! so.
//!
//! Sampling is deprecated from protocol 2026-07-28, and reaches a client's model only in a
//! session opened with `initialize` (up to 2025-11-25): at 2026-07-28 a server may not send
//! requests mid-call, and an agent's loop cannot be re-run per round without repeating what
//! its tools did. There it is how a host lends its model.
#![allow(deprecated)]

mod convert;

use rmcp::model::{
    CancelledNotificationParam, ClientResult, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    RequestId, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleServer};
use toolbelt_agent::{Part, Provider, ProviderError, Reply, Request, StreamEvent, StreamSink};
use toolbelt_core::BoxFuture;

/// The provider's name, as errors and logs give it.
pub const NAME: &str = "MCP sampling";

/// The model a request names when nobody chose one: the client picks.
const CLIENT_CHOICE: &str = "the MCP client's choice";

/// The same, for a client whose sampling takes no tools.
const CLIENT_CHOICE_NO_TOOLS: &str = "the MCP client's choice (no tools)";

/// The line a system prompt opens with when the client's sampling takes no tools.
const NO_TOOLS_NOTICE: &str = "Note: this MCP host's sampling takes no tools, so you cannot call any tool here: \
                               answer in text from what you are given.";

/// A model provider that is the MCP client of one connection: each request is a
/// `sampling/createMessage` to it, answered by the host's model (and, as the host decides, its
/// user). Errors name [`NAME`] as the provider.
#[derive(Clone)]
pub struct SamplingProvider {
    peer: Peer<RoleServer>,
    tools: bool,
}

impl std::fmt::Debug for SamplingProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SamplingProvider").field("tools", &self.tools).finish_non_exhaustive()
    }
}

impl SamplingProvider {
    /// A provider asking the client at `peer`; `tools` when it declared `sampling.tools`.
    pub fn new(peer: Peer<RoleServer>, tools: bool) -> Self {
        Self { peer, tools }
    }

    /// The provider of the client at `peer`, when its `initialize` declared `sampling`.
    pub fn offered_by(peer: &Peer<RoleServer>) -> Option<Self> {
        let sampling = peer.peer_info()?.capabilities.sampling.clone()?;
        Some(Self::new(peer.clone(), sampling.tools.is_some()))
    }

    /// Sends one `sampling/createMessage` and waits for its answer. Dropping the future (the
    /// agent was stopped) tells the client with `notifications/cancelled`.
    async fn send(&self, params: CreateMessageRequestParams) -> Result<CreateMessageResult, ServiceError> {
        let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
        let handle = self.peer.send_cancellable_request(request, PeerRequestOptions::no_options()).await?;
        let mut guard = CancelOnDrop { peer: self.peer.clone(), id: Some(handle.id.clone()) };
        let answer = handle.await_response().await;
        guard.id = None;
        match answer? {
            ClientResult::CreateMessageResult(result) => Ok(*result),
            _ => Err(ServiceError::UnexpectedResponse),
        }
    }
}

impl Provider for SamplingProvider {
    fn name(&self) -> &str {
        NAME
    }

    fn default_model(&self) -> &str {
        if self.tools { CLIENT_CHOICE } else { CLIENT_CHOICE_NO_TOOLS }
    }

    fn supports_tools(&self) -> bool {
        self.tools
    }

    fn complete<'a>(
        &'a self,
        request: &'a Request,
        events: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<Reply, ProviderError>> {
        Box::pin(async move {
            let params = convert::params(request, self.tools, self.default_model());
            params.validate().map_err(|e| ProviderError::Config {
                provider: NAME.into(),
                message: format!("the conversation could not be put as a sampling request: {e}"),
            })?;
            let result = self.send(params).await.map_err(error)?;
            tracing::debug!(model = %result.model, stop = ?result.stop_reason, "sampling answered");
            let reply = convert::reply(result, self.tools)?;
            for part in &reply.parts {
                match part {
                    Part::Text { text } => events(StreamEvent::Text(text)),
                    Part::ToolUse { name, .. } => events(StreamEvent::ToolUse { name }),
                    Part::ToolResult { .. } => {}
                }
            }
            Ok(reply)
        })
    }
}

/// Tells the client a request is no longer wanted, unless it was answered.
struct CancelOnDrop {
    peer: Peer<RoleServer>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let reason = Some("the agent that asked was stopped".to_string());
            let _ = peer.notify_cancelled(CancelledNotificationParam::new(Some(id), reason)).await;
        });
    }
}

/// What went wrong asking the client, as the loop reports a provider's errors.
fn error(e: ServiceError) -> ProviderError {
    let provider = NAME.to_string();
    match e {
        ServiceError::McpError(data) => ProviderError::Config {
            provider,
            message: format!(
                "the MCP client refused the sampling request (JSON-RPC error {}: {}); allow sampling in the MCP \
                 host, or configure a model provider for agents (OPENAI_API_KEY, ANTHROPIC_API_KEY or \
                 [agent.providers.NAME] in the settings)",
                data.code.0, data.message
            ),
        },
        ServiceError::TransportClosed => ProviderError::Connect {
            provider,
            url: "the MCP connection".into(),
            message: "the connection to the MCP client closed before it answered the sampling request".into(),
        },
        ServiceError::TransportSend(e) => ProviderError::Connect {
            provider,
            url: "the MCP connection".into(),
            message: format!("the sampling request could not be sent to the MCP client: {e}"),
        },
        ServiceError::Timeout { timeout } => ProviderError::Timeout { provider, after: timeout },
        ServiceError::Cancelled { reason } => ProviderError::Stream {
            provider,
            message: format!("the sampling request was cancelled ({})", reason.as_deref().unwrap_or("no reason given")),
        },
        ServiceError::UnexpectedResponse => ProviderError::Stream {
            provider,
            message: "the MCP client answered sampling/createMessage with a result of another kind".into(),
        },
        other => ProviderError::Stream { provider, message: format!("the sampling request failed: {other}") },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ErrorData;

    #[test]
    fn errors_name_the_provider_and_say_what_to_do() {
        let refused = error(ServiceError::McpError(ErrorData::invalid_request("User rejected sampling", None)));
        let text = refused.to_string();
        assert!(text.starts_with("model provider `MCP sampling` is not usable: the MCP client refused"), "{text}");
        assert!(text.contains("-32600: User rejected sampling") && text.contains("allow sampling"), "{text}");
        assert!(!refused.is_retryable());
        let closed = error(ServiceError::TransportClosed).to_string();
        assert_eq!(
            closed,
            "model provider `MCP sampling` could not be reached at the MCP connection: the connection to the MCP \
             client closed before it answered the sampling request"
        );
        let after = std::time::Duration::from_secs(30);
        assert_eq!(
            error(ServiceError::Timeout { timeout: after }),
            ProviderError::Timeout { provider: NAME.into(), after }
        );
    }
}
