//! One `tools/call`: through the runtime's pipeline, its progress forwarded, its result
//! shaped for MCP; for a 2026-07-28 client, in rounds ([`crate::round`]): what the attempt
//! wanted answered goes back as an `input_required` result.

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;
use toolbelt_runtime::{Outcome, ToolCall};

use super::inline::{self, Seat};
use super::{McpServer, http_client, progress, result, roots, tools};
use crate::round::{self, Offers, Round};

impl McpServer {
    /// One `tools/call`: through the runtime's pipeline, its progress forwarded, its result
    /// shaped for MCP.
    pub(super) async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // Counted before the drain is checked: a drain that begins now either sees this call
        // running and waits for it, or this call sees the drain and is refused.
        let drain = self.inner.options.drain.as_deref();
        let _running = drain.map(crate::drain::Drain::enter);
        if let Some(refusal) = drain.and_then(crate::drain::Drain::refusal) {
            return Err(refusal);
        }
        let inline = inline::is_inline(&context);
        let seat = self.seat_in(&context, inline).await;
        // On a team, a session without a protocol session takes what other replicas changed of
        // its state first, and writes what this call changed after.
        self.pull_shared(&seat).await?;
        let mut answered = if inline {
            // Boxed: inline, its state (with the call's attempt inside) would double the size of
            // every call's future, which is copied as it is boxed.
            Box::pin(self.call_in_rounds(&seat, request, context)).await
        } else {
            self.run(&seat, request, context, false).await
        };
        if let Err(e) = self.push_shared(&seat).await {
            tracing::warn!("could not write the session's state to the team's shared storage: {e}");
            // The model must know: a request another replica serves next does not see what this
            // call changed (its working directory among them) until a later request writes it.
            if let Ok(CallToolResponse::Complete(result)) = &mut answered {
                result.content.push(rmcp::model::ContentBlock::text(format!(
                    "[toolbelt: what this call changed of the session (its working directory, the files read, \
                     grants) could not be saved to the team's shared storage ({e}). The next request may be \
                     served without it: check the working directory (`pwd`) before relying on it.]"
                )));
            }
        }
        answered
    }

    /// One attempt at a call in `seat`'s session; `inline`: of a 2026-07-28 request.
    pub(super) async fn run(
        &self,
        seat: &Seat,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        inline: bool,
    ) -> Result<CallToolResponse, McpError> {
        let session = seat.session();
        let name = request.name.to_string();
        if let Some(refusal) = tools::refuse_agent_tool(self.runtime(), session, &name, inline) {
            return Err(refusal);
        }
        if !self.inner.roots.wait(roots::ROOTS_WAIT).await {
            tracing::warn!(
                "the client declared roots but did not list them within {} s; this call uses the session's roots \
                 as they are ({})",
                roots::ROOTS_WAIT.as_secs(),
                session.state().roots().iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ")
            );
        }
        // Over HTTP a session's requests may come from a new address (a reconnection).
        if let Some(http) = http_client(&context.extensions) {
            let client = session.client();
            let peer = http.peer.map(|p| p.to_string());
            if client.peer != peer || client.forwarded_for != http.forwarded_for {
                let mut moved = (*client).clone();
                moved.peer = peer;
                moved.forwarded_for.clone_from(&http.forwarded_for);
                session.set_client(moved);
            }
        }
        let input = Value::Object(request.arguments.unwrap_or_default());
        let call = ToolCall::new(context.id.to_string(), name, input);
        let (events, forwarder) = progress::forward(context.meta.get_progress_token(), context.peer.clone());
        // Every call goes through the runtime, so the audit log records refused ones too; the
        // plan names the tool once, for the result's shape.
        let plan = self.runtime().plan(session, call);
        let structured = plan.spec().is_some_and(|spec| spec.output_schema.is_some());
        let loaded_before = tools::loaded(session);
        let result = match self.inner.options.drain.as_deref() {
            // A draining server cuts the calls still running when its grace period ends.
            Some(drain) => {
                let token = drain.token();
                let run = self.runtime().run(session, plan, &events, &token);
                let mut result = crate::drain::follow(run, &context.ct, &token).await;
                if result.outcome == Outcome::Cancelled && drain.is_cut() && !context.ct.is_cancelled() {
                    result.content.push(toolbelt_core::Content::text(crate::drain::CUT));
                }
                result
            }
            None => self.runtime().run(session, plan, &events, &context.ct).await,
        };
        drop(events);
        forwarder.finish().await;
        // Tools the call loaded (ToolSearch) are announced before its result, so the client
        // has their definitions when its model reads it (from 2026-07-28, to the session's
        // subscriptions).
        if tools::loaded(session) != loaded_before {
            seat.tools_loaded();
            if !inline && let Err(e) = context.peer.notify_tool_list_changed().await {
                tracing::debug!("could not announce the loaded tools: {e}");
            }
        }
        // An unknown or disabled tool is the client's protocol mistake, not the model's; a
        // tool a deny rule hides is a denial (an `isError` result naming the rule).
        if matches!(result.outcome, Outcome::UnknownTool | Outcome::Disabled) {
            return Err(McpError::invalid_params(result.text(), None));
        }
        Ok(result::to_mcp(&result, structured).into())
    }

    /// The call in `seat`'s session, with the answers its `requestState` and `inputResponses`
    /// bring; first, once per session, the client's roots when it offers them.
    pub(super) async fn call_in_rounds(
        &self,
        seat: &Seat,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let session = seat.session();
        let binding = round::state::binding(session.id(), &request);
        let team = self.inner.options.team.as_deref();
        let redeemed = round::state::redeem(team, &binding, &request).await?;
        let capabilities = context.client_capabilities().unwrap_or_default();
        let offers =
            Offers { elicitation: capabilities.elicitation.is_some(), sampling: capabilities.sampling.is_some() };
        let round =
            Arc::new(Round::new(session.id(), context.peer.clone(), context.meta.log_level(), offers, redeemed));
        // The client's roots, before the call resolves any path (a call of a tool that does
        // not exist is refused first).
        let known = self.runtime().registry().lookup(&request.name).is_ok();
        if known && capabilities.roots.is_some() && !seat.roots_known() {
            match round.roots() {
                Some(Ok(listed)) => roots::apply(session, &listed),
                Some(Err(e)) => tracing::warn!("{e}; keeping the session's roots"),
                None => {}
            }
            if round.wants_input()
                && let Some(input) = round.input_required(team, &binding).await?
            {
                return Ok(input.into());
            }
            seat.roots_learned();
        } else {
            // Roots an earlier round gave, which this session has learned since.
            round.pass_roots();
        }
        let response = Arc::clone(&round).scope(self.run(seat, request, context, true)).await?;
        Ok(match round.input_required(team, &binding).await? {
            Some(input) => input.into(),
            None => response,
        })
    }
}
